/**
 * Times of klog lines (`I1201 18:14:27.863447 ...`): the kubelet stamps each line in local time,
 * to the microsecond, without a year; and what the kubelet's log (at --v=2) says about pods.
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

/** What a kubelet's log says from a moment on: when its PLEG saw containers die, and when pods' updates reached it. */
export interface KubeletLog {
  /** Container ID -> when the kubelet's PLEG reported it died (the first report). */
  readonly died: Map<string, number>;
  /** `namespace/name` -> when the kubelet logged an update of the pod from the API (`SyncLoop UPDATE`), in order. */
  readonly updates: Map<string, number[]>;
}

const PLEG_DIED = /"SyncLoop \(PLEG\): event for pod" pod="[^"]+" event=\{[^}]*"Type":"ContainerDied","Data":"([0-9a-f]+)"/;
const SYNC_UPDATE = /"SyncLoop UPDATE" source="api" pods=\[([^\]]*)\]/;

/** The kubelet log lines `text` holds from `sinceMs` on, read for container deaths and pod updates. */
export function readKubeletLog(text: string, sinceMs: number): KubeletLog {
  const died = new Map<string, number>();
  const updates = new Map<string, number[]>();
  for (const line of text.split('\n')) {
    const at = klogLineMs(line, sinceMs);
    if (at === undefined || at < sinceMs) continue;
    const d = PLEG_DIED.exec(line);
    if (d?.[1] && !died.has(d[1])) died.set(d[1], at);
    const u = SYNC_UPDATE.exec(line);
    if (!u?.[1]) continue;
    for (const quoted of u[1].split(',')) {
      const pod = quoted.trim().replace(/^"|"$/g, '');
      updates.set(pod, [...(updates.get(pod) ?? []), at]);
    }
  }
  return { died, updates };
}
