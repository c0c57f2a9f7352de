/**
 * Time as podlife sees it: Kubernetes timestamps and waits that an abort cuts short.
 *
 * Objects read from the wire carry RFC 3339 strings; objects built with client-node's typed
 * API carry `Date`s. Every reader goes through `timeMs`, which accepts both, so no module has
 * to know where an object came from. Writers produce `Date`s (serialised as RFC 3339).
 * `sleep` never rejects and never outlives its signal: no timer is left behind either way.
 * `Wire<T>` is the type of an object with wire times (`asPod` gives it to functions typed `V1Pod`).
 */
import type { V1Pod } from '@kubernetes/client-node';

/** A Kubernetes timestamp: a `Date` (typed client objects) or an RFC 3339 string (the wire). */
export type Time = Date | string;

/**
 * `T` as JSON or YAML carries it: every `Date` field may be an RFC 3339 string instead. A pod
 * written by hand in TypeScript (a test fixture, a manifest) types as `Wire<V1Pod>`.
 */
export type Wire<T> = T extends Date
  ? Time
  : T extends readonly (infer U)[]
    ? Wire<U>[]
    : T extends object
      ? { [K in keyof T]: Wire<T[K]> }
      : T;

/**
 * A pod with RFC 3339 string times, typed for podlife's functions (which take client-node's
 * `V1Pod`): every podlife reader accepts either form, so this is a type conversion only — the
 * object is returned as it is, not copied or parsed.
 */
export function asPod(pod: Wire<V1Pod>): V1Pod {
  return pod as V1Pod;
}

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
