/**
 * evaluatePod throughput on 3-container pods (target >= 500k pods/s on one core), printed
 * beside two baselines measured in the same run: a trivial scan of containerStatuses and a
 * JSON deep copy of the pod.
 *
 *   tsc -b packages/keystone && node --import tsx bench/keystone/evaluate.ts
 *
 * Measures the built package (dist), as a controller runs it; with the `@podlife/source`
 * condition the numbers include the source transform's helpers and read lower.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { evaluatePod } from '@podlife/keystone';

const T0 = Date.parse('2024-05-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** Wire-shaped pods (timestamps as strings), distinct objects so no engine cache helps. */
function makePod(i: number, shape: 'running' | 'keystone-finished' | 'not-ours'): V1Pod {
  const names = ['app', 'worker', 'proxy'];
  const annotations: Record<string, string> =
    shape === 'not-ours'
      ? { 'kubectl.kubernetes.io/restartedAt': iso(T0) }
      : { 'role.podlife.dev/app': 'keystone', 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'preset:istio' };
  annotations['team'] = `t${i % 7}`;
  return JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `pod-${i}`, namespace: 'bench', uid: `uid-${i}`, resourceVersion: String(i), annotations, labels: { app: 'bench' } },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 30,
        containers: names.map((name) => ({ name, image: `${name}:1`, resources: { requests: { cpu: '10m' } } })),
      },
      status: {
        phase: 'Running',
        podIP: '10.0.0.1',
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: iso(T0) },
          { type: 'ContainersReady', status: 'True', lastTransitionTime: iso(T0) },
        ],
        containerStatuses: names.map((name) => ({
          name,
          ready: true,
          restartCount: 0,
          image: `${name}:1`,
          imageID: 'sha256:abc',
          state:
            shape === 'keystone-finished' && name === 'app'
              ? { terminated: { exitCode: 0, reason: 'Completed', finishedAt: iso(T0 + (i % 1000)) } }
              : { running: { startedAt: iso(T0 - 60_000) } },
        })),
      },
    }),
  ) as V1Pod;
}

function measure(label: string, pods: readonly V1Pod[], fn: (p: V1Pod) => unknown, ms = 1000): number {
  let sink = 0;
  for (let i = 0; i < 20_000; i++) if (fn(pods[i % pods.length] as V1Pod)) sink++; // warm-up
  let n = 0;
  const start = process.hrtime.bigint();
  const limit = BigInt(ms) * 1_000_000n;
  let elapsed = 0n;
  while (elapsed < limit) {
    for (let i = 0; i < 1000; i++, n++) if (fn(pods[n % pods.length] as V1Pod)) sink++;
    elapsed = process.hrtime.bigint() - start;
  }
  const perSec = (n / Number(elapsed)) * 1e9;
  console.log(`${label.padEnd(46)} ${Math.round(perSec).toLocaleString('en-US').padStart(12)} pods/s${sink < 0 ? ' ' : ''}`);
  return perSec;
}

const N = 1000;
const running = Array.from({ length: N }, (_, i) => makePod(i, 'running'));
const finished = Array.from({ length: N }, (_, i) => makePod(i, 'keystone-finished'));
const foreign = Array.from({ length: N }, (_, i) => makePod(i, 'not-ours'));
const nowMs = T0 + 5000;

console.log(`evaluatePod, 3-container pods (node ${process.version}, one core)\n`);
const scan = measure('baseline: scan containerStatuses for terminated', running, (p) => {
  const s = p.status?.containerStatuses ?? [];
  for (let i = 0; i < s.length; i++) if (s[i]?.state?.terminated) return true;
  return false;
});
const copy = measure('baseline: JSON.parse(JSON.stringify(pod))', running, (p) => JSON.parse(JSON.stringify(p)) !== null);
const results = [
  measure('evaluatePod: not ours', foreign, (p) => evaluatePod(p, { nowMs }).action === 'none'),
  measure('evaluatePod: keystone running (nothing to do)', running, (p) => evaluatePod(p, { nowMs }).action === 'none'),
  measure('evaluatePod: keystone finished (stop decision)', finished, (p) => evaluatePod(p, { nowMs }).action === 'stop'),
];
const worst = Math.min(...results);
console.log(`\nslowest evaluatePod case: ${Math.round(worst).toLocaleString('en-US')} pods/s — target 500,000: ${worst >= 500_000 ? 'met' : 'NOT met'}`);
console.log(`(relative to baselines: ${(worst / scan).toFixed(3)}x the status scan, ${(worst / copy).toFixed(1)}x a JSON deep copy)`);
