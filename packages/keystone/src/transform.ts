/**
 * What the pod cache keeps: only the fields the lifecycle controllers read.
 *
 * Guarantees:
 * - a pod without podlife annotations is cached as its identity only (name, namespace, uid,
 *   resourceVersion): it can never be acted on, and 10k such pods cost little memory;
 * - for a podlife pod everything `evaluatePod`, the actuators and the network-condition
 *   controller read is kept: annotations, container names, roles and securityContext user,
 *   restart policy, restart rules and stop signal, the pod's OS, grace period,
 *   shareProcessNamespace and hostPID (either makes signal stops invalid), the pod-level user,
 *   native-sidecar init containers, ephemeral container names, phase, podIPs, conditions and
 *   container states (stop containers' included) — property tests check that `evaluatePod`
 *   decides the same on this view as on the full pod, and that every pod-level field it reads
 *   is kept;
 * - every cached pod, a list item included (the API server's list items carry no kind), says
 *   `apiVersion: v1, kind: Pod`, so that the Events about it name what they regard;
 * - the transform is pure and never mutates its input.
 */
import type { V1Container, V1ContainerStatus, V1EphemeralContainer, V1Pod, V1PodSecurityContext } from '@kubernetes/client-node';

const podlifeKey = /(^|\.)podlife\.dev\/|^sidecars\.alpha\.kubernetes\.io\//;

/** True when any annotation key is in a podlife domain (role, stop, pod options, alias). */
export function hasPodlifeAnnotation(annotations: Record<string, string> | null | undefined): boolean {
  if (!annotations) return false;
  for (const key in annotations) if (podlifeKey.test(key)) return true;
  return false;
}

function container(c: V1Container): V1Container {
  if (typeof c !== 'object' || c === null) return c;
  const out: V1Container = { name: c.name };
  if (c.restartPolicy !== undefined) out.restartPolicy = c.restartPolicy;
  if (c.restartPolicyRules !== undefined) out.restartPolicyRules = c.restartPolicyRules;
  if (c.lifecycle?.stopSignal !== undefined) out.lifecycle = { stopSignal: c.lifecycle.stopSignal };
  const sc = c.securityContext;
  if (sc && (sc.runAsUser !== undefined || sc.runAsGroup !== undefined || sc.runAsNonRoot !== undefined)) {
    out.securityContext = { runAsUser: sc.runAsUser, runAsGroup: sc.runAsGroup, runAsNonRoot: sc.runAsNonRoot };
  }
  return out;
}

function status(s: V1ContainerStatus): V1ContainerStatus {
  if (typeof s !== 'object' || s === null) return s;
  const out: V1ContainerStatus = { name: s.name, ready: s.ready, restartCount: s.restartCount, image: '', imageID: '' };
  if (s.state) out.state = s.state;
  if (s.lastState) out.lastState = s.lastState;
  if (s.started !== undefined) out.started = s.started;
  // The stop signal the kubelet reports in effect (ContainerStopSignals).
  if (s.stopSignal !== undefined) out.stopSignal = s.stopSignal;
  return out;
}

function podUser(sc: V1PodSecurityContext): V1PodSecurityContext {
  return { runAsUser: sc.runAsUser, runAsGroup: sc.runAsGroup, runAsNonRoot: sc.runAsNonRoot };
}

const podKind = { apiVersion: 'v1', kind: 'Pod' } as const;

/** The pod cache's transform: only what the lifecycle controllers read (see above). */
export function keepLifecycleFields(pod: V1Pod): V1Pod {
  const m = pod.metadata ?? {};
  const identity = { name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion };
  if (!hasPodlifeAnnotation(m.annotations)) return { ...podKind, metadata: identity };
  const spec = pod.spec;
  const st = pod.status;
  return {
    ...podKind,
    metadata: {
      ...identity,
      annotations: m.annotations,
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      // The Job's tracking finalizer says whether the Job has counted a result podlife recorded.
      ...(m.finalizers ? { finalizers: m.finalizers } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
    },
    spec: spec && {
      containers: (spec.containers ?? []).map(container),
      ...(spec.initContainers ? { initContainers: spec.initContainers.map(container) } : {}),
      ...(spec.ephemeralContainers
        ? { ephemeralContainers: spec.ephemeralContainers.map((e): V1EphemeralContainer => ({ name: e.name, targetContainerName: e.targetContainerName })) }
        : {}),
      ...(spec.shareProcessNamespace !== undefined ? { shareProcessNamespace: spec.shareProcessNamespace } : {}),
      ...(spec.hostPID !== undefined ? { hostPID: spec.hostPID } : {}),
      ...(spec.securityContext ? { securityContext: podUser(spec.securityContext) } : {}),
      ...(spec.restartPolicy ? { restartPolicy: spec.restartPolicy } : {}),
      ...(spec.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds } : {}),
      ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
      ...(spec.os ? { os: spec.os } : {}),
    },
    status: st && {
      ...(st.phase ? { phase: st.phase } : {}),
      ...(st.podIP ? { podIP: st.podIP } : {}),
      ...(st.podIPs ? { podIPs: st.podIPs } : {}),
      ...(st.conditions ? { conditions: st.conditions } : {}),
      ...(st.containerStatuses ? { containerStatuses: st.containerStatuses.map(status) } : {}),
      ...(st.initContainerStatuses ? { initContainerStatuses: st.initContainerStatuses.map(status) } : {}),
      // A stop container's exit code says whether the target's PID 1 could get its signal.
      ...(st.ephemeralContainerStatuses ? { ephemeralContainerStatuses: st.ephemeralContainerStatuses.map(status) } : {}),
    },
  };
}
