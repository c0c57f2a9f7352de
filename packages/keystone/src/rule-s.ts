/**
 * Rule S: once every main container has finished, the sidecars stop, one at a time
 * in reverse spec order — or, with `completion: phase`, the pod's result is recorded and the
 * kubelet ends them.
 *
 * Guarantees: pure; never fires under restartPolicy Always (a main never finishes there) nor for
 * a pod whose sidecars are all native (the kubelet stops those); the rule fires at the last main's
 * finishedAt (else when the progress record started, else now).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { findCondition, timeMs } from '@podlife/core';
import type { PodLifecycle } from './annotations.js';
import { awaitsJobCount, isFinished, lastExit, phaseFromMains, statusOf } from './container-states.js';
import { NONE, type Decision, type EvaluateOptions } from './decision.js';
import { planStop } from './plan-stop.js';
import { ConditionType, NO_UPDATES } from './records.js';
import { remainingGraceSeconds, stopOrder } from './schedule.js';

export function ruleS(pod: V1Pod, lifecycle: PodLifecycle, options: EvaluateOptions): Decision {
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  if (!lifecycle.containers.some((c) => c.role === 'sidecar')) return lifecycle.nativeSidecars.length > 0 ? NONE['native-sidecars'] : NONE['no-sidecars'];
  if (restartPolicy === 'Always') return NONE['restart-always'];

  let trigger = '';
  let firedAtMs: number | undefined;
  for (const c of lifecycle.containers) {
    if (c.role === 'sidecar') continue;
    const status = statusOf(pod, c.name);
    if (!isFinished(status, restartPolicy)) return NONE.waiting;
    const at = lastExit(status).finishedAtMs;
    if (trigger === '' || (at !== undefined && (firedAtMs === undefined || at > firedAtMs))) {
      trigger = c.name;
      firedAtMs = at ?? firedAtMs;
    }
  }

  if (lifecycle.completion === 'phase') {
    const grace = remainingGraceSeconds(pod, firedAtMs ?? options.nowMs, options.nowMs);
    return { action: 'phase', rule: 'S', trigger, phase: phaseFromMains(pod, lifecycle), gracePeriodSeconds: grace, thenDelete: !awaitsJobCount(pod), updates: NO_UPDATES };
  }
  const fired = firedAtMs ?? timeMs(findCondition(pod.status?.conditions, ConditionType.SidecarsStopped)?.lastTransitionTime) ?? options.nowMs;
  return planStop(pod, lifecycle, { rule: 'S', trigger, firedAtMs: fired }, stopOrder(lifecycle, undefined), options);
}
