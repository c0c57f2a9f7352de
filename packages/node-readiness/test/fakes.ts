import type { V1Node } from '@kubernetes/client-node';
import { ApiError, Store } from '@podlife/core';
import type { EventRecorderLike, KubeClient, KubeObject } from '@podlife/core';
import { Registry } from 'prom-client';
import sinon from 'sinon';
import { nodeReadinessMetrics } from '../src/index.js';
import type { ClusterGuardrails, NodeReadinessRule } from '../src/index.js';
import { Fleet, type CacheView } from '../src/fleet.js';

export function cache<T extends KubeObject>(objects: T[], synced = true): CacheView<T> & { store: Store<T>; synced: boolean } {
  const store = Store.of(objects);
  const view = { store, synced, get: (k: string) => store.get(k), list: () => store.list(), hasSynced: () => view.synced };
  return view;
}

export interface Rig {
  fleet: Fleet;
  nodes: ReturnType<typeof cache<V1Node>>;
  rules: ReturnType<typeof cache<NodeReadinessRule>>;
  patch: sinon.SinonStub;
  client: KubeClient;
  events: EventRecorderLike & { list: { type: string; reason: string; note: string; on: string }[] };
  metrics: ReturnType<typeof nodeReadinessMetrics>;
  registry: Registry;
  clock: { now: number };
}

export function rig(nodes: V1Node[], rules: NodeReadinessRule[], nowMs: number, synced = true, cluster: ClusterGuardrails = {}): Rig {
  const clock = { now: nowMs };
  const nodeCache = cache(nodes, synced);
  const ruleCache = cache(rules, synced);
  const patch = sinon.stub().resolves({});
  const list: Rig['events']['list'] = [];
  const events = {
    list,
    event: async (regarding: KubeObject, type: string, reason: string, note: string) => {
      list.push({ type, reason, note, on: regarding.metadata?.name ?? '' });
    },
  };
  const registry = new Registry();
  return {
    fleet: new Fleet(nodeCache, ruleCache, {}, () => clock.now, cluster),
    nodes: nodeCache,
    rules: ruleCache,
    patch,
    client: { patch } as unknown as KubeClient,
    events,
    metrics: nodeReadinessMetrics(registry),
    registry,
    clock,
  };
}

export const apiError = (status: number, reason: string, message = reason): ApiError => new ApiError(status, reason, message, undefined);

export async function metricValue(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = (m?.values as { value: number; labels: Record<string, string>; metricName?: string }[] | undefined)?.find(
    (x) => Object.entries(labels).every(([k, val]) => x.labels[k] === val) && (x.metricName === undefined || !x.metricName.endsWith('_bucket')),
  );
  return v?.value ?? 0;
}
