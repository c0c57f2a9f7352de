/**
 * The soak's verdict, computed from what it observed: the kubelet's records (signals, exits,
 * pods finished; the simulated kubelet's own, or the real node's turned into the same shape by
 * node-records.ts), the Jobs' final conditions and the Events in the namespace.
 *
 * Guarantees: pure; every count names the pods or Jobs behind it (`examples`), so a failing
 * figure can be followed to a pod; nothing is counted from the controller's own word except
 * Events, which is what the Event rows are about.
 */
import type { KubeletRecord } from '@podlife/testbed';
import { kindOfPod, type JobKind } from './jobs.js';

/** The least a container gets between its stop and a SIGKILL (DESIGN 3.2's minimum share). */
export const MIN_SHARE_MS = 2000;

export interface JobOutcome {
  name: string;
  kind: JobKind;
  /** From the Job's conditions; undefined while it has neither Complete nor Failed. */
  result: 'complete' | 'fail' | undefined;
  /** What the API says of its pods at the end (phase, containers), for a Job that did not finish. */
  podState?: string;
}

export interface EventSeen {
  uid: string | undefined;
  pod: string | undefined;
  reason: string;
  note: string;
  type: string;
  instance: string;
  /** How many times it happened (an Event series counts more than once). */
  count?: number;
}

export interface Row {
  label: string;
  value: string;
  /** For the rows the soak asserts: whether the figure passes. */
  pass?: boolean;
  examples?: string[];
}

export interface Tally {
  rows: Row[];
  passed: boolean;
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** p50 / p99 / max of sorted milliseconds, in seconds. */
export function spread(sorted: readonly number[]): string {
  return `${ms(percentile(sorted, 50))} / ${ms(percentile(sorted, 99))} / ${ms(sorted.at(-1))}`;
}

function ms(n: number | undefined): string {
  return n === undefined ? '-' : `${(n / 1000).toFixed(2)} s`;
}

interface PodView {
  uid: string;
  name: string;
  kind: JobKind;
  exits: Map<string, { atMs: number; exitCode: number }>;
  signals: Extract<KubeletRecord, { kind: 'signal' }>[];
  finished?: Extract<KubeletRecord, { kind: 'finished' }>;
  ending?: Extract<KubeletRecord, { kind: 'ending' }>;
}

function podViews(records: readonly KubeletRecord[]): PodView[] {
  const pods = new Map<string, PodView>();
  for (const r of records) {
    const known = kindOfPod(r.pod);
    if (!known) continue;
    let view = pods.get(r.uid);
    if (!view) {
      view = { uid: r.uid, name: r.pod, kind: known.kind, exits: new Map(), signals: [] };
      pods.set(r.uid, view);
    }
    if (r.kind === 'exit' && !view.exits.has(r.container)) view.exits.set(r.container, { atMs: r.atMs, exitCode: r.exitCode });
    else if (r.kind === 'signal') view.signals.push(r);
    else if (r.kind === 'finished') view.finished ??= r;
    else if (r.kind === 'ending') view.ending ??= r;
  }
  return [...pods.values()];
}

/** When the rule fired for this pod: the last trigger container's exit, once all of them exited. */
function triggeredAt(pod: PodView): number | undefined {
  const times = pod.kind.trigger.map((c) => pod.exits.get(c)?.atMs);
  return times.every((t) => t !== undefined) ? Math.max(...(times as number[])) : undefined;
}

/** Pods whose rule fired but whose containers have not all stopped yet (the drain waits for none). */
export function podsAwaitingFinish(records: readonly KubeletRecord[]): string[] {
  return podViews(records).filter((p) => triggeredAt(p) !== undefined && !p.finished).map((p) => p.name);
}

/** Stops the controller issued (through stop containers) more than once: same container, same signal. */
function repeatedStops(pods: readonly PodView[]): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    const counts = new Map<string, number>();
    for (const s of pod.signals) {
      if (s.from === 'kubelet') continue;
      const key = `${s.container} ${s.signal}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    for (const [key, n] of counts) if (n > 1) out.push(`${pod.name}: ${key} x${n}`);
  }
  return out;
}

/** SIGKILLs that reached a running container with no stop before them, or less than the minimum share after it. */
function earlyKills(pods: readonly PodView[]): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    const delivered = pod.signals.filter((s) => s.running).sort((a, b) => a.atMs - b.atMs);
    const containers = new Set(delivered.map((s) => s.container));
    for (const container of containers) {
      const mine = delivered.filter((s) => s.container === container);
      const kill = mine.find((s) => s.signal === 'KILL');
      if (!kill) continue;
      const stop = mine.find((s) => s.signal !== 'KILL' && s.atMs <= kill.atMs);
      if (!stop) out.push(`${pod.name}: ${container} got KILL (${kill.from}) with no stop before it`);
      else if (kill.atMs - stop.atMs < MIN_SHARE_MS) out.push(`${pod.name}: ${container} got KILL (${kill.from}) ${kill.atMs - stop.atMs} ms after ${stop.signal}`);
    }
  }
  return out;
}

/**
 * The kubelet's termination used as an escalation (DESIGN 3.2: the replacement of a SIGKILL) on a
 * container still running with no stop before it, or less than the minimum share after it. Only
 * for kinds the kubelet does not end by design.
 */
function earlyEscalations(pods: readonly PodView[]): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    const ending = pod.ending;
    if (!ending || pod.kind.endedByKubelet) continue;
    for (const container of new Set([...pod.kind.mains, ...pod.kind.sidecars])) {
      if ((pod.exits.get(container)?.atMs ?? Infinity) <= ending.atMs) continue;
      const stop = pod.signals.find((s) => s.container === container && s.from !== 'kubelet' && s.signal !== 'KILL' && s.atMs <= ending.atMs);
      const how = ending.cause === 'deleted' ? 'pod deleted' : 'phase made terminal';
      if (!stop) out.push(`${pod.name}: ${container} still ran, never stopped, when the kubelet was made to end it (${how})`);
      else if (ending.atMs - stop.atMs < MIN_SHARE_MS) out.push(`${pod.name}: ${container} ended by the kubelet (${how}) ${ending.atMs - stop.atMs} ms after its ${stop.signal}`);
    }
  }
  return out;
}

/** A sidecar the controller stopped while a main container of its pod still ran. */
function orderBroken(pods: readonly PodView[]): string[] {
  const out: string[] = [];
  for (const pod of pods) {
    for (const sidecar of pod.kind.sidecars) {
      const stop = pod.signals.find((s) => s.container === sidecar && s.from !== 'kubelet');
      if (!stop) continue;
      const running = pod.kind.mains.filter((m) => (pod.exits.get(m)?.atMs ?? Infinity) > stop.atMs);
      if (running.length > 0) out.push(`${pod.name}: ${sidecar} stopped while ${running.join(', ')} still ran`);
    }
  }
  return out;
}

/** The same Event (pod, reason, note) written by two controller instances. */
function doubledEvents(events: readonly EventSeen[]): string[] {
  const byKey = new Map<string, { pod: string; reason: string; instances: Set<string> }>();
  for (const e of events) {
    const key = JSON.stringify([e.uid, e.reason, e.note]);
    const entry = byKey.get(key) ?? { pod: e.pod ?? '?', reason: e.reason, instances: new Set<string>() };
    entry.instances.add(e.instance);
    byKey.set(key, entry);
  }
  return [...byKey.values()].filter((e) => e.instances.size > 1).map((e) => `${e.pod}: ${e.reason} from ${[...e.instances].join(', ')}`);
}

/**
 * Containers the controller said it stopped more than once (StoppingContainer Events naming the
 * same container of the same pod, from any replica, a series counted in full).
 */
export function repeatedStopEvents(events: readonly EventSeen[]): string[] {
  const counts = new Map<string, { pod: string; container: string; n: number; instances: Set<string> }>();
  for (const e of events) {
    const container = e.reason === 'StoppingContainer' ? /^stopping container (\S+) with /.exec(e.note)?.[1] : undefined;
    if (!container) continue;
    const key = `${e.uid ?? e.pod} ${container}`;
    const entry = counts.get(key) ?? { pod: e.pod ?? '?', container, n: 0, instances: new Set<string>() };
    entry.n += e.count ?? 1;
    entry.instances.add(e.instance);
    counts.set(key, entry);
  }
  return [...counts.values()].filter((c) => c.n > 1).map((c) => `${c.pod}: ${c.container} x${c.n} (${[...c.instances].join(', ')})`);
}

export function tally(input: {
  records: readonly KubeletRecord[];
  jobs: readonly JobOutcome[];
  events: readonly EventSeen[];
  /** How long the drain waited at most. */
  drainMs: number;
  /** For each SIGTERM sent to a replica while the API server was paused: how long it took to exit. */
  shutdownsMs: readonly number[];
  /** Where the stops were seen, for the row's label (default: the simulated kubelet's stop containers). */
  stopsSeenAs?: string;
  /** Rows the form adds (asserted ones count towards the verdict), placed before the latency row. */
  extraRows?: readonly Row[];
}): Tally {
  const pods = podViews(input.records);
  const outcome = (want: JobOutcome['result'], expected: 'complete' | 'fail') =>
    input.jobs.filter((j) => j.result === want && j.kind.expected === expected).map((j) => j.name);
  const completed = outcome('complete', 'complete');
  const failedAsExpected = outcome('fail', 'fail');
  const failedUnexpectedly = outcome('fail', 'complete');
  const completedUnexpectedly = outcome('complete', 'fail');
  const unfinished = input.jobs.filter((j) => j.result === undefined).map((j) => `${j.name}${j.podState ? `: ${j.podState}` : ''}`);

  const stuck = pods.filter((p) => triggeredAt(p) !== undefined && !p.finished).map((p) => {
    const running = [...new Set([...p.kind.mains, ...p.kind.sidecars])].filter((c) => !p.exits.has(c));
    return `${p.name}: ${running.join(', ')} still running`;
  });
  const latencies = pods
    .map((p) => (p.finished && triggeredAt(p) !== undefined ? p.finished.atMs - (triggeredAt(p) as number) : undefined))
    .filter((n): n is number => n !== undefined)
    .sort((a, b) => a - b);
  const stopsIssued = pods.reduce((n, p) => n + p.signals.filter((s) => s.from !== 'kubelet').length, 0);
  const repeated = repeatedStops(pods);
  const kills = [...earlyKills(pods), ...earlyEscalations(pods)];
  const order = orderBroken(pods);
  const doubled = doubledEvents(input.events);
  const stopFailed = input.events.filter((e) => e.reason === 'StopFailed');
  const stopFailed422 = stopFailed.filter((e) => /\b422\b/.test(e.note));

  const n = (list: readonly string[]) => String(list.length);
  const rows: Row[] = [
    { label: 'Jobs created', value: String(input.jobs.length) },
    { label: 'completed', value: n(completed) },
    { label: 'failed as expected', value: n(failedAsExpected) },
    { label: 'failed unexpectedly', value: n(failedUnexpectedly), pass: failedUnexpectedly.length === 0, examples: failedUnexpectedly },
    { label: 'completed though meant to fail', value: n(completedUnexpectedly), examples: completedUnexpectedly },
    { label: 'Jobs unfinished at the end', value: n(unfinished), examples: unfinished },
    { label: `pods stuck (rule fired, not finished when the ${Math.round(input.drainMs / 1000)} s drain ended)`, value: n(stuck), pass: stuck.length === 0, examples: stuck },
    { label: `stops issued (${input.stopsSeenAs ?? 'stop containers seen by the kubelet'})`, value: String(stopsIssued) },
    { label: 'stops repeated (same signal to one container twice)', value: n(repeated), pass: repeated.length === 0, examples: repeated },
    { label: `early KILLs or kubelet terminations (no stop first, or < ${MIN_SHARE_MS / 1000} s after it)`, value: n(kills), examples: kills },
    { label: 'order broken (a sidecar stopped while a main ran)', value: n(order), pass: order.length === 0, examples: order },
    { label: 'Events doubled (same pod, reason, note from two replicas)', value: n(doubled), examples: doubled },
    { label: 'StopFailed Warnings (of which naming a 422)', value: `${stopFailed.length} (${stopFailed422.length})`, examples: stopFailed.map((e) => `${e.pod}: ${e.note}`) },
    { label: 'replica SIGTERMed while the API server was paused: slowest exit', value: input.shutdownsMs.length === 0 ? '-' : ms(Math.max(...input.shutdownsMs)) },
    ...(input.extraRows ?? []),
    { label: `latency rule fired -> pod finished, p50 / p99 / max (${latencies.length} pods)`, value: spread(latencies) },
  ];
  return { rows, passed: rows.every((r) => r.pass !== false) };
}

/** The table as text, each asserted row marked PASS/FAIL, then up to `examples` names per row. */
export function formatTally(t: Tally, examples = 5): string {
  const width = Math.max(...t.rows.map((r) => r.label.length));
  const valueWidth = Math.max(...t.rows.map((r) => r.value.length));
  const lines = t.rows.map((r) => `${r.label.padEnd(width)}  ${r.value.padStart(valueWidth)}${r.pass === undefined ? '' : r.pass ? '  PASS' : '  FAIL'}`);
  const detail = t.rows.filter((r) => (r.examples?.length ?? 0) > 0 && r.value !== '0').flatMap((r) => [
    `${r.label}:`,
    ...(r.examples ?? []).slice(0, examples).map((e) => `  ${e}`),
    ...((r.examples?.length ?? 0) > examples ? [`  … and ${(r.examples?.length ?? 0) - examples} more`] : []),
  ]);
  return [...lines, ...(detail.length > 0 ? ['', ...detail] : [])].join('\n');
}
