/** Polls `check` until it holds; rejects after `ms`. For tests of asynchronous machinery. */
export function until(check: () => boolean, ms = 2_000, everyMs = 2): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (check()) resolve();
      else if (Date.now() > deadline) reject(new Error('condition not reached in time'));
      else setTimeout(poll, everyMs);
    };
    poll();
  });
}
