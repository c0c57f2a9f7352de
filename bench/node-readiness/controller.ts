// The controller under measurement, in its own process so its RSS is its own.
// argv: <kubeconfig> <podlife|naive> <label selector>. Prints a JSON stats line every 250 ms.
// With BENCH_TRACE=<file>, records per node when the releasing watch event arrived, when the
// node's key was next handed to a worker, and when its PATCH was sent and answered, and writes
// them (wall-clock ms) to that file on SIGTERM, so the bench can split the latency into stages.
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { Informer, KubeClient, Manager, resourcePath } from '@podlife/core';
import type { RequestOptions } from '@podlife/core';
import { CompletedAnnotation, nodeReadinessController, slimNode } from '@podlife/node-readiness';

const [kubeconfig, mode, selector] = process.argv.slice(2);
const KEY = 'readiness.k8s.io/BenchReady';
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig ?? '');
const client = await KubeClient.fromKubeConfig(kc);

/** Per node: [event arrived, dequeued, patch sent, patch answered], wall-clock ms. */
const trace = new Map<string, [number, number, number, number]>();
const wall = (): number => performance.timeOrigin + performance.now();
const nodePrefix = '/api/v1/nodes/';
const PODS_MODE = process.env.BENCH_PODS === '1';

// Count every non-watch request the controller makes, and apart those about a node (not the
// rule's status and finalizer writes, nor Events).
const requests: Record<string, number> = {};
let nodeRequests = 0;
/** Bytes of rule status the controller wrote (NRC's users report its per-node rule status as its scaling limit). */
let statusBytes = 0;
const request = client.request.bind(client);
client.request = (async <T>(opts: RequestOptions): Promise<T> => {
  requests[opts.method ?? 'GET'] = (requests[opts.method ?? 'GET'] ?? 0) + 1;
  if (opts.path.includes('/nodereadinessrules/') && opts.path.endsWith('/status')) statusBytes += JSON.stringify(opts.body ?? null).length;
  if (opts.path.startsWith(nodePrefix)) nodeRequests++;
  const nodeWrite = (opts.method === 'PATCH' || opts.method === 'PUT') && opts.path.startsWith(nodePrefix);
  // BENCH_PODS: the release follows a pod's Ready (traced from the pod cache's watch below); the node's last write is its release.
  if (nodeWrite && PODS_MODE && !trace.has(opts.path.slice(nodePrefix.length))) trace.set(opts.path.slice(nodePrefix.length), [0, 0, 0, 0]);
  const t = nodeWrite ? trace.get(opts.path.slice(nodePrefix.length)) : undefined;
  if (t && (t[2] === 0 || PODS_MODE)) t[2] = wall();
  try {
    return await request<T>(opts);
  } finally {
    if (t && (t[3] === 0 || PODS_MODE)) t[3] = wall();
  }
}) as typeof client.request;

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const stats = (): void => {
  // peakRss: the process's high-water mark (getrusage's maxrss, in KiB), not the last sample.
  process.stdout.write(`${JSON.stringify({ rss: process.memoryUsage().rss, peakRss: process.resourceUsage().maxRSS * 1024, requests, nodeRequests, statusBytes, loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 })}\n`);
};
setInterval(stats, 250).unref();

const released = (n: V1Node): boolean =>
  (n.status?.conditions ?? []).some((c) => c.type === 'BenchReady' && c.status === 'True') && (n.spec?.taints ?? []).some((t) => t.key === KEY);
const traceArrival = (n: V1Node): void => {
  const name = n.metadata?.name ?? '';
  if (released(n) && !trace.has(name)) trace.set(name, [wall(), 0, 0, 0]);
};

if (mode === 'podlife') {
  const manager = new Manager({ client });
  const { nodes, fleet } = nodeReadinessController(manager, { statusResyncMs: 5_000 });
  // The controller's own informer (the manager shares an informer only for the same path, selectors
  // and transform): its listeners run in the same emit, and no second watch or cache is added.
  manager.informer<V1Node>({ path: '/api/v1/nodes', transform: slimNode, name: 'nodes' }).on('update', traceArrival);
  const queue = nodes.queue;
  const get = queue.get.bind(queue);
  queue.get = async () => {
    const key = await get();
    const t = key === undefined ? undefined : trace.get(key);
    if (t && t[1] === 0) t[1] = wall();
    return key;
  };
  await manager.start();
  if (PODS_MODE) {
    // The pod cache's informers start with the rule; its watch events mark when a pod's Ready reached the controller.
    const cache = fleet.evaluateOptions.pods as unknown as { watched: Map<string, { pods: Informer<V1Pod> }> };
    const hook = setInterval(() => {
      for (const w of cache.watched.values()) {
        clearInterval(hook);
        w.pods.on('update', (p) => {
          const name = p.spec?.nodeName ?? '';
          const ready = p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
          const t = trace.get(name);
          if (ready && t && t[0] === 0) {
            t[0] = wall();
            t[1] = 0;
          }
          else if (ready && !t) trace.set(name, [wall(), 0, 0, 0]);
        });
      }
    }, 50);
  }
} else {
  // The naive baseline: on every event for a node that can be released, GET it and PUT it back.
  const informer = new Informer<V1Node>({ client, path: '/api/v1/nodes', labelSelector: selector ?? '' });
  const busy = new Set<string>();
  const handle = async (n: V1Node): Promise<void> => {
    traceArrival(n);
    const name = n.metadata?.name ?? '';
    if (!released(n) || busy.has(name)) return;
    busy.add(name);
    const t = trace.get(name);
    if (t && t[1] === 0) t[1] = wall();
    try {
      const path = resourcePath({ version: 'v1', resource: 'nodes', name });
      const fresh = await client.get<V1Node>(path);
      fresh.spec = { ...fresh.spec, taints: (fresh.spec?.taints ?? []).filter((t) => t.key !== KEY) };
      fresh.metadata = { ...fresh.metadata, annotations: { ...fresh.metadata?.annotations, [CompletedAnnotation]: '{}' } };
      await client.replace(path, fresh);
    } catch {
      // a conflict: the next event retries
    } finally {
      busy.delete(name);
    }
  };
  informer.on('add', (n) => void handle(n));
  informer.on('update', (n) => void handle(n));
  informer.start();
  await informer.waitForSync();
}

process.on('SIGTERM', () => {
  stats();
  const file = process.env.BENCH_TRACE;
  if (file) writeFileSync(file, JSON.stringify(Object.fromEntries(trace)));
  // exit() (not the default signal death) so --cpu-prof gets to write its profile.
  process.exit(0);
});
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
