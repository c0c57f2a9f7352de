/**
 * `pnpm soak`: the keystone chaos soak. Jobs of every kind (jobs.ts) run against two
 * leader-elected `podlife-controller` processes on a private control plane, with the simulated
 * kubelet (ephemeral stop strategy) or, with `--real-node`, a real node (kubelet, containerd,
 * runc; busybox containers; the default exec strategy), while the leader is SIGKILLed, the API
 * server restarted and paused, and etcd compacted (plan.ts); then the soak drains and prints the
 * fault schedule that ran and the counts (tally.ts).
 *
 * Guarantees:
 * - the controller is driven only through its command line and observed only through the API
 *   (Jobs, Events, the Lease) and what the kubelet did to containers (the simulated kubelet's
 *   record; on the real node, what node-observer.ts reads from the containers, containerd, runc
 *   and the kubelet's log), so the soak does not depend on how the controller is built inside;
 * - every process it starts (control plane, node, replicas) and every folder, mount and
 *   interface it makes is gone when it ends, whether it passes, fails, throws or is interrupted
 *   (test/support/processes.ts, node.ts);
 * - the exit code is 0 only when no pod is stuck, no stop was repeated and no Job failed
 *   unexpectedly; 2 for bad arguments.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { isConflict, resourcePath, sleep, type KubeClient } from '@podlife/core';
import { type ControlPlane, type KubeletRecord, makeTempDir, removeTempDir, seededRandom, startControlPlane } from '@podlife/testbed';
import { JOB_KINDS, jobManifest, type JobKind, type PodFlavour } from './jobs.js';
import { faultSchedule, parseSoakArgs, usage, type PlannedFault, type SoakOptions } from './plan.js';
import { Replica, leaseHolder } from './replicas.js';
import { realNodeTarget, simulatedTarget, type Target } from './targets.js';
import { formatTally, podsAwaitingFinish, tally, type EventSeen, type JobOutcome } from './tally.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const NAMESPACE = 'soak';
/** The most the drain waits for Jobs to end and fired pods to finish: a grace period, a lease, and room. */
export const DRAIN_MS = 90_000;
const PROGRESS_EVERY_MS = 30_000;
/** How long a leader kill waits for a live Lease holder: a lease duration (15 s) and a retry period. */
const LEADER_WAIT_MS = 17_000;

interface FaultRun extends PlannedFault {
  startedMs: number;
  endedMs: number;
  detail: string;
}

/** The longest the soak's own event loop was held up (its faults and its kubelet run late by as much). */
class LagMonitor {
  private last = Date.now();
  worstMs = 0;
  worstAt = 0;
  private readonly timer = setInterval(() => {
    const now = Date.now();
    const lag = now - this.last - 250;
    if (lag > this.worstMs) {
      this.worstMs = lag;
      this.worstAt = now;
    }
    this.last = now;
  }, 250);

  stop(): void {
    clearInterval(this.timer);
  }
}

class Clock {
  readonly t0 = Date.now();
  elapsed(at = Date.now()): string {
    return `+${((at - this.t0) / 1000).toFixed(1)} s`;
  }
}

interface Soak {
  options: SoakOptions;
  cp: ControlPlane;
  client: KubeClient;
  replicas: Replica[];
  records: () => KubeletRecord[];
  flavour: PodFlavour;
  created: { name: string; kind: JobKind }[];
  shutdownsMs: number[];
  note: (line: string) => void;
}

async function createJobs(soak: Soak, perMinute: number, loadStart: number, windowEnd: number): Promise<void> {
  const random = seededRandom(soak.options.seed * 2 + 1);
  const interval = 60_000 / perMinute;
  const path = resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: NAMESPACE });
  for (let i = 0; loadStart + i * interval < windowEnd; i++) {
    await sleep(loadStart + i * interval - Date.now());
    const kind = JOB_KINDS[i % JOB_KINDS.length] as JobKind;
    const manifest = jobManifest(kind, i, random, soak.flavour);
    const name = (manifest.metadata as { name: string }).name;
    for (;;) {
      try {
        await soak.client.create(path, manifest);
        soak.created.push({ name, kind });
        break;
      } catch (err) {
        if (isConflict(err)) {
          soak.created.push({ name, kind }); // an earlier attempt landed before its answer was lost
          break;
        }
        if (Date.now() > windowEnd + DRAIN_MS / 2) {
          soak.note(`giving up creating ${name}: ${err instanceof Error ? err.message : String(err)}`);
          break;
        }
        await sleep(1000);
      }
    }
  }
}

async function runFault(soak: Soak, fault: PlannedFault, faultStart: number): Promise<string> {
  const { cp, client, replicas } = soak;
  switch (fault.kind) {
    case 'leader-kill': {
      // Right after another fault the Lease may still name a replica that has exited: wait (up to
      // a lease duration and a retry) for a live leader rather than let the fault pass.
      const deadline = Date.now() + LEADER_WAIT_MS;
      for (;;) {
        const holder = await leaseHolder(client, NAMESPACE);
        const leader = replicas.find((r) => r.running && r.identity === holder);
        if (leader) {
          leader.kill();
          const waited = Date.now() - faultStart;
          return `SIGKILL to the leader ${holder}${waited >= 1000 ? ` (after waiting ${(waited / 1000).toFixed(1)} s for a live one)` : ''}`;
        }
        if (Date.now() >= deadline) return `no live leader to kill within ${LEADER_WAIT_MS / 1000} s (Lease holder: ${holder ?? 'none'})`;
        await sleep(500);
      }
    }
    case 'apiserver-restart':
      await cp.restartApiServer();
      return 'kube-apiserver stopped and started again';
    case 'apiserver-pause': {
      const holder = await leaseHolder(client, NAMESPACE);
      const duration = fault.durationMs ?? 20_000;
      cp.pauseApiServer();
      let shutdown = '';
      try {
        await sleep(5000);
        // The leader, when there is one: it has work in flight against the server that stopped answering.
        const target = replicas.find((r) => r.running && r.identity === holder) ?? replicas.find((r) => r.running);
        if (target) {
          const id = target.identity;
          const role = id === holder ? 'the leader' : 'not leading';
          const result = await target.terminate(10_000);
          soak.shutdownsMs.push(result.ms);
          shutdown = `; SIGTERM to ${id} (${role}) while paused: exited after ${(result.ms / 1000).toFixed(1)} s (${result.info})`;
        }
        await sleep(faultStart + duration - Date.now());
      } finally {
        cp.resumeApiServer();
      }
      return `kube-apiserver paused (SIGSTOP) for ${(duration / 1000).toFixed(0)} s${shutdown}`;
    }
    case 'etcd-compaction':
      await cp.compactEtcd();
      return 'etcd compacted at its current revision';
  }
}

async function runFaults(soak: Soak, plan: readonly PlannedFault[], loadStart: number): Promise<FaultRun[]> {
  const ran: FaultRun[] = [];
  for (const fault of plan) {
    await sleep(loadStart + fault.atMs - Date.now());
    const startedMs = Date.now();
    soak.note(`fault: ${fault.kind}`);
    let detail: string;
    try {
      detail = await runFault(soak, fault, startedMs);
    } catch (err) {
      detail = `failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    ran.push({ ...fault, startedMs: startedMs - loadStart, endedMs: Date.now() - loadStart, detail });
    soak.note(`fault: ${fault.kind} done (${detail})`);
  }
  return ran;
}

type JobList = { items: { metadata?: { name?: string }; status?: { conditions?: { type: string; status: string }[] } }[] };

function jobResult(job: JobList['items'][number] | undefined): JobOutcome['result'] {
  const conditions = job?.status?.conditions ?? [];
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) return 'complete';
  if (conditions.some((c) => c.type === 'Failed' && c.status === 'True')) return 'fail';
  return undefined;
}

async function jobOutcomes(soak: Soak): Promise<JobOutcome[]> {
  const list = await soak.client.get<JobList>(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: NAMESPACE }));
  const byName = new Map(list.items.map((j) => [j.metadata?.name ?? '', j]));
  return soak.created.map(({ name, kind }) => ({ name, kind, result: jobResult(byName.get(name)) }));
}

/** One line per pod of a Job, as the API has it: phase, deletion, each container's state. */
async function podStates(client: KubeClient, job: string): Promise<string> {
  const pods = await client.get<{ items: V1Pod[] }>(resourcePath({ version: 'v1', resource: 'pods', namespace: NAMESPACE }), { labelSelector: `job-name=${job}` });
  if (pods.items.length === 0) return 'no pod left';
  return pods.items.map((p) => {
    const containers = (p.status?.containerStatuses ?? []).map((c) => {
      const t = c.state?.terminated;
      return `${c.name} ${t ? `exited ${t.exitCode}` : c.state?.running ? 'running' : 'waiting'}`;
    });
    return `pod phase ${p.status?.phase ?? '?'}${p.metadata?.deletionTimestamp ? ', deleting' : ''}, ${containers.join(', ')}`;
  }).join('; ');
}

async function finalOutcomes(soak: Soak): Promise<JobOutcome[]> {
  const outcomes = await jobOutcomes(soak);
  for (const o of outcomes) if (o.result === undefined) o.podState = await podStates(soak.client, o.name).catch((err: unknown) => String(err));
  return outcomes;
}

async function drain(soak: Soak): Promise<void> {
  const end = Date.now() + DRAIN_MS;
  while (Date.now() < end) {
    const outcomes = await jobOutcomes(soak).catch(() => undefined);
    const waiting = podsAwaitingFinish(soak.records()).length;
    const unfinished = outcomes?.filter((o) => o.result === undefined).length;
    if (unfinished === 0 && waiting === 0) return;
    await sleep(2000);
  }
}

async function events(client: KubeClient): Promise<EventSeen[]> {
  type Ev = { reason?: string; note?: string; type?: string; reportingInstance?: string; regarding?: { uid?: string; name?: string }; series?: { count?: number } };
  const list = await client.get<{ items: Ev[] }>(resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: NAMESPACE }));
  return list.items
    .filter((e) => e.reportingInstance?.startsWith('replica-'))
    .map((e) => ({ uid: e.regarding?.uid, pod: e.regarding?.name, reason: e.reason ?? '', note: e.note ?? '', type: e.type ?? '', instance: e.reportingInstance ?? '', count: e.series?.count ?? 1 }));
}

function formatSchedule(ran: readonly FaultRun[]): string {
  const s = (ms: number) => `+${(ms / 1000).toFixed(1)} s`;
  return ran.map((f) => `  planned ${s(f.atMs).padStart(9)}  ran ${s(f.startedMs).padStart(9)} .. ${s(f.endedMs).padStart(9)}  ${f.kind.padEnd(18)} ${f.detail}`).join('\n');
}

function controllerEntry(): string[] {
  return ['--import', import.meta.resolve('tsx'), '--conditions=@podlife/source', join(repoRoot, 'packages/controller/src/main.ts')];
}

function load(): string {
  return loadavg().map((n) => n.toFixed(2)).join(' ');
}

async function soak(options: SoakOptions, workDir: string): Promise<number> {
  const clock = new Clock();
  const note = (line: string) => console.log(`[${clock.elapsed()}] ${line}`);
  let cp: ControlPlane | undefined;
  let target: Target | undefined;
  const replicas: Replica[] = [];
  const lag = new LagMonitor();
  try {
    note(`starting etcd, kube-apiserver (watch cache off, so compactions reach the watches) and the Job controller${options.realNode ? ', kube-scheduler and a real node' : ''}; load average ${load()}`);
    cp = await startControlPlane({ controllerManager: true, watchCache: false, scheduler: options.realNode });
    await cp.client.create('/api/v1/namespaces', { metadata: { name: NAMESPACE } });
    target = options.realNode ? await realNodeTarget(cp, { namespace: NAMESPACE, workDir, keepLogs: options.logsDir !== undefined, strategy: options.strategy }, note) : await simulatedTarget(cp, workDir);
    const records = target.records;

    const flags = [
      '--controllers=keystone', `--namespace=${NAMESPACE}`, '--leader-elect', `--leader-election-namespace=${NAMESPACE}`,
      `--kubeconfig=${cp.kubeconfigPath}`, '--metrics-port=0', '--health-port=0', '--log-level=info',
    ];
    if (target.controllerConfig !== undefined) {
      const configPath = join(workDir, 'controller.yaml');
      writeFileSync(configPath, target.controllerConfig);
      flags.push(`--config=${configPath}`);
    }
    for (const slot of ['a', 'b']) replicas.push(new Replica(slot, { entry: controllerEntry(), flags, logDir: workDir, note }));
    for (const r of replicas) r.start();
    const soak: Soak = { options, cp, client: cp.client, replicas, records, flavour: target.flavour, created: [], shutdownsMs: [], note };
    const deadline = Date.now() + 60_000;
    let leader: string | undefined;
    while (!leader && Date.now() < deadline) {
      leader = await leaseHolder(cp.client, NAMESPACE);
      if (!leader) await sleep(500);
    }
    if (!leader) throw new Error(`no replica took the Lease within 60 s; replica logs are in ${workDir}`);
    const perMinute = options.jobsPerMinute ?? target.jobsPerMinute;
    note(`${leader} leads; load for ${options.minutes} min, ${perMinute} Jobs a minute (seed ${options.seed})`);

    const random = seededRandom(options.seed);
    const plan = faultSchedule(options.minutes, random);
    const loadStart = Date.now();
    const windowEnd = loadStart + options.minutes * 60_000;
    const loads: number[] = [];
    const progress = setInterval(() => {
      const now = records();
      const finished = new Set(now.filter((r) => r.kind === 'finished').map((r) => r.uid)).size;
      loads.push(loadavg()[0] ?? 0);
      note(`progress: ${soak.created.length} Jobs created, ${finished} pods finished, waiting on ${podsAwaitingFinish(now).length}; load average ${load()}`);
    }, PROGRESS_EVERY_MS);
    let ran: FaultRun[];
    try {
      [, ran] = await Promise.all([createJobs(soak, perMinute, loadStart, windowEnd), runFaults(soak, plan, loadStart)]);
      note(`load window over: ${soak.created.length} Jobs created; draining (at most ${DRAIN_MS / 1000} s)`);
      await drain(soak);
    } finally {
      clearInterval(progress);
    }
    const seen = await events(cp.client);
    const result = tally({
      records: records(), jobs: await finalOutcomes(soak), events: seen, drainMs: DRAIN_MS, shutdownsMs: soak.shutdownsMs,
      ...(target.stopsSeenAs ? { stopsSeenAs: target.stopsSeenAs } : {}),
      ...(target.extraRows ? { extraRows: target.extraRows(seen) } : {}),
    });
    const components = cp.pids().length;
    const expected = options.realNode ? 4 : 3;
    console.log(`\nthe soak's own event loop was held up ${(lag.worstMs / 1000).toFixed(1)} s at worst (${clock.elapsed(lag.worstAt)})`);
    console.log(`\n== fault schedule that ran (times from the start of the load)\n${formatSchedule(ran)}`);
    if (components < expected) console.log(`\nwarning: only ${components} of the ${expected} control-plane components still run`);
    console.log(`\n== chaos soak: ${options.minutes} min, ${perMinute} Jobs a minute, seed ${options.seed}, kube-apiserver ${cp.version}, ${target.describe}, 2 replicas\n`);
    console.log(formatTally(result));
    console.log(`\nload average (1 min) during the load window: max ${Math.max(0, ...loads).toFixed(2)}, mean ${(loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length)).toFixed(2)}; at the end ${load()} (${cpus().length} cores)`);
    console.log(`\n${result.passed ? 'PASS' : 'FAIL'}: every row marked PASS/FAIL must be 0 (pods stuck, stops repeated, order broken, unexpected Job failures)`);
    return result.passed ? 0 : 1;
  } finally {
    lag.stop();
    for (const r of replicas) await r.stop();
    await target?.stop();
    await cp?.stop();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const parsed = parseSoakArgs(argv);
  if (!parsed.ok) {
    process.stderr.write(`${parsed.problems.join('\n')}\n\n${usage}`);
    return 2;
  }
  const { options } = parsed;
  if (options.help) {
    process.stdout.write(usage);
    return 0;
  }
  let workDir: string;
  if (options.logsDir) {
    workDir = resolve(options.logsDir);
    mkdirSync(workDir, { recursive: true });
  } else workDir = makeTempDir('podlife-soak-');
  try {
    return await soak(options, workDir);
  } finally {
    if (!options.logsDir) removeTempDir(workDir);
  }
}

const code = await main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  return 1;
});
process.exit(code);
