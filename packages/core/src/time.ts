/**
 * Kubernetes timestamps as podlife sees them.
 *
 * Objects read from the wire carry RFC 3339 strings; objects built with client-node's typed
 * API carry `Date`s. Every reader goes through `timeMs`, which accepts both, so no module has
 * to know where an object came from. Writers produce `Date`s (serialised as RFC 3339).
 */
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
