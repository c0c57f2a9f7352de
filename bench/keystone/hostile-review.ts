/**
 * A hostile AdmissionReview and a hostile stored pod (issue: quadratic validation, unbounded
 * output), measured by hand:
 *
 *   tsx bench/keystone/hostile-review.ts [--containers 8000] [--stored 5000]
 *
 * 1. `/mutate-pods` with a pod of N containers and N `role.podlife.dev/x<i>` annotations naming
 *    absent containers: handler time (the event loop is blocked for all of it), response size,
 *    peak RSS of this process;
 * 2. `evaluatePod` on a stored pod of M containers with as many bad annotations: time and the
 *    size of the decision as JSON.
 * Not part of `pnpm bench` (no ratio to a floor: the bound is absolute, a few ms and KiB).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { mutatePodsHandler } from '@podlife/controller';
import { evaluatePod } from '@podlife/keystone';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

function hostilePod(n: number): V1Pod {
  const annotations: Record<string, string> = {};
  const containers = [];
  for (let i = 0; i < n; i++) {
    containers.push({ name: `c${i}`, image: 'i' });
    annotations[`role.podlife.dev/x${i}`] = 'sidecar';
  }
  return { metadata: { name: 'hostile', namespace: 'default', annotations }, spec: { restartPolicy: 'Never', containers } };
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const n = arg('containers', 8000);
const m = arg('stored', 5000);

const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: hostilePod(n) } };
const body = Buffer.from(JSON.stringify(review));
const handler = mutatePodsHandler(() => []);
const rssBefore = process.memoryUsage().rss;
let t = performance.now();
const answer = await handler(body, new AbortController().signal);
const handlerMs = performance.now() - t;
const responseBytes = Buffer.byteLength(JSON.stringify(answer.body));
const peakRss = process.resourceUsage().maxRSS * 1024;
console.log(`review: ${n} containers, body ${(body.length / 1024).toFixed(0)} KiB`);
console.log(`  handler ${handlerMs.toFixed(1)} ms, status ${answer.status}, response ${(responseBytes / 1024).toFixed(1)} KiB, RSS ${mib(rssBefore)} -> peak ${mib(peakRss)} MiB`);

const stored = hostilePod(m);
t = performance.now();
const decision = evaluatePod(stored, { nowMs: Date.now() });
const evalMs = performance.now() - t;
console.log(`stored pod: ${m} containers: evaluatePod ${evalMs.toFixed(1)} ms, decision ${decision.action}, ${(Buffer.byteLength(JSON.stringify(decision)) / 1024).toFixed(1)} KiB as JSON`);
console.log(`peak RSS ${mib(process.resourceUsage().maxRSS * 1024)} MiB`);
