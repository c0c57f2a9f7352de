/**
 * Network conditions (opt-in): for pods annotated `podlife.dev/network-conditions: "true"`, keep
 * `network.podlife.dev/IPv4Ready` and `network.podlife.dev/IPv6Ready` on the pod.
 *
 * Guarantees:
 * - both families are always published, so a readiness gate on either is never left missing; a
 *   family the pod has no address of is False with reason `NoAddressOfFamily` (a dual-stack pod
 *   that is only half up, or a single-stack pod asked about the other family);
 * - the status follows `networkReady(pod, family)`: the sandbox condition when the kubelet writes
 *   it, otherwise the inference documented there (source shown in the message);
 * - any other annotation value means "off"; pods without the annotation are never written.
 */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { ConditionInput, Controller, Manager } from '@podlife/core';
import { networkReady } from './sandbox.js';
import type { IpFamily } from './sandbox.js';
import { podConditionsController } from './pod-controller.js';
import type { PodConditionsSpec } from './pod-controller.js';

/** The annotation that opts a pod into network conditions (value `"true"`). */
export const networkConditionsAnnotation = 'podlife.dev/network-conditions';

/** The per-family network conditions written on opted-in pods. */
export const NetworkConditionType = {
  IPv4Ready: 'network.podlife.dev/IPv4Ready',
  IPv6Ready: 'network.podlife.dev/IPv6Ready',
} as const;

export function wantsNetworkConditions(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[networkConditionsAnnotation] === 'true';
}

/** The two conditions the pod should carry now. */
export function networkConditions(pod: V1Pod): ConditionInput<V1PodCondition>[] {
  return (['IPv4', 'IPv6'] as const satisfies readonly IpFamily[]).map((family) => {
    const r = networkReady(pod, family);
    return {
      type: NetworkConditionType[`${family}Ready`],
      status: r.status,
      reason: r.reason,
      message: r.source === 'inferred' ? `${r.message} (inferred: the cluster reports no sandbox condition)` : r.message,
    };
  });
}

/** Scope and concurrency of the network conditions controller. */
export interface NetworkConditionsOptions {
  /** Watch one namespace only; default all. */
  namespace?: string;
  concurrency?: number;
}

/**
 * The network conditions module as a controller on `manager` (added to it, returned for tests).
 * Named `network-conditions`, or `network-conditions/<namespace>` when scoped, so one per
 * namespace can share a manager.
 */
export function networkConditionsController(manager: Manager, opts: NetworkConditionsOptions = {}): Controller {
  return podConditionsController(manager, networkConditionsSpec(opts));
}

/** What the network conditions controller selects, computes and is named (for tests, with syncPodConditions). */
export function networkConditionsSpec(opts: NetworkConditionsOptions = {}): PodConditionsSpec {
  return {
    name: opts.namespace ? `network-conditions/${opts.namespace}` : 'network-conditions',
    select: wantsNetworkConditions,
    compute: (pod) => ({ conditions: networkConditions(pod) }),
    ...opts,
  };
}
