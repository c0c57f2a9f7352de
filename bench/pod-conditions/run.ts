/**
 * sandboxReady + explainPod throughput on 100k varied pods, beside JSON.parse of the same pods
 * (the cost of merely receiving them: the physical floor for anything that reads pods off a watch).
 *
 *     tsx --conditions=@podlife/source bench/pod-conditions/run.ts [count]
 */
import type { V1Pod } from '@kubernetes/client-node';
import { explainPod, sandboxReady } from '@podlife/pod-conditions';
import type { PodEvent } from '@podlife/pod-conditions';
import { judge, loadAverage, times } from '../verdict.js';

const count = Number(process.argv[2] ?? 100_000);
const t0 = Date.parse('2025-03-01T10:00:00Z');
const at = (s: number): string => new Date(t0 + s * 1000).toISOString();

/** A deterministic mix: ready, unschedulable, sandbox failing, image pull, crash loop, gated, old clusters. */
function makePod(i: number): { pod: V1Pod; events: PodEvent[] } {
  const kind = i % 8;
  const name = `pod-${i}`;
  const containers = [{ name: 'app', image: `example.com/app:${i % 50}`, readinessProbe: { httpGet: { path: '/ready', port: 8080 } } }, { name: 'proxy', image: 'example.com/proxy:1' }];
  const pod: V1Pod = {
    metadata: { name, namespace: `ns-${i % 20}`, uid: `uid-${i}`, resourceVersion: String(i), creationTimestamp: at(0) as unknown as Date, labels: { app: 'bench', shard: String(i % 16) } },
    spec: { nodeName: kind === 1 ? undefined : `node-${i % 500}`, containers, ...(kind === 5 ? { readinessGates: [{ conditionType: 'example.com/lb' }] } : {}) },
    status: { phase: 'Running', podIP: kind === 1 ? undefined : `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, conditions: [] },
  };
  const st = pod.status!;
  const cond = (type: string, status: string, s: number, reason?: string, message?: string) =>
    st.conditions!.push({ type, status, lastTransitionTime: at(s) as unknown as Date, ...(reason ? { reason } : {}), ...(message ? { message } : {}) });
  const cs = (name: string, state: object, ready: boolean) => ({ name, image: 'x', imageID: '', ready, restartCount: kind === 4 ? 5 : 0, state, ...(kind === 4 ? { lastState: { terminated: { exitCode: 1, reason: 'Error' } } } : {}) });
  const events: PodEvent[] = [];
  const sandboxType = kind === 6 ? 'PodHasNetwork' : 'PodReadyToStartContainers';
  if (kind === 1) {
    st.phase = 'Pending';
    cond('PodScheduled', 'False', 0, 'Unschedulable', '0/500 nodes are available: 500 Insufficient cpu.');
    events.push({ type: 'Warning', reason: 'FailedScheduling', message: '0/500 nodes are available', lastTimestamp: at(30) });
    return { pod, events };
  }
  cond('PodScheduled', 'True', 1);
  cond('Initialized', 'True', 1);
  if (kind === 2) {
    st.phase = 'Pending';
    cond(sandboxType, 'False', 1);
    events.push({ type: 'Warning', reason: 'FailedCreatePodSandBox', message: 'failed to setup network for sandbox: cni plugin not initialized', lastTimestamp: at(20) });
    return { pod, events };
  }
  if (kind !== 7) cond(sandboxType, 'True', 3); // kind 7: a cluster without the condition
  if (kind === 3) {
    st.containerStatuses = [cs('app', { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } }, false), cs('proxy', { running: { startedAt: at(4) } }, true)];
    cond('ContainersReady', 'False', 3);
    return { pod, events };
  }
  if (kind === 4) {
    st.containerStatuses = [cs('app', { waiting: { reason: 'CrashLoopBackOff' } }, false), cs('proxy', { running: { startedAt: at(4) } }, true)];
    cond('ContainersReady', 'False', 3);
    return { pod, events };
  }
  st.containerStatuses = [cs('app', { running: { startedAt: at(4) } }, kind !== 0 || i % 3 !== 0), cs('proxy', { running: { startedAt: at(4) } }, true)];
  if (kind === 0 && i % 3 === 0) {
    cond('ContainersReady', 'False', 4);
    events.push({ type: 'Warning', reason: 'Unhealthy', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503', lastTimestamp: at(50), involvedObject: { uid: `uid-${i}`, fieldPath: 'spec.containers{app}' } });
    return { pod, events };
  }
  cond('ContainersReady', 'True', 6);
  cond('Ready', kind === 5 ? 'False' : 'True', 6);
  return { pod, events };
}

const fixtures = Array.from({ length: count }, (_, i) => makePod(i));
const texts = fixtures.map((f) => JSON.stringify(f.pod));
const bytes = texts.reduce((n, t) => n + t.length, 0);
const nowMs = t0 + 120_000;

function measure(name: string, rounds: number, fn: () => number): { name: string; podsPerSec: number } {
  fn(); // warm-up
  let best = Infinity;
  let sink = 0;
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint();
    sink += fn();
    const s = Number(process.hrtime.bigint() - start) / 1e9;
    best = Math.min(best, s);
  }
  if (sink === -1) console.log(sink); // keep results alive
  return { name, podsPerSec: count / best };
}

const parsedPods = texts.map((t) => JSON.parse(t) as V1Pod);
const results = [
  measure('JSON.parse (floor)', 5, () => {
    let n = 0;
    for (const t of texts) n += (JSON.parse(t) as V1Pod).metadata ? 1 : 0;
    return n;
  }),
  measure('sandboxReady', 5, () => {
    let n = 0;
    for (const p of parsedPods) n += sandboxReady(p, nowMs).status === 'True' ? 1 : 0;
    return n;
  }),
  measure('explainPod', 5, () => {
    let n = 0;
    for (let i = 0; i < count; i++) n += explainPod(parsedPods[i]!, fixtures[i]!.events, nowMs).sentence.length;
    return n;
  }),
  measure('sandboxReady + explainPod', 5, () => {
    let n = 0;
    for (let i = 0; i < count; i++) {
      const p = parsedPods[i]!;
      n += sandboxReady(p, nowMs).status === 'True' ? 1 : 0;
      n += explainPod(p, fixtures[i]!.events, nowMs).sentence.length;
    }
    return n;
  }),
];

const causes = new Map<string, number>();
for (let i = 0; i < count; i++) {
  const c = explainPod(parsedPods[i]!, fixtures[i]!.events, nowMs).cause;
  causes.set(c, (causes.get(c) ?? 0) + 1);
}

const floor = results[0]!.podsPerSec;
console.log(`pod-conditions bench: ${count} pods, ${(bytes / count).toFixed(0)} bytes of JSON each, node ${process.version}; ${loadAverage()}`);
console.log(`causes: ${[...causes].map(([c, n]) => `${c} ${n}`).join(', ')}`);
console.log('');
console.log(`${'what'.padEnd(28)} ${'pods/s'.padStart(12)} ${'vs JSON.parse'.padStart(14)}`);
for (const r of results) {
  console.log(`${r.name.padEnd(28)} ${Math.round(r.podsPerSec).toLocaleString('en-US').padStart(12)} ${`${(r.podsPerSec / floor).toFixed(2)}x`.padStart(14)}`);
}
const both = results.at(-1)!;
judge({
  target: 'sandboxReady + explainPod pods/s',
  figure: `${Math.round(both.podsPerSec).toLocaleString('en-US')} pods/s`,
  floor: `JSON.parse ${Math.round(floor).toLocaleString('en-US')} pods/s`,
  ratio: times(both.podsPerSec / floor),
});
