// The controller under measurement, in its own process so its RSS is its own.
// argv: <kubeconfig> <podlife|naive> <label selector>. Prints a JSON stats line every 250 ms.
import type { V1Node } from '@kubernetes/client-node';
import { KubeConfig } from '@kubernetes/client-node';
import { Informer, KubeClient, Manager, resourcePath } from '@podlife/core';
import type { RequestOptions } from '@podlife/core';
import { CompletedAnnotation, nodeReadinessController } from '@podlife/node-readiness';

const [kubeconfig, mode, selector] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig ?? '');
const client = await KubeClient.fromKubeConfig(kc, { maxSockets: 32 });

// Count every non-watch request the controller makes.
const requests: Record<string, number> = {};
const request = client.request.bind(client);
client.request = (<T>(opts: RequestOptions): Promise<T> => {
  requests[opts.method ?? 'GET'] = (requests[opts.method ?? 'GET'] ?? 0) + 1;
  return request<T>(opts);
}) as typeof client.request;

const stats = (): void => {
  process.stdout.write(`${JSON.stringify({ rss: process.memoryUsage().rss, requests })}\n`);
};
setInterval(stats, 250).unref();

if (mode === 'podlife') {
  const manager = new Manager({ client });
  nodeReadinessController(manager, { statusResyncMs: 5_000 });
  await manager.start();
} else {
  // The naive baseline: on every event for a node that can be released, GET it and PUT it back.
  const informer = new Informer<V1Node>({ client, path: '/api/v1/nodes', labelSelector: selector ?? '' });
  const key = 'readiness.k8s.io/BenchReady';
  const busy = new Set<string>();
  const handle = async (n: V1Node): Promise<void> => {
    const name = n.metadata?.name ?? '';
    const ready = n.status?.conditions?.some((c) => c.type === 'BenchReady' && c.status === 'True');
    if (!ready || !(n.spec?.taints ?? []).some((t) => t.key === key) || busy.has(name)) return;
    busy.add(name);
    try {
      const path = resourcePath({ version: 'v1', resource: 'nodes', name });
      const fresh = await client.get<V1Node>(path);
      fresh.spec = { ...fresh.spec, taints: (fresh.spec?.taints ?? []).filter((t) => t.key !== key) };
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
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
