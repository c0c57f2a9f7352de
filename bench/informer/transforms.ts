/**
 * The cache transforms the informer benchmark compares.
 *
 * `lifecycleView` keeps what a pod lifecycle controller reads and nothing else: identity,
 * annotations, deletion and owners; container and init container names with their restart
 * policies, grace period and readiness gates; phase, conditions, container states and pod IPs.
 * It builds new objects (never mutates its input) and keeps references to the parsed leaves it
 * retains, so everything it drops becomes garbage at once.
 */
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { stripManagedFields } from '@podlife/core';

function names(containers: V1Container[] | undefined): V1Container[] | undefined {
  return containers?.map((c) => (c.restartPolicy === undefined ? { name: c.name } : { name: c.name, restartPolicy: c.restartPolicy }));
}

function states(statuses: V1ContainerStatus[] | undefined): V1ContainerStatus[] | undefined {
  return statuses?.map((s) => ({
    name: s.name,
    ready: s.ready,
    restartCount: s.restartCount,
    started: s.started,
    state: s.state,
    lastState: s.lastState,
    // Required by the type, never read by the lifecycle rules.
    image: '',
    imageID: '',
  }));
}

export function lifecycleView(pod: V1Pod): V1Pod {
  const m = pod.metadata;
  const spec = pod.spec;
  const st = pod.status;
  return {
    metadata: m && {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      annotations: m.annotations,
      deletionTimestamp: m.deletionTimestamp,
      ownerReferences: m.ownerReferences,
    },
    spec: spec && {
      containers: names(spec.containers) ?? [],
      initContainers: names(spec.initContainers),
      restartPolicy: spec.restartPolicy,
      terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds,
      readinessGates: spec.readinessGates,
    },
    status: st && {
      phase: st.phase,
      conditions: st.conditions,
      containerStatuses: states(st.containerStatuses),
      initContainerStatuses: states(st.initContainerStatuses),
      podIP: st.podIP,
      podIPs: st.podIPs,
    },
  };
}

export type TransformName = 'none' | 'stripManagedFields' | 'lifecycleView';

export const TRANSFORMS: Record<TransformName, ((pod: V1Pod) => V1Pod) | undefined> = {
  none: undefined,
  stripManagedFields,
  lifecycleView,
};
