// Node readiness at scale: condition True -> taint removed, against a real API server.
//
//   pnpm exec tsx --conditions=@podlife/source bench/node-readiness/run.ts [--nodes 5000] [--rate 250]
//
// Registers N simulated nodes carrying readiness.k8s.io/BenchReady, starts the controller in its
// own process, then turns BenchReady True on every node at --rate per second and watches for each
// taint to disappear. Reports p50/p99 latency, API requests per node and controller RSS, next to
// two baselines measured in the same run: the raw PATCH round trip (the floor) and a naive
// GET-then-PUT reconciler on a fresh set of nodes.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { V1Node } from '@kubernetes/client-node';
import { ContentType, Informer, resourcePath } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { nodeReadinessRule, nodeReadinessRuleCrd, rulePath } from '@podlife/node-readiness';
import { startControlPlane } from '../../test/support/control-plane.js';
import { waitFor } from '../../test/support/wait.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('nodes', 5000);
const RATE = arg('rate', 250);
const KEY = 'readiness.k8s.io/BenchReady';
const nodesPath = resourcePath({ version: 'v1', resource: 'nodes' });

interface Stats {
  rss: number;
  requests: Record<string, number>;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function pool<T>(items: T[], concurrency: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}

const condition = (status: string) => {
  const now = new Date().toISOString();
  return { status: { conditions: [{ type: 'BenchReady', status, reason: 'Bench', lastHeartbeatTime: now, lastTransitionTime: now }] } };
};

async function registerNodes(client: KubeClient, prefix: string, pool_: string): Promise<string[]> {
  const names = Array.from({ length: N }, (_, i) => `${prefix}-${i}`);
  await pool(names, 32, async (name) => {
    await client.create(nodesPath, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { pool: pool_ } }, spec: { taints: [{ key: KEY, effect: 'NoSchedule' }] } });
    await client.patch(`${nodesPath}/${name}/status`, condition('False'), ContentType.StrategicMergePatch);
  });
  return names;
}

function startController(kubeconfig: string, mode: string, selector: string): Promise<{ last: () => Stats; stop: () => void }> {
  const script = fileURLToPath(new URL('./controller.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', script, kubeconfig, mode, selector], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last: Stats = { rss: 0, requests: {} };
  let buf = '';
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`controller exited with ${code}`)));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = JSON.parse(buf.slice(0, nl)) as Stats & { ready?: boolean };
        buf = buf.slice(nl + 1);
        if (line.ready) resolve({ last: () => last, stop: () => child.kill('SIGTERM') });
        else last = line;
      }
    });
  });
}

/** Flips BenchReady True at RATE/s and times each taint's disappearance through a watch. */
async function measure(client: KubeClient, names: string[], selector: string): Promise<{ latencies: number[]; patchMs: number[] }> {
  const flippedAt = new Map<string, number>();
  const latencies: number[] = [];
  const patchMs: number[] = [];
  const watcher = new Informer<V1Node>({ client, path: nodesPath, labelSelector: selector });
  watcher.on('update', (n) => {
    const name = n.metadata?.name ?? '';
    const t = flippedAt.get(name);
    if (t !== undefined && !(n.spec?.taints ?? []).some((x) => x.key === KEY)) {
      latencies.push(performance.now() - t);
      flippedAt.delete(name);
    }
  });
  watcher.start();
  await watcher.waitForSync();
  const start = performance.now();
  await pool(names, 64, async (name) => {
    const i = names.indexOf(name);
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t = performance.now();
    flippedAt.set(name, t);
    await client.patch(`${nodesPath}/${name}/status`, condition('True'), ContentType.StrategicMergePatch);
    patchMs.push(performance.now() - t);
  });
  await waitFor(`all ${names.length} taints removed`, async () => latencies.length >= names.length, { timeoutMs: 120_000, intervalMs: 200 }).catch((e: Error) => console.error(e.message));
  await watcher.stop();
  return { latencies, patchMs };
}

function report(label: string, r: { latencies: number[]; patchMs: number[] }, s: Stats): void {
  const total = Object.values(s.requests).reduce((a, b) => a + b, 0);
  console.log(
    `${label.padEnd(28)} released ${String(r.latencies.length).padStart(5)}/${N}  p50 ${pct(r.latencies, 50).toFixed(1).padStart(7)} ms  p99 ${pct(r.latencies, 99).toFixed(1).padStart(7)} ms  ` +
      `requests/node ${(total / N).toFixed(2)} ${JSON.stringify(s.requests)}  controller RSS ${(s.rss / 2 ** 20).toFixed(0)} MiB`,
  );
}

const cp = await startControlPlane();
try {
  const client = cp.client;
  const crds = resourcePath({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  await client.create(crds, nodeReadinessRuleCrd);
  await waitFor('rules listable', async () => client.get(rulePath()).then(() => true, () => false));
  await client.create(rulePath(), nodeReadinessRule('bench', { conditions: [{ type: 'BenchReady' }], enforcementMode: 'bootstrap-only', taint: { key: KEY, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'podlife' } } }));

  console.log(`node readiness bench: ${N} nodes, conditions turned True at ${RATE}/s`);
  let t = performance.now();
  const podlifeNodes = await registerNodes(client, 'pl', 'podlife');
  console.log(`registered ${N} nodes in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const podlife = await startController(cp.kubeconfigPath, 'podlife', 'pool=podlife');
  // Adoption (recording ownership of the pre-existing taints) is one write per node; let it finish first.
  await waitFor('taints adopted', async () => (podlife.last().requests.PATCH ?? 0) >= N, { timeoutMs: 300_000, intervalMs: 250 });
  const adoptRequests = { ...podlife.last().requests };
  t = performance.now();
  const pl = await measure(client, podlifeNodes, 'pool=podlife');
  await new Promise((r) => setTimeout(r, 500));
  const plStats = podlife.last();
  podlife.stop();
  console.log(`adoption: ${JSON.stringify(adoptRequests)} requests before the measurement (ownership record, once per node)`);
  report('podlife (total)', pl, plStats);
  report('floor: raw status PATCH', { latencies: pl.patchMs, patchMs: [] }, { rss: 0, requests: {} });

  const naiveNodes = await registerNodes(client, 'nv', 'naive');
  const naive = await startController(cp.kubeconfigPath, 'naive', 'pool=naive');
  const nv = await measure(client, naiveNodes, 'pool=naive');
  await new Promise((r) => setTimeout(r, 500));
  const nvStats = naive.last();
  naive.stop();
  report('baseline: naive GET+PUT', nv, nvStats);
  console.log(`target (DESIGN.md 10): p99 < 1000 ms; the KEP's SLO is 10 s`);
} finally {
  await cp.stop();
}
