/**
 * What the real node showed, turned into the records the soak's tally reads (the simulated
 * kubelet's `KubeletRecord`s), so that both forms are counted by the same code (tally.ts).
 *
 * Sources, all observable from outside the controller: each container's own record of the TERMs
 * it received and of its exit (busybox.ts, the host's uptime clock); containerd's record of each
 * exit (code, nanosecond time) or, once containerd has removed the container, the API's
 * container status (1 s); the kubelet's log line for each container it kills (`Killing container
 * with a grace period`); the pod's deletion and terminal phase as the API showed them.
 *
 * Guarantees: pure. A TERM counts as the kubelet's when the kubelet logged killing that container
 * at or before it, else as the controller's stop (pods/exec), so a controller stop that lands
 * after the kubelet began to kill the container is not counted as a stop (the StoppingContainer
 * Events still show it). An exit 137 is a KILL, which only the kubelet sends on this node. A
 * container that stopped with no exit code seen anywhere gets exit code -1 at the moment runc
 * was first seen not running it.
 */
import { klogLineMs, type KubeletRecord } from '@podlife/testbed';

/** Clock slack between the kubelet's log time and a container's uptime record (both this host's clock). */
const CLOCK_SLACK_MS = 20;

export interface OwnLine {
  atMs: number;
  what: 'TERM' | 'exit';
  exitCode?: number;
}

export interface ContainerSeen {
  name: string;
  /** The container's own record (busybox.ts), in file order. */
  own: readonly OwnLine[];
  /** containerd's record, else the API's terminated state. */
  runtimeExit?: { exitCode: number; atMs: number };
  /** When the kubelet logged killing it (every time). */
  kubeletKillsMs: readonly number[];
  /** First moment it was seen stopped with no exit code anywhere (runc no longer runs it, the pod is gone). */
  vanishedAtMs?: number;
}

export interface PodSeen {
  uid: string;
  name: string;
  namespace: string;
  containers: readonly ContainerSeen[];
  /** The earliest moment the pod's deletion can have started, as the API showed it. */
  deletionAtMs?: number;
  /** When the watch first showed its phase terminal (the kubelet's own, or the controller's escalation). */
  phaseTerminalAtMs?: number;
}

/** Parses a container's record file (`<uptime s> TERM` / `<uptime s> exit <code>`); `bootMs` is the wall time at uptime 0. */
export function parseOwnRecord(text: string, bootMs: number): OwnLine[] {
  const out: OwnLine[] = [];
  for (const line of text.split('\n')) {
    const m = /^(\d+(?:\.\d+)?) (TERM|exit)(?: (-?\d+))?$/.exec(line.trim());
    if (!m?.[1] || !m[2]) continue;
    const atMs = bootMs + Math.round(Number(m[1]) * 1000);
    out.push(m[2] === 'TERM' ? { atMs, what: 'TERM' } : { atMs, what: 'exit', exitCode: Number(m[3] ?? 0) });
  }
  return out;
}

export interface KubeletKill {
  atMs: number;
  podUid: string;
  container: string;
}

/**
 * The kubelet's `Killing container with a grace period` lines (klog, `--v=2`): `I1201
 * 18:10:06.123456 ... podUID="…" containerName="…"`. klog writes local time without a year:
 * each line takes the year that puts it nearest to `nearMs` (klog.ts).
 */
export function parseKubeletKills(log: string, nearMs: number): KubeletKill[] {
  const out: KubeletKill[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('Killing container with a grace period')) continue;
    const atMs = klogLineMs(line, nearMs);
    const uid = /podUID="([^"]+)"/.exec(line)?.[1];
    const container = /containerName="([^"]+)"/.exec(line)?.[1];
    if (atMs === undefined || !uid || !container) continue;
    out.push({ atMs, podUid: uid, container });
  }
  return out;
}

function containerRecords(pod: PodSeen, c: ContainerSeen): KubeletRecord[] {
  const base = { uid: pod.uid, namespace: pod.namespace, pod: pod.name, container: c.name };
  const out: KubeletRecord[] = [];
  for (const line of c.own) {
    if (line.what !== 'TERM') continue;
    const byKubelet = c.kubeletKillsMs.some((k) => k <= line.atMs + CLOCK_SLACK_MS);
    out.push({ kind: 'signal', ...base, atMs: line.atMs, signal: 'TERM', from: byKubelet ? 'kubelet' : 'exec', running: true });
  }
  const ownExit = c.own.find((l) => l.what === 'exit');
  const exitCode = c.runtimeExit?.exitCode ?? ownExit?.exitCode ?? (c.vanishedAtMs !== undefined ? -1 : undefined);
  const atMs = ownExit?.atMs ?? c.runtimeExit?.atMs ?? c.vanishedAtMs;
  if (exitCode === undefined || atMs === undefined) return out;
  if (exitCode === 137) out.push({ kind: 'signal', ...base, atMs, signal: 'KILL', from: 'kubelet', running: true });
  out.push({ kind: 'exit', ...base, atMs, exitCode });
  return out;
}

/** The records of every pod seen, in time order. */
export function nodeRecords(pods: readonly PodSeen[]): KubeletRecord[] {
  const out: KubeletRecord[] = [];
  for (const pod of pods) {
    const base = { uid: pod.uid, namespace: pod.namespace, pod: pod.name };
    const mine = pod.containers.flatMap((c) => containerRecords(pod, c));
    const kills = pod.containers.flatMap((c) => c.kubeletKillsMs);
    const endingAt = kills.length > 0 ? Math.min(...kills) : pod.deletionAtMs;
    if (endingAt !== undefined) mine.push({ kind: 'ending', ...base, atMs: endingAt, cause: 'deleted', graceMs: 0 });
    // A terminal phase while containers still run is the controller's escalation (records the
    // result; the kubelet ends the rest on the deletion that follows): the tally reads the first ending.
    if (pod.phaseTerminalAtMs !== undefined) mine.push({ kind: 'ending', ...base, atMs: pod.phaseTerminalAtMs, cause: 'external', graceMs: 0 });
    const exits = mine.filter((r): r is Extract<KubeletRecord, { kind: 'exit' }> => r.kind === 'exit');
    if (pod.containers.length > 0 && exits.length === pod.containers.length) {
      const failed = exits.some((e) => e.exitCode !== 0);
      const atMs = Math.max(...exits.map((e) => e.atMs));
      mine.push({ kind: 'finished', ...base, atMs, phase: failed ? 'Failed' : 'Succeeded', cause: pod.deletionAtMs !== undefined ? 'deleted' : 'completed' });
    }
    out.push(...mine);
  }
  return out.sort((a, b) => a.atMs - b.atMs);
}
