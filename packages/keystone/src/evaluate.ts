/**
 * evaluatePod: the keystone rules as one pure function from a pod to a decision — the
 * only place keystone decides what to do about a pod and when to look at it again.
 *
 * Guarantees:
 * - pure and clock-free: the same pod, options and `nowMs` give the same decision, so a reconcile
 *   from the cache alone (after a restart) decides what the previous controller would have;
 * - a pod without lifecycle annotations, a terminating pod and a pod in a terminal phase get
 *   `none`; an invalid pod gets `invalid` and never a destructive action — except a pod whose
 *   phase podlife recorded (`completion: phase`, or a stop in progress) while containers still
 *   run: a real kubelet never stops those by itself, so it gets `delete` (docs/adr/0100);
 * - a pod that reached a terminal phase while its stop was recorded as in progress
 *   (`SidecarsStopped=False`) gets the update that closes the record once every target has
 *   stopped: the kubelet's write that shows the last container stopped may already carry the
 *   terminal phase, and no later pass would see the pod any other way;
 * - everything a pass writes is in the decision: the rules' conditions, `LifecycleValid` when it
 *   turns valid, and the `NativeMechanisms` condition of a pod podlife's webhook changed;
 * - a stop is decided by rule K (rule-k.ts) or rule S (rule-s.ts) and scheduled by schedule.ts
 *   (what is due now, when to look again: `requeueAfterMs`); what an action found (a PID 1
 *   without a handler, a stop's delivery time) comes back through the progress record, and the
 *   next evaluation decides on it; escalation is the kubelet's termination (the pod's result
 *   recorded first, then the pod deleted), never a signal from inside the container's PID
 *   namespace (docs/adr/0101).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { findCondition } from '@podlife/core';
import { readLifecycle, readLifecycleNoting, type KeysSeen } from './annotations.js';
import { awaitsJobCount, isStopped, statusOf } from './container-states.js';
import { DEFAULT_GRACE_SECONDS, NONE, type Decision, type DeleteDecision, type EvaluateOptions, type NoneDecision } from './decision.js';
import { nativeMechanismsUpdate } from './native-findings.js';
import { ConditionType, NO_UPDATES, invalidUpdate, validUpdate } from './records.js';
import { ruleK } from './rule-k.js';
import { ruleS } from './rule-s.js';

export { DEFAULT_GRACE_SECONDS, DEFAULT_MIN_STAGE_MS, LATE_AFTER_MS, STILL_RUNNING } from './decision.js';
export type {
  Decision,
  DeleteDecision,
  Escalation,
  EscalationWhy,
  EvaluateOptions,
  InvalidDecision,
  NoneDecision,
  NoneWhy,
  PhaseDecision,
  StopDecision,
  StopMethod,
  StopStep,
} from './decision.js';
export { JOB_TRACKING_FINALIZER, awaitsJobCount, stopContainerExit } from './container-states.js';

/**
 * What each read of a lifecycle noted, for the NativeMechanisms check: one object for every call,
 * written by the read before it is read back (evaluatePod never yields in between).
 */
const seen: KeysSeen = { mayHoldNativeRecords: false };

/** What the keystone rules say about a pod now (see the guarantees above). */
export function evaluatePod(pod: V1Pod, options: EvaluateOptions): Decision {
  if (pod.metadata?.deletionTimestamp) return NONE.terminating;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return endLeftovers(pod, options) ?? closeRecord(pod, options);
  const reading = readLifecycleNoting(pod, options, seen);
  if (reading.kind === 'not-ours') return NONE['not-ours'];
  const decision: Decision =
    reading.kind === 'invalid'
      ? { action: 'invalid', errors: reading.errors, omitted: reading.omitted, updates: [invalidUpdate(reading.errors, reading.omitted)] }
      : reading.lifecycle.keystones.length > 0
        ? ruleK(pod, reading.lifecycle, options)
        : ruleS(pod, reading.lifecycle, options);
  const validity = reading.kind === 'valid' ? findCondition(pod.status?.conditions, ConditionType.LifecycleValid) : undefined;
  const becameValid = validity !== undefined && validity.status !== 'True' ? validUpdate() : undefined;
  // The walk that read the lifecycle saw whether the webhook left a record: without one, nothing to check.
  const native = seen.mayHoldNativeRecords ? nativeMechanismsUpdate(pod, options) : undefined;
  if (becameValid === undefined && native === undefined) return decision;
  const updates = [...(becameValid ? [becameValid] : []), ...decision.updates, ...(native ? [native] : [])];
  return { ...decision, updates } as Decision;
}

/**
 * A terminal pod whose containers still run because podlife recorded its phase (completion by
 * phase, or an escalation that crashed between recording the result and deleting the pod): the
 * kubelet does not stop containers of a pod someone else made terminal, so delete it. Pods that
 * did not opt into phase completion and have no stop in progress are never touched here.
 */
function endLeftovers(pod: V1Pod, options: EvaluateOptions): Decision | undefined {
  const containers = pod.spec?.containers;
  if (!Array.isArray(containers) || !Array.isArray(pod.status?.containerStatuses)) return undefined;
  const running = containers.find((c) => c && typeof c.name === 'string' && !isStopped(statusOf(pod, c.name)))?.name;
  if (running === undefined) return undefined;
  const reading = readLifecycle(pod, options);
  if (reading.kind !== 'valid') return undefined;
  const inProgress = findCondition(pod.status?.conditions, ConditionType.SidecarsStopped)?.status === 'False';
  if (reading.lifecycle.completion !== 'phase' && !inProgress) return undefined;
  // Not before the Job has counted the recorded result: until then the kubelet could still
  // report the killed containers' view (a Failed phase) and the Job would count that instead.
  if (awaitsJobCount(pod)) return undefined;
  const decision: DeleteDecision = {
    action: 'delete',
    rule: reading.lifecycle.keystones.length > 0 ? 'K' : 'S',
    trigger: running,
    why: 'PhaseRecorded',
    gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
    updates: NO_UPDATES,
  };
  const native = nativeMechanismsUpdate(pod, options);
  return native === undefined ? decision : { ...decision, updates: [native] };
}

/** A terminal pod: `none`, with SidecarsStopped=True (and its Events) if our record of a stop is still open. */
function closeRecord(pod: V1Pod, options: EvaluateOptions): NoneDecision {
  if (findCondition(pod.status?.conditions, ConditionType.SidecarsStopped)?.status !== 'False') return NONE.terminal;
  const reading = readLifecycle(pod, options);
  if (reading.kind !== 'valid') return NONE.terminal;
  const lifecycle = reading.lifecycle;
  // The rules themselves say whether every target has stopped and with which exit codes.
  const decision = lifecycle.keystones.length > 0 ? ruleK(pod, lifecycle, options) : ruleS(pod, lifecycle, options);
  if (decision.action !== 'none' || decision.why !== 'done' || decision.updates.length === 0) return NONE.terminal;
  return { action: 'none', why: 'terminal', updates: decision.updates, ...(decision.stopLatencyMs !== undefined ? { stopLatencyMs: decision.stopLatencyMs } : {}) };
}
