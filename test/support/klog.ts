/**
 * Times of klog lines (`I1201 18:14:27.863447 ...`): the kubelet stamps each line in local time,
 * to the microsecond, without a year.
 *
 * Guarantees: the year is the one that puts the line nearest to `nearMs` (a time the caller knows
 * is close to the line, such as when it started reading), so a run across New Year reads a line of
 * 1 January as the new year and one of 31 December as the old; a line that does not start with a
 * klog header reads as undefined.
 */

const HEADER = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})/;

/** Milliseconds since the epoch of a klog line, or undefined when it has no klog header. */
export function klogLineMs(line: string, nearMs: number): number | undefined {
  const m = HEADER.exec(line);
  if (!m) return undefined;
  const [month, day, hour, minute, second, micros] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const year = new Date(nearMs).getFullYear();
  let best: number | undefined;
  for (const y of [year - 1, year, year + 1]) {
    const at = new Date(y, month - 1, day, hour, minute, second, Math.floor(micros / 1000)).getTime();
    if (best === undefined || Math.abs(at - nearMs) < Math.abs(best - nearMs)) best = at;
  }
  return best;
}
