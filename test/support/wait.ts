/**
 * Polling until a condition holds against the real API server. Resolves with the first truthy
 * value; rejects after the timeout with the description and the last value or error seen, so a
 * failing test says what it was waiting for and what it saw instead. `retry` repeats a request
 * across the moments the API server is away (a restart, a pause) and throws its last error.
 */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

export async function waitFor<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, opts: WaitOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let last: unknown = 'nothing yet';
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      last = value;
    } catch (err) {
      last = err instanceof Error ? err.message : err;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${opts.timeoutMs ?? 30_000} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}

export async function retry<T>(request: () => Promise<T>, attempts = 50, intervalMs = 200): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await request();
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
