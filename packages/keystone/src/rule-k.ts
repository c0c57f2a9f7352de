/**
 * Rule K: the first keystone container to end stops every other container — the
 * other mains together, then each sidecar alone in reverse spec order — or ends the pod as its
 * `on-keystone-exit` and `completion` say.
 *
 * Guarantees: pure; the first keystone to end fires the rule (earliest finishedAt, spec order
 * breaks ties), announced once (`KeystoneFinished`); RestartPod is left to a kubelet that
 * restarts the pod in place, and deletes the pod (as TerminatePod) where no kubelet will.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { findCondition, timeMs } from '@podlife/core';
import type { ContainerLifecycle, PodLifecycle } from './annotations.js';
import { NO_EXIT, awaitsJobCount, isFinished, lastExit, phaseFromMains, statusOf, type Exit } from './container-states.js';
import { DEFAULT_GRACE_SECONDS, NONE, type Decision, type DeleteDecision, type EvaluateOptions } from './decision.js';
import { RESTART_ALL_CONTAINERS_FEATURE } from './node-features.js';
import { planStop } from './plan-stop.js';
import { ConditionType, keystoneFinishedUpdate } from './records.js';
import { ALL_CONTAINERS_RESTARTING, RESTART_ALL_CONTAINERS, kubeletHonoursRestartAll, matchingRule, restartedInPlace } from './restart-in-place.js';
import { remainingGraceSeconds, stopOrder } from './schedule.js';

export function ruleK(pod: V1Pod, lifecycle: PodLifecycle, options: EvaluateOptions): Decision {
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  // The first keystone to end fires the rule (earliest finishedAt; spec order breaks ties). Kept
  // in this function: the loop is the hot part of every pass over a pod with a keystone.
  let keystone: ContainerLifecycle | undefined;
  let exit: Exit = NO_EXIT;
  for (const k of lifecycle.keystones) {
    const status = statusOf(pod, k.name);
    const ended = restartPolicy === 'Always' ? status?.state?.terminated !== undefined || status?.lastState?.terminated !== undefined : isFinished(status, restartPolicy);
    if (!ended) continue;
    const e = lastExit(status);
    if (keystone === undefined || (e.finishedAtMs !== undefined && (exit.finishedAtMs === undefined || e.finishedAtMs < exit.finishedAtMs))) {
      keystone = k;
      exit = e;
    }
  }
  if (keystone === undefined) return NONE.waiting;
  if (lifecycle.onKeystoneExit !== 'StopContainers' || restartPolicy === 'Always' || lifecycle.completion === 'phase') {
    return endPod(pod, lifecycle, keystone, exit, options);
  }
  const finishedRecord = findCondition(pod.status?.conditions, ConditionType.KeystoneFinished);
  const firedAtMs = exit.finishedAtMs ?? timeMs(finishedRecord?.lastTransitionTime) ?? options.nowMs;
  // Announced once: the condition says it was.
  const keystoneUpdate = finishedRecord?.status === 'True' ? undefined : keystoneFinishedUpdate(keystone.name, exit.exitCode, 'stopping the other containers');
  return planStop(pod, lifecycle, { rule: 'K', trigger: keystone.name, firedAtMs, keystoneUpdate }, stopOrder(lifecycle, keystone), options);
}

/** The keystone ends the pod rather than its containers: RestartPod, restartPolicy Always, TerminatePod, or completion by phase. */
function endPod(pod: V1Pod, lifecycle: PodLifecycle, keystone: ContainerLifecycle, exit: Exit, options: EvaluateOptions): Decision {
  const grace = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
  if (lifecycle.onKeystoneExit === 'RestartPod') return restartPod(pod, keystone, exit, grace);
  if ((pod.spec?.restartPolicy ?? 'Always') === 'Always') {
    return deletion(keystone, 'RestartPolicyAlways', grace, keystoneFinishedUpdate(keystone.name, exit.exitCode, 'deleting the pod (restartPolicy Always: a keystone exit ends the pod)'));
  }
  if (lifecycle.onKeystoneExit === 'TerminatePod') {
    return deletion(keystone, 'TerminatePod', grace, keystoneFinishedUpdate(keystone.name, exit.exitCode, `deleting the pod with its grace period of ${grace}s`));
  }
  const firedAtMs = exit.finishedAtMs ?? timeMs(findCondition(pod.status?.conditions, ConditionType.KeystoneFinished)?.lastTransitionTime) ?? options.nowMs;
  const phase = phaseFromMains(pod, lifecycle);
  return {
    action: 'phase',
    rule: 'K',
    trigger: keystone.name,
    phase,
    gracePeriodSeconds: remainingGraceSeconds(pod, firedAtMs, options.nowMs),
    thenDelete: !awaitsJobCount(pod),
    updates: [keystoneFinishedUpdate(keystone.name, exit.exitCode, `marking the pod ${phase}, then ending the other containers through the kubelet`)],
  };
}

/** RestartPod: nothing to do where the kubelet restarts the pod in place; elsewhere, delete it as TerminatePod. */
function restartPod(pod: V1Pod, keystone: ContainerLifecycle, exit: Exit, grace: number): Decision {
  // Already restarted in place by the kubelet (its own 137 record, not a keystone exit).
  if (restartedInPlace(statusOf(pod, keystone.name)) && kubeletHonoursRestartAll(pod)) return NONE['restart-in-place'];
  const rule = matchingRule(pod.spec?.containers?.[keystone.index], exit.exitCode ?? -1);
  // The kubelet restarts the pod in place on this exit: nothing of ours to do.
  if (rule?.action === RESTART_ALL_CONTAINERS && kubeletHonoursRestartAll(pod)) return NONE['restart-in-place'];
  const why =
    rule?.action === RESTART_ALL_CONTAINERS
      ? `the kubelet of node ${pod.spec?.nodeName ?? '<none>'} ignores the keystone's ${RESTART_ALL_CONTAINERS} rule (it writes no ${ALL_CONTAINERS_RESTARTING} condition)`
      : `the keystone has no ${RESTART_ALL_CONTAINERS} restart rule for this exit (podlife's webhook adds one only when every node that may run the pod declares ${RESTART_ALL_CONTAINERS_FEATURE})`;
  const then = `RestartPod cannot restart in place: ${why}; deleting the pod with its grace period of ${grace}s instead (TerminatePod)`;
  return deletion(keystone, 'RestartPodUnsupported', grace, keystoneFinishedUpdate(keystone.name, exit.exitCode, then));
}

function deletion(keystone: ContainerLifecycle, why: DeleteDecision['why'], grace: number, update: DeleteDecision['updates'][number]): DeleteDecision {
  return { action: 'delete', rule: 'K', trigger: keystone.name, why, gracePeriodSeconds: grace, updates: [update] };
}
