// What one taint removal costs the API server, by the form of the write.
//
//   pnpm exec tsx --conditions=@podlife/source bench/node-readiness/write-cost.ts [--nodes 1500] [--rounds 6]
//
// The node-readiness benchmark at 250 flips/s keeps a 2-CPU machine busy, and the API server uses
// most of it (ADR 0237). This one asks whether the controller could make its own write cheaper for
// the API server. It registers N nodes carrying the bench's taint and ownership annotation, then
// removes both from every node, once per variant and round, and counts the API server's CPU time
// (/proc) per write. Variants: the controller's JSON patch (resourceVersion test, taints replaced,
// annotation removed) or the same change as a strategic merge patch with the resourceVersion as
// precondition; a client certificate or a service-account token (as a controller in a cluster
// authenticates); the whole node in the answer or its metadata only (PartialObjectMetadata).
// Variants alternate within each round, so drift in the API server (heap, etcd size) falls on all.
import type { V1Node } from '@kubernetes/client-node';
import { ContentType, KubeClient, resourcePath } from '@podlife/core';
import { startControlPlane } from '@podlife/testbed';
import { USER_HZ, processName, processTicks } from '../cpu.js';
import { judge, loadAverage, percentile, pool } from '../verdict.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('nodes', 1500);
const ROUNDS = arg('rounds', 6);
/** Writes in flight at once, as the controller's workers would keep them. */
const CONCURRENCY = 16;
const KEY = 'readiness.k8s.io/BenchReady';
const OWNERS = 'readiness.k8s.io/managed-taints';
const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const nodesPath = resourcePath({ version: 'v1', resource: 'nodes' });

interface Variant {
  label: string;
  client: KubeClient;
  contentType: string;
  body: (resourceVersion: string) => unknown;
  accept?: string;
  /** API server CPU ms per write, one figure per round. */
  costs: number[];
}

const jsonPatch = (resourceVersion: string): unknown => [
  { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion },
  { op: 'replace', path: '/spec/taints', value: [] },
  { op: 'remove', path: `/metadata/annotations/${OWNERS.replace('/', '~1')}` },
];
// spec.taints has no patch strategy, so a strategic merge replaces the list as the JSON patch does.
const strategicPatch = (resourceVersion: string): unknown => ({ metadata: { resourceVersion, annotations: { [OWNERS]: null } }, spec: { taints: [] } });

const median = (xs: readonly number[]): number => percentile([...xs].sort((a, b) => a - b), 50);

const cp = await startControlPlane();
try {
  const admin = cp.client;
  const apiServer = cp.pids().find((pid) => processName(pid) === 'kube-apiserver');
  if (apiServer === undefined || processTicks(apiServer) === undefined) throw new Error('write-cost: cannot read the API server process in /proc (Linux only)');

  // A service account bound to cluster-admin, and a client that authenticates with its token.
  await admin.create('/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'write-cost' } });
  await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    metadata: { name: 'write-cost' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'write-cost', namespace: 'default' }],
  });
  const token = await admin.create<{ status: { token: string } }>('/api/v1/namespaces/default/serviceaccounts/write-cost/token', { spec: { expirationSeconds: 3600 } });
  const withToken = KubeClient.fromConnection({ server: cp.server, ca: cp.caPem, token: token.status.token });

  const variants: Variant[] = [
    { label: 'JSON patch (the controller), certificate, whole node answered', client: admin, contentType: ContentType.JsonPatch, body: jsonPatch, costs: [] },
    { label: 'JSON patch, certificate, metadata answered', client: admin, contentType: ContentType.JsonPatch, body: jsonPatch, accept: METADATA_ONLY, costs: [] },
    { label: 'JSON patch, service-account token, whole node answered', client: withToken, contentType: ContentType.JsonPatch, body: jsonPatch, costs: [] },
    { label: 'strategic merge patch, certificate, whole node answered', client: admin, contentType: ContentType.StrategicMergePatch, body: strategicPatch, costs: [] },
    { label: 'strategic merge patch, token, metadata answered', client: withToken, contentType: ContentType.StrategicMergePatch, body: strategicPatch, accept: METADATA_ONLY, costs: [] },
  ];

  console.log(`API server CPU per taint removal: ${N} nodes, ${ROUNDS} rounds of ${variants.length} variants, ${CONCURRENCY} writes in flight; ${loadAverage()}`);
  const names = Array.from({ length: N }, (_, i) => `wc-${i}`);
  const resourceVersions = new Map<string, string>();
  const tainted = { metadata: { annotations: { [OWNERS]: `${KEY}:NoSchedule=bench` } }, spec: { taints: [{ key: KEY, effect: 'NoSchedule' }] } };
  await pool(names, 32, async (name) => {
    const node = await admin.create<V1Node>(nodesPath, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { pool: 'write-cost' }, ...tainted.metadata }, spec: tainted.spec });
    resourceVersions.set(name, node.metadata?.resourceVersion ?? '');
  });

  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      if (round > 0 || v !== variants[0]) {
        // Taint and annotation back on every node (not counted).
        await pool(names, 32, async (name) => {
          const node = await admin.patch<V1Node>(`${nodesPath}/${name}`, tainted, ContentType.MergePatch);
          resourceVersions.set(name, node.metadata?.resourceVersion ?? '');
        });
      }
      await new Promise((r) => setTimeout(r, 1000)); // let the restore's watch events and GC settle
      const before = processTicks(apiServer) ?? NaN;
      await pool(names, CONCURRENCY, async (name) => {
        await v.client.request({ method: 'PATCH', path: `${nodesPath}/${name}`, body: v.body(resourceVersions.get(name) ?? ''), contentType: v.contentType, ...(v.accept ? { accept: v.accept } : {}) });
      });
      const after = processTicks(apiServer) ?? NaN;
      v.costs.push(((after - before) * 1000) / USER_HZ / N);
    }
  }

  // Each variant against the controller's write in the same round, then the median of those ratios:
  // the rounds drift more than the variants differ.
  const reference = variants[0]!.costs;
  for (const v of variants) {
    const spread = [...v.costs].sort((a, b) => a - b).map((c) => c.toFixed(2)).join(' ');
    const ratios = v.costs.map((c, i) => c / (reference[i] as number));
    judge({
      target: `API server CPU per taint removal: ${v.label}`,
      figure: `median ${median(v.costs).toFixed(2)} ms (rounds ${spread})`,
      ...(v === variants[0]
        ? {}
        : { floor: `the controller's write ${median(reference).toFixed(2)} ms`, ratio: `${median(ratios).toFixed(2)}x`, note: `median of ${ROUNDS} per-round ratios, ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x` }),
    });
  }
  withToken.close();
} finally {
  await cp.stop();
}
