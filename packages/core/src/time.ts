/**
 * Time as podlife sees it: Kubernetes timestamps and waits that an abort cuts short.
 *
 * Objects read from the wire carry RFC 3339 strings; objects built with client-node's typed
 * API carry `Date`s. Every reader goes through `timeMs`, which accepts both, so no module has
 * to know where an object came from. Writers produce `Date`s (serialised as RFC 3339).
 * `sleep` never rejects and never outlives its signal: no timer is left behind either way.
 */
/** A Kubernetes timestamp: a `Date` (typed client objects) or an RFC 3339 string (the wire). */
export type Time = Date | string;

/** Milliseconds since the epoch, or undefined when the value is absent or unparsable. */
export function timeMs(t: Time | null | undefined): number | undefined {
  if (t === undefined || t === null) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A wire timestamp at second precision, as metav1.Time marshals it. */
export function wireTime(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

/**
 * Waits `ms` milliseconds, or less when `signal` aborts first (at once when it already has).
 * Resolves true when the wait was cut short by the signal, false when it ran its course.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const aborted = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve(false);
    }, ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
