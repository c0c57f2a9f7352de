// Webhook /mutate-pods over TLS on loopback, at a fixed request rate, beside a baseline: an empty
// route on the same server stack (TLS, body limit, timeout, JSON answer). The difference is what
// the AdmissionReview handling costs. Target (DESIGN 10): p99 < 5 ms at 500 requests/s.
//
//   pnpm exec tsx --conditions=@podlife/source bench/webhook/run.ts [--rate 500] [--seconds 10]
import { spawn } from 'node:child_process';
import os from 'node:os';
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Node } from '@kubernetes/client-node';
import { WebhookServer, devCertificates, mutatePodsHandler } from '@podlife/controller';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const RATE = arg('rate', 500);
const SECONDS = arg('seconds', 10);

// A cluster of 100 nodes, all new enough: every review converts the sidecar (the expensive path).
const nodes: V1Node[] = Array.from({ length: 100 }, (_, i) => ({ status: { nodeInfo: { kubeletVersion: `v1.${29 + (i % 4)}.${i % 7}` } as never } }));

const review = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    namespace: 'jobs',
    userInfo: { username: 'system:serviceaccount:kube-system:job-controller' },
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: 'report-',
        namespace: 'jobs',
        labels: { 'podlife.dev/admission': 'enabled', 'job-name': 'report', 'controller-uid': 'f0e1d2c3' },
        annotations: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'preset:envoy' },
      },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 30,
        containers: [
          { name: 'app', image: 'report:2.1', args: ['--from', 'yesterday'], env: Array.from({ length: 10 }, (_, i) => ({ name: `VAR_${i}`, value: `value-${i}` })), resources: { requests: { cpu: '500m', memory: '256Mi' } } },
          { name: 'proxy', image: 'envoy:1.30', ports: [{ containerPort: 9901 }], resources: { requests: { cpu: '50m', memory: '64Mi' } } },
        ],
      },
    },
  },
});

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function load(port: number, ca: string, path: string): Promise<{ p50: number; p99: number; max: number; errors: number; n: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 32, ca });
  const latencies: number[] = [];
  let errors = 0;
  const send = (): Promise<void> =>
    new Promise((resolve) => {
      const started = performance.now();
      const req = https.request(
        { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(review) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - started);
            else errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(review);
    });
  // Warm up connections and JIT, then send open-loop at a fixed rate (a slow answer does not slow the sender).
  await Promise.all(Array.from({ length: 200 }, send));
  latencies.length = 0;
  const total = RATE * SECONDS;
  const inflight: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(send());
  }
  await Promise.all(inflight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1) ?? NaN, errors, n: latencies.length };
}

async function serve(): Promise<void> {
  const certs = await devCertificates(['127.0.0.1']);
  const dir = mkdtempSync(join(tmpdir(), 'podlife-bench-webhook-'));
  writeFileSync(join(dir, 'tls.crt'), certs.certPem);
  writeFileSync(join(dir, 'tls.key'), certs.keyPem);
  const server = new WebhookServer({
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    port: 0,
    host: '127.0.0.1',
    routes: { '/mutate-pods': mutatePodsHandler(() => nodes), '/empty': () => ({ status: 200, body: {} }) },
  });
  await server.start();
  process.stdout.write(`${JSON.stringify({ port: server.port, ca: certs.caPem })}\n`);
  // Runs until the parent closes stdin.
  process.stdin.resume();
  process.stdin.on('end', () => {
    void server.stop().then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

if (process.argv.includes('--serve')) {
  await serve();
} else {
  // The server runs in its own process, as in a cluster: the load generator must not share its event loop.
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())));
  const { port, ca } = JSON.parse(first) as { port: number; ca: string };
  try {
    console.log(`webhook over TLS on loopback (server in its own process), ${RATE} requests/s for ${SECONDS} s each, review ${review.length} bytes; load average ${os.loadavg()[0]?.toFixed(1)} on ${os.cpus().length} CPUs`);
    const fmt = (r: Awaited<ReturnType<typeof load>>) =>
      `p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  max ${r.max.toFixed(2)} ms  (${r.n} ok, ${r.errors} errors)`;
    const baseline = await load(port, ca, '/empty');
    console.log(`  baseline: empty route, same stack   ${fmt(baseline)}`);
    const mutate = await load(port, ca, '/mutate-pods');
    console.log(`  /mutate-pods (native conversion)   ${fmt(mutate)}`);
    console.log(`  handler cost at p50: ${(mutate.p50 - baseline.p50).toFixed(2)} ms; target p99 < 5 ms: ${mutate.p99 < 5 ? 'met' : 'NOT met'}`);
  } finally {
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
  }
}
