/**
 * The cache transforms the informer benchmark compares.
 *
 * `lifecycleView` keeps what podlife's lifecycle controllers read and nothing else: identity,
 * the lifecycle annotations (podlife's domains and the KEP-2872 alias) and deletion; container and
 * init container names with their restart policies, grace period and readiness gates; phase,
 * conditions, container states and pod IPs. It leaves out what none of them reads and the API
 * sends anyway: other annotations, owner references (keystone's own cache drops them too), the
 * container ids of terminated states, a `lastState` with nothing in it (a container that never
 * restarted), and `podIPs` when it only repeats `podIP` (single-stack). It builds new objects (never mutates its input) and keeps references
 * to the parsed leaves it retains, so everything it drops becomes garbage at once.
 */
import type { V1Container, V1ContainerState, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { stripManagedFields } from '@podlife/core';

const lifecycleKey = /(^|\.)podlife\.dev\/|^sidecars\.alpha\.kubernetes\.io\//;

function lifecycleAnnotations(annotations: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!annotations) return undefined;
  let out: Record<string, string> | undefined;
  for (const key in annotations) {
    if (!lifecycleKey.test(key)) continue;
    out ??= {};
    out[key] = annotations[key] as string;
  }
  return out;
}

function names(containers: V1Container[] | undefined): V1Container[] | undefined {
  return containers?.map((c) => (c.restartPolicy === undefined ? { name: c.name } : { name: c.name, restartPolicy: c.restartPolicy }));
}

/** The state without the container id of a terminated one; undefined for an empty `{}`. */
function state(s: V1ContainerState | undefined): V1ContainerState | undefined {
  if (!s) return undefined;
  const t = s.terminated;
  if (t) {
    const { containerID: _, ...rest } = t;
    return { terminated: rest };
  }
  return s.running || s.waiting ? s : undefined;
}

function states(statuses: V1ContainerStatus[] | undefined): V1ContainerStatus[] | undefined {
  return statuses?.map((s) => ({
    name: s.name,
    ready: s.ready,
    restartCount: s.restartCount,
    started: s.started,
    state: state(s.state),
    lastState: state(s.lastState),
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
      annotations: lifecycleAnnotations(m.annotations),
      deletionTimestamp: m.deletionTimestamp,
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
      // podIP is podIPs[0]: the list says more only on a dual-stack pod.
      podIPs: st.podIPs && st.podIPs.length > 1 ? st.podIPs : undefined,
    },
  };
}

export type TransformName = 'none' | 'stripManagedFields' | 'lifecycleView';

export const TRANSFORMS: Record<TransformName, ((pod: V1Pod) => V1Pod) | undefined> = {
  none: undefined,
  stripManagedFields,
  lifecycleView,
};
