/**
 * The pod condition model: every condition type Kubernetes writes on a pod, what it means, who
 * writes it and which versions have it.
 *
 * Guarantees:
 * - reading a condition treats `PodHasNetwork` (the 1.25-1.27 alpha name) and
 *   `PodReadyToStartContainers` as one type, so callers never branch on the cluster version;
 * - readers never throw on a pod with missing or partial status.
 */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';

/** The pod condition types Kubernetes writes. */
export const PodConditionType = {
  PodScheduled: 'PodScheduled',
  PodReadyToStartContainers: 'PodReadyToStartContainers',
  /** The alpha name of `PodReadyToStartContainers` (1.25-1.27). Read through `podCondition`. */
  PodHasNetwork: 'PodHasNetwork',
  Initialized: 'Initialized',
  ContainersReady: 'ContainersReady',
  Ready: 'Ready',
  DisruptionTarget: 'DisruptionTarget',
  PodResizePending: 'PodResizePending',
  PodResizeInProgress: 'PodResizeInProgress',
  /** KEP-5532: every container is being restarted in place (a RestartAllContainers restart rule matched). */
  AllContainersRestarting: 'AllContainersRestarting',
} as const;
export type PodConditionType = (typeof PodConditionType)[keyof typeof PodConditionType];

/** What one pod condition type means, who writes it, and since which version. */
export interface PodConditionInfo {
  type: PodConditionType;
  /** What `True` says about the pod. */
  meaning: string;
  writtenBy: 'scheduler' | 'kubelet' | 'control plane';
  /** First minor version that writes it (by default, or behind the named feature gate). */
  since: string;
  /** First minor version where it is GA (its gate locked on); absent while it is not. Ungated types are stable from `since`. */
  stable?: string;
  /** Last minor version that writes it under this name. */
  until?: string;
  featureGate?: string;
  /** The other name of the same condition. */
  aliasOf?: PodConditionType;
}

/** Every built-in pod condition type, in the order a starting pod usually passes them. */
export const podConditions: readonly PodConditionInfo[] = [
  {
    type: 'PodScheduled',
    meaning: 'the pod is bound to a node (False with reason Unschedulable while the scheduler cannot place it)',
    writtenBy: 'scheduler',
    since: '1.3',
  },
  {
    type: 'PodReadyToStartContainers',
    meaning: 'the pod sandbox exists and its network is configured, so containers can be started',
    writtenBy: 'kubelet',
    since: '1.28',
    stable: '1.37',
    featureGate: 'PodReadyToStartContainersCondition (alpha 1.28, beta and on 1.29, GA 1.37); False never says why the sandbox fails (no reason before 1.37; from 1.37 PodSandboxNotReady with why one is needed), so the cause comes from Events',
    aliasOf: 'PodHasNetwork',
  },
  {
    type: 'PodHasNetwork',
    meaning: 'alpha name of PodReadyToStartContainers: sandbox created and network configured',
    writtenBy: 'kubelet',
    since: '1.25',
    until: '1.27',
    featureGate: 'PodHasNetworkCondition (alpha, off by default)',
    aliasOf: 'PodReadyToStartContainers',
  },
  {
    type: 'Initialized',
    meaning: 'every init container has completed (True immediately when there are none)',
    writtenBy: 'kubelet',
    since: '1.3',
  },
  {
    type: 'ContainersReady',
    meaning: 'every container in the pod is ready',
    writtenBy: 'kubelet',
    since: '1.11',
  },
  {
    type: 'Ready',
    meaning: 'ContainersReady and every readiness gate condition is True: the pod may serve traffic',
    writtenBy: 'kubelet',
    since: '1.0',
  },
  {
    type: 'DisruptionTarget',
    meaning: 'the pod is about to be terminated by a disruption (preemption, eviction, taint manager, GC)',
    writtenBy: 'control plane',
    since: '1.26',
    stable: '1.31',
    featureGate: 'PodDisruptionConditions (alpha 1.25, beta 1.26, GA 1.31)',
  },
  {
    type: 'PodResizePending',
    meaning: 'an in-place resize was requested but the kubelet cannot apply it yet (Deferred or Infeasible)',
    writtenBy: 'kubelet',
    since: '1.33',
    stable: '1.35',
    featureGate: 'InPlacePodVerticalScaling (beta and on 1.33, GA 1.35)',
  },
  {
    type: 'PodResizeInProgress',
    meaning: 'an in-place resize was accepted and is being applied',
    writtenBy: 'kubelet',
    since: '1.33',
    stable: '1.35',
    featureGate: 'InPlacePodVerticalScaling (beta and on 1.33, GA 1.35)',
  },
  {
    type: 'AllContainersRestarting',
    meaning: 'a RestartAllContainers restart rule matched a container exit: the kubelet is restarting every container in place (same UID, IP and volumes); False once done (the documentation calls it PodRestartInPlace; the API names it AllContainersRestarting)',
    writtenBy: 'kubelet',
    since: '1.35',
    featureGate: 'RestartAllContainersOnContainerExits (alpha 1.35, beta and on 1.36); written only on pods with such a rule',
  },
];

/** Readiness gates are not built in: any type a pod lists in `spec.readinessGates`, owned by a controller. */
export function readinessGateTypes(pod: V1Pod): string[] {
  return (pod.spec?.readinessGates ?? []).map((g) => g.conditionType).filter((t): t is string => typeof t === 'string');
}

const sandboxTypes: ReadonlySet<string> = new Set(['PodReadyToStartContainers', 'PodHasNetwork']);

/** The names a reader should accept for `type` (the sandbox condition has two). */
export function conditionAliases(type: string): readonly string[] {
  return sandboxTypes.has(type) ? ['PodReadyToStartContainers', 'PodHasNetwork'] : [type];
}

/**
 * The pod's condition of `type`; asking for either sandbox name finds the other. When a pod carries
 * both (a cluster upgraded mid-life), the current name wins.
 */
export function podCondition(pod: V1Pod, type: string): V1PodCondition | undefined {
  const conditions = pod.status?.conditions;
  if (!conditions) return undefined;
  let alias: V1PodCondition | undefined;
  for (const c of conditions) {
    if (c.type === type) return c;
    if (alias === undefined && sandboxTypes.has(type) && sandboxTypes.has(c.type)) alias = c;
  }
  return alias;
}

/** `True`/`False`/`Unknown` of the pod's condition, or undefined when absent (alias-aware). */
export function podConditionStatus(pod: V1Pod, type: string): 'True' | 'False' | 'Unknown' | undefined {
  const s = podCondition(pod, type)?.status;
  return s === 'True' || s === 'False' || s === 'Unknown' ? s : undefined;
}
