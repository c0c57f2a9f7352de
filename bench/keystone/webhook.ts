/**
 * The AdmissionReview handler alone (no TLS, no HTTP): the lifecycle route (`admissionRoute`:
 * decoding the body, as the server hands it over, and handleAdmissionReview) on a pod with a
 * sidecar to convert, beside a baseline of JSON.parse + JSON.stringify of the same review
 * (the floor any handler pays). Latency p50/p99 per call and throughput, with 100 and with 15,000
 * nodes in the cluster: the `auto` conversion asks about every node that may run the pod, and
 * that answer is kept per node list (docs/adr/0182), so the two should cost the same.
 * Then both again, each call after a 2 ms pause, as requests come at 500 a second: a call that
 * follows a pause costs several times a back-to-back one on a virtual machine, the floor's
 * JSON.parse as much as the handler, which is the handler time the server benchmark reports.
 * Last, the same on a review whose sidecar is a mesh proxy of a realistic size (arguments,
 * environment, mounts, a probe, a security context), with the size of the patch: the conversion
 * moves the container and never restates it (docs/adr/0251), so the patch does not grow with it.
 *
 *   tsc -b packages/keystone && node --import tsx bench/keystone/webhook.ts
 */
import type { V1Node } from '@kubernetes/client-node';
import { admissionRoute, handleAdmissionReview, lifecycleMutator, type WebhookAnswer } from '@podlife/keystone';
import { convertsSidecar } from '../conversion.js';
import { judge, loadAverage, percentile, times } from '../verdict.js';

const fleet = (n: number): V1Node[] => Array.from({ length: n }, (_, i) => ({ metadata: { name: `node-${i}` }, status: { nodeInfo: { kubeletVersion: `v1.${29 + (i % 3)}.1-gke.${i}` } as never } }));
const body = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    operation: 'CREATE',
    namespace: 'jobs',
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { generateName: 'job-', namespace: 'jobs', annotations: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'signal:TERM' } },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'app', image: 'app:1', args: ['--work'], env: [{ name: 'A', value: '1' }] },
          { name: 'proxy', image: 'proxy:1', ports: [{ containerPort: 15020 }] },
        ],
      },
    },
  },
});

/** The same review, but the sidecar is a mesh proxy as an injector leaves it. */
const meshProxy = {
  name: 'proxy',
  image: 'proxy:1.24.2',
  args: ['proxy', 'sidecar', '--domain', '$(POD_NAMESPACE).svc.cluster.local', '--proxyLogLevel=warning', '--proxyComponentLogLevel=misc:error', '--log_output_level=default:info'],
  env: Array.from({ length: 24 }, (_, i) => ({ name: `PROXY_META_${i}`, value: `value-number-${i}-of-some-length` })),
  ports: [{ containerPort: 15090, name: 'http-envoy-prom', protocol: 'TCP' }],
  readinessProbe: { httpGet: { path: '/healthz/ready', port: 15021, scheme: 'HTTP' }, initialDelaySeconds: 1, periodSeconds: 2, timeoutSeconds: 3, failureThreshold: 4 },
  resources: { limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '100m', memory: '128Mi' } },
  securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, privileged: false, readOnlyRootFilesystem: true, runAsGroup: 1337, runAsNonRoot: true, runAsUser: 1337 },
  volumeMounts: ['workload-socket', 'credential-socket', 'workload-certs', 'ca-cert', 'proxy-data', 'proxy-envoy', 'proxy-token', 'podinfo', 'kube-api-access'].map((n) => ({ name: n, mountPath: `/var/run/${n}` })),
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'IfNotPresent',
};
const meshBody = ((): string => {
  const review = JSON.parse(body) as { request: { object: { spec: { containers: unknown[] } } } };
  review.request.object.spec.containers[1] = meshProxy;
  return JSON.stringify(review);
})();

const pct = (samples: ArrayLike<number>, q: number): string => percentile(samples, q * 100).toFixed(1);

/** `fn` called `n` times, each after a `pauseMs` sleep: p50 and p99 per call, in µs. */
async function paced(label: string, fn: () => unknown, pauseMs = 2, n = 500): Promise<number> {
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, pauseMs));
    const t = process.hrtime.bigint();
    fn();
    samples[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  samples.sort();
  console.log(`${label.padEnd(44)} p50 ${pct(samples, 0.5).padStart(6)} µs  p99 ${pct(samples, 0.99).padStart(6)} µs`);
  return Number(pct(samples, 0.5));
}

function run(label: string, fn: () => unknown, n = 50_000): number {
  for (let i = 0; i < 5000; i++) fn();
  const samples = new Float64Array(n);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    fn();
    samples[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  const total = Number(process.hrtime.bigint() - start) / 1e9;
  samples.sort();
  console.log(`${label.padEnd(44)} p50 ${pct(samples, 0.5).padStart(6)} µs  p99 ${pct(samples, 0.99).padStart(6)} µs  ${Math.round(n / total).toLocaleString('en-US').padStart(9)} req/s`);
  return Number(pct(samples, 0.99));
}

console.log(`AdmissionReview handling, one core (node ${process.version}; ${loadAverage()})\n`);
const floor = run('baseline: JSON.parse + JSON.stringify', () => JSON.stringify(JSON.parse(body)));
let handler = NaN;
const never = new AbortController().signal;
/** The route as the server calls it: the body's bytes in, the answer out, stringified as the server writes it. */
const handle = (nodes: readonly V1Node[], review = body): (() => string) => {
  const route = admissionRoute({ mutate: lifecycleMutator(() => nodes) });
  const bytes = Buffer.from(review);
  return () => {
    const out = route(bytes, never) as WebhookAnswer;
    const answer = out.body as { response?: { patch?: string } };
    if (out.status !== 200 || !convertsSidecar(answer.response?.patch)) throw new Error('expected a patch that converts the sidecar');
    return JSON.stringify(answer);
  };
};
for (const size of [100, 15_000]) {
  const p99 = run(`route (decode + handle) + stringify, ${size.toLocaleString('en-US')} nodes`, handle(fleet(size)));
  handler = Number.isNaN(handler) ? p99 : Math.max(handler, p99);
}
console.log('\neach call after a 2 ms pause (500 requests/s), 100 nodes:');
const pausedFloor = await paced('baseline: JSON.parse + JSON.stringify', () => JSON.stringify(JSON.parse(body)));
const pausedHandler = await paced('route (decode + handle) + stringify', handle(fleet(100)));
console.log(`  after a pause: the handler ${times(pausedHandler / pausedFloor)} the floor at p50 (no target)`);
const meshPatch = handleAdmissionReview(JSON.parse(meshBody), { mutate: lifecycleMutator(() => fleet(100)) });
const meshPatchBytes = meshPatch.httpStatus === 200 ? (meshPatch.review.response.patch?.length ?? 0) : 0;
console.log(`\na mesh proxy as the sidecar: review ${meshBody.length.toLocaleString('en-US')} bytes (the one above: ${body.length.toLocaleString('en-US')}), patch ${meshPatchBytes} bytes of base64; 100 nodes:`);
run('baseline: JSON.parse + JSON.stringify', () => JSON.stringify(JSON.parse(meshBody)));
run('route (decode + handle) + stringify', handle(fleet(100), meshBody));
await paced('after a 2 ms pause: baseline', () => JSON.stringify(JSON.parse(meshBody)));
await paced('after a 2 ms pause: the handler', handle(fleet(100), meshBody));
judge({
  target: 'AdmissionReview handler alone, p99 per call, the larger of 100 and 15,000 nodes (feeds the webhook target)',
  figure: `p99 ${handler.toFixed(1)} µs`,
  floor: `JSON.parse + JSON.stringify p99 ${floor.toFixed(1)} µs`,
  ratio: times(handler / floor),
});
