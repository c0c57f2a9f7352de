/**
 * Readiness from pods: a rule condition satisfied when the pod of a DaemonSet (or matching a
 * selector) on the node is Ready, observed in the same four states as a node condition.
 *
 * Guarantees (pure; pods come through a `PodLookup`):
 * - True only for a pod on this node whose Ready condition is True and that is not being deleted;
 * - False ("failing", which can re-taint a continuous rule after its debounce) only for such a pod
 *   that exists and is not Ready — it names the pod and why (a container waiting, crashed, not
 *   ready, or the pod terminating);
 * - Missing when no such pod is on the node, and when the DaemonSet does not exist (said so);
 *   Missing never fails a gate, so a DaemonSet rolled out late or deleted holds the taint but
 *   never re-taints a node;
 * - staleness is the kubelet's: a pod's status is as fresh as its node's Ready heartbeat, so with
 *   `maxConditionAge` a node whose kubelet went silent reads its pods as Unknown, not True;
 * - `slimPod` keeps what this needs (owner, labels, node, phase, Ready, container states), so a
 *   cache of every DaemonSet pod stays small.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import type { ConditionObservation } from './condition-state.js';
import type { PodConditionSource, ResolvedCondition } from './rule.js';
import { selectorMatches } from './selector.js';

/** Where pod conditions are read from: the controller's pod cache, or what the CLI fetched. */
export interface PodLookup {
  /** Pods of `namespace` bound to node `node`. */
  podsOn(node: string, namespace: string): readonly V1Pod[];
  /** Whether DaemonSet `namespace/name` exists; undefined when unknown. */
  daemonSetExists(namespace: string, name: string): boolean | undefined;
  /** False while the pods are still being listed: gates must not be decided yet. */
  synced?(): boolean;
  /** False while the pods of `namespace` have not been listed once (e.g. the list is forbidden). */
  namespaceListed?(namespace: string): boolean;
}

/** "DaemonSet kube-system/cilium" or "pod with labels app=x in kube-system". */
export function describePodSource(pod: PodConditionSource): string {
  if (pod.daemonSet !== undefined) return `DaemonSet ${pod.namespace}/${pod.daemonSet}`;
  const labels = Object.entries(pod.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  const exprs = (pod.selector?.matchExpressions ?? []).map((e) => `${e.key} ${e.operator}${e.values?.length ? ` (${e.values.join(',')})` : ''}`);
  return `pod with labels ${[...labels, ...exprs].join(', ')} in ${pod.namespace}`;
}

function ownedBy(pod: V1Pod, daemonSet: string): boolean {
  return (pod.metadata?.ownerReferences ?? []).some((o) => o.kind === 'DaemonSet' && o.name === daemonSet && o.controller !== false);
}

/** The pods on the node that `source` names, the one to judge first (not deleting, Ready). */
export function podsFor(source: PodConditionSource, pods: readonly V1Pod[]): V1Pod[] {
  const chosen = pods.filter((p) => (source.daemonSet !== undefined ? ownedBy(p, source.daemonSet) : source.selector !== undefined && selectorMatches(source.selector, p.metadata?.labels)));
  const rank = (p: V1Pod): number => (p.metadata?.deletionTimestamp ? 2 : 0) + (readyCondition(p)?.status === 'True' ? 0 : 1);
  return chosen.sort((a, b) => rank(a) - rank(b));
}

function readyCondition(pod: V1Pod): { status?: string; lastTransitionTime?: unknown; reason?: string; message?: string } | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Why a pod is not Ready, in a few words: the first container that is not, and its state. */
export function whyNotReady(pod: V1Pod): string {
  if (pod.metadata?.deletionTimestamp) return 'the pod is terminating';
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') return `the pod has ended (${pod.status.phase})`;
  const statuses: V1ContainerStatus[] = [...(pod.status?.initContainerStatuses ?? []).filter((s) => !s.ready && !s.state?.terminated), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    if (s.ready) continue;
    if (s.state?.waiting) return `container ${s.name} waiting: ${s.state.waiting.reason ?? 'unknown'}${s.restartCount ? ` (${s.restartCount} restarts)` : ''}`;
    if (s.state?.terminated) return `container ${s.name} terminated: ${s.state.terminated.reason ?? 'exit'} (exit code ${s.state.terminated.exitCode})`;
    return `container ${s.name} running but not ready (readiness probe)`;
  }
  const ready = readyCondition(pod);
  if (ready?.reason) return `${ready.reason}${ready.message ? `: ${ready.message}` : ''}`;
  return pod.status?.phase === 'Pending' ? 'the pod is pending' : 'no Ready condition yet';
}

/** One pod condition of a gate on `node`, as a ConditionObservation (see the guarantees above). */
export function observePodCondition(
  lookup: PodLookup | undefined,
  node: string,
  want: ResolvedCondition & { pod: PodConditionSource },
  nodeHeartbeatMs: number | undefined,
  maxAgeMs: number | undefined,
  nowMs: number,
): ConditionObservation {
  const source = describePodSource(want.pod);
  const base = { type: want.type, required: want.requiredStatus, podSource: source };
  const missing = (reason: string, message: string): ConditionObservation => {
    const status = want.defaultStatus;
    return { ...base, state: 'Missing', stale: false, ...(status ? { status } : {}), satisfied: status !== undefined && status === want.requiredStatus, failing: false, reason, message };
  };
  if (!lookup) return missing('PodsNotRead', `pods are not read here, so ${source} cannot be judged`);
  if (want.pod.daemonSet !== undefined && lookup.daemonSetExists(want.pod.namespace, want.pod.daemonSet) === false) {
    return missing('DaemonSetNotFound', `${source} does not exist`);
  }
  if (lookup.namespaceListed?.(want.pod.namespace) === false) {
    return missing('PodsNotListed', `the pods of namespace ${want.pod.namespace} are not listed yet (listing them needs the Role readinessPodNamespaces grants there), so ${source} cannot be judged`);
  }
  const pod = podsFor(want.pod, lookup.podsOn(node, want.pod.namespace))[0];
  if (!pod) return missing('NoPod', `no pod of ${source} on this node yet`);
  const name = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
  const ready = readyCondition(pod);
  const isReady = ready?.status === 'True' && !pod.metadata?.deletionTimestamp;
  const transitionMs = Math.min(timeMs(ready?.lastTransitionTime as string | undefined) ?? timeMs(pod.metadata?.creationTimestamp) ?? nowMs, nowMs);
  const heartbeatMs = nodeHeartbeatMs === undefined ? undefined : Math.min(nodeHeartbeatMs, nowMs);
  const stale = maxAgeMs !== undefined && heartbeatMs !== undefined && nowMs - heartbeatMs > maxAgeMs;
  const reported = isReady ? 'True' : 'False';
  const status = stale ? 'Unknown' : reported;
  return {
    ...base,
    pod: name,
    state: status,
    stale,
    status,
    satisfied: status === want.requiredStatus,
    failing: status !== 'Unknown' && status !== want.requiredStatus,
    transitionMs,
    ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
    reason: isReady ? 'PodReady' : 'PodNotReady',
    message: isReady ? `pod ${name} is Ready` : `pod ${name} is not Ready: ${whyNotReady(pod)}`,
  };
}

/** What the pod cache keeps of a pod: owner, labels, node, phase, Ready and container states. */
export function slimPod(pod: V1Pod): V1Pod {
  const m = pod.metadata ?? {};
  const owners = (m.ownerReferences ?? []).filter((o) => o.kind === 'DaemonSet').map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, ...(o.controller !== undefined ? { controller: o.controller } : {}) }));
  const slimStatus = (s: V1ContainerStatus): V1ContainerStatus => ({
    name: s.name,
    ready: s.ready,
    restartCount: s.restartCount,
    image: '',
    imageID: '',
    ...(s.state ? { state: s.state } : {}),
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      ...(m.creationTimestamp ? { creationTimestamp: m.creationTimestamp } : {}),
      ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
      ...(m.labels ? { labels: m.labels } : {}),
      ...(owners.length ? { ownerReferences: owners } : {}),
    },
    spec: { containers: [], ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}) },
    status: {
      ...(pod.status?.phase ? { phase: pod.status.phase } : {}),
      ...(pod.status?.conditions ? { conditions: pod.status.conditions.filter((c) => c.type === 'Ready') } : {}),
      ...(pod.status?.containerStatuses ? { containerStatuses: pod.status.containerStatuses.map(slimStatus) } : {}),
      ...(pod.status?.initContainerStatuses ? { initContainerStatuses: pod.status.initContainerStatuses.map(slimStatus) } : {}),
    },
  };
}

/** The namespaces whose pods the rules' pod conditions read. */
export function podNamespaces(conditions: Iterable<ResolvedCondition>): Set<string> {
  const out = new Set<string>();
  for (const c of conditions) if (c.pod) out.add(c.pod.namespace);
  return out;
}

/** A PodLookup over a list of pods (the CLI's fetch, tests). */
export function podList(pods: readonly V1Pod[], daemonSets?: ReadonlySet<string>): PodLookup {
  return {
    podsOn: (node, namespace) => pods.filter((p) => p.spec?.nodeName === node && p.metadata?.namespace === namespace),
    daemonSetExists: (namespace, name) => (daemonSets ? daemonSets.has(`${namespace}/${name}`) : undefined),
  };
}
