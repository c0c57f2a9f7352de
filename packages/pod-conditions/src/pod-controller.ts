/**
 * The runtime shared by ReadinessGate and the network conditions module: a core Controller over
 * the manager's shared pods informer that keeps computed conditions on the pods it selects.
 *
 * Guarantees: level-based (the pod is read from the cache at reconcile time, never from the event);
 * only selected pods are enqueued; pods being deleted or finished are left alone; the computed
 * conditions are written together with setPodConditions, in one patch (no call when unchanged,
 * merged by type, conflicts retried), so readers never see half of a computed set;
 * a failing compute or write is retried by the controller with per-key backoff.
 */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { Controller, objectKey, stripManagedFields } from '@podlife/core';
import type { ConditionInput, Manager } from '@podlife/core';
import { setPodConditions } from './set-condition.js';
import type { PodStatusClient } from './set-condition.js';

/** The conditions computed for a pod, and when to compute them again. */
export interface Computed {
  conditions: ConditionInput<V1PodCondition>[];
  /** Compute again after this long (outside state the pod does not reflect). */
  requeueAfterMs?: number;
}

export interface PodConditionsSpec {
  name: string;
  select(pod: V1Pod): boolean;
  compute(pod: V1Pod, signal: AbortSignal): Computed | Promise<Computed>;
  /** Watch one namespace only; default all. */
  namespace?: string;
  concurrency?: number;
  now?: () => number;
}

export function podsPath(namespace?: string): string {
  return namespace ? `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods` : '/api/v1/pods';
}

/** Computes and writes the conditions for one pod; what a reconcile does once it has the pod. */
export async function syncPodConditions(client: PodStatusClient, spec: PodConditionsSpec, pod: V1Pod, signal: AbortSignal): Promise<Computed | undefined> {
  if (!spec.select(pod) || pod.metadata?.deletionTimestamp) return undefined;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const computed = await spec.compute(pod, signal);
  await setPodConditions(client, pod, computed.conditions, { nowMs: (spec.now ?? Date.now)(), signal });
  return computed;
}

export function podConditionsController(manager: Manager, spec: PodConditionsSpec): Controller {
  const informer = manager.informer<V1Pod>({ path: podsPath(spec.namespace), transform: stripManagedFields });
  const controller = new Controller({
    name: spec.name,
    concurrency: spec.concurrency ?? 4,
    reconciler: {
      async reconcile(key, signal) {
        const pod = informer.store.get(key);
        if (!pod) return;
        const computed = await syncPodConditions(manager.client, spec, pod, signal);
        return computed?.requeueAfterMs !== undefined ? { requeueAfterMs: computed.requeueAfterMs } : undefined;
      },
    },
  });
  controller.watch(informer, (pod) => (spec.select(pod) ? [objectKey(pod)] : []));
  manager.add(controller);
  return controller;
}
