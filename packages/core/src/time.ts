/**
 * Time as podlife sees it: Kubernetes timestamps and waits that an abort cuts short.
 *
 * Objects read from the wire carry RFC 3339 strings; objects built with client-node's typed
 * API carry `Date`s. Every reader goes through `timeMs`, which accepts both, so no module has
 * to know where an object came from. Writers produce `Date`s (serialised as RFC 3339).
 * `sleep` never rejects and never outlives its signal: no timer is left behind either way; it
 * never ends before `ms`, however long (a wait past what one timer holds is taken in steps).
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
  // typeof, not instanceof: the same split, without instanceof's cost on every wire string.
  const ms = typeof t === 'string' ? (utcSeconds(t) ?? Date.parse(t)) : t.getTime();
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * The forms the API server writes, `YYYY-MM-DDTHH:MM:SSZ` (metav1.Time) and the same with a
 * fraction of up to 9 digits (MicroTime, toISOString), read without Date.parse, which costs
 * several times more on a hot path (keystone reads a finishedAt per decision). Anything else (an
 * offset, a year before 1000, a field out of range) is left to Date.parse: undefined here. Days
 * 29-31 roll into the next month as Date.parse rolls them; a fraction is cut to milliseconds.
 */
function utcSeconds(s: string): number | undefined {
  const end = s.length - 1;
  const fraction = end - 20; // digits after the '.', when there is one
  if (end !== 19 && (fraction < 1 || fraction > 9 || s.charCodeAt(19) !== 46)) return undefined;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(end) !== 90) {
    return undefined;
  }
  const year = digits(s, 0, 4);
  const month = digits(s, 5, 7);
  const day = digits(s, 8, 10);
  const hour = digits(s, 11, 13);
  const minute = digits(s, 14, 16);
  const second = digits(s, 17, 19);
  const ms = end === 19 ? 0 : fractionMs(digits(s, 20, end), fraction);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || ms < 0) {
    return undefined;
  }
  return ((daysSinceEpoch(year, month, day) * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + ms;
}

/** `value`, the `count` digits after a decimal point, in whole milliseconds (cut, as Date.parse cuts); -1 stays -1. */
function fractionMs(value: number, count: number): number {
  if (value < 0) return -1;
  return count <= 3 ? value * 10 ** (3 - count) : Math.floor(value / 10 ** (count - 3));
}

/** The decimal number in s[from, to), or -1 when a character is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** A wire timestamp at second precision, as metav1.Time marshals it. */
export function wireTime(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

/**
 * The longest delay one timer holds (2^31-1 ms, about 24.8 days): the runtime turns a longer
 * one into 1 ms, so whoever waits longer re-arms in steps of at most this.
 */
export const MaxTimerMs = 2 ** 31 - 1;

/**
 * Waits `ms` milliseconds, or less when `signal` aborts first (at once when it already has).
 * Resolves true when the wait was cut short by the signal, false when it ran its course.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const end = Date.now() + ms;
    let timer: ReturnType<typeof setTimeout>;
    const aborted = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const step = (left: number): void => {
      timer = setTimeout(() => {
        const rest = end - Date.now();
        if (rest > 0 && left > MaxTimerMs) return step(rest);
        signal?.removeEventListener('abort', aborted);
        resolve(false);
      }, Math.min(MaxTimerMs, Math.max(0, left)));
    };
    step(ms);
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
