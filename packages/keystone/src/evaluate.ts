/**
 * evaluatePod: the keystone rules (DESIGN 3) as one pure function from a pod to a decision.
 *
 * Guarantees:
 * - pure and clock-free: the same pod, options and `nowMs` give the same decision;
 * - a pod without lifecycle annotations, a terminating pod and a pod in a terminal phase get
 *   `none`; an invalid pod gets `invalid` and never a destructive action — except a pod whose
 *   phase podlife recorded (`completion: phase`, or a stop in progress) while containers still
 *   run: a real kubelet never stops those by itself, so it gets `delete` (docs/adr/0100);
 * - a pod that reached a terminal phase while its stop was recorded as in progress
 *   (`SidecarsStopped=False`) gets the update that closes the record once every target has
 *   stopped: the kubelet's write that shows the last container stopped may already carry the
 *   terminal phase, and no later pass would see the pod any other way;
 * - the only scheduler of a stop: the decision says what is due now (stop specs not yet issued,
 *   or the escalation) and when to evaluate again (`nextEvaluationAtMs`); a caller acts on what
 *   is due, records it, and comes back then or when the pod changes;
 * - order however late the caller comes: no sidecar is in the current stage while a main
 *   container still runs; a stage's stop specs are all issued before its escalation is due;
 * - one budget, the pod's terminationGracePeriodSeconds, counted from when the rule fired
 *   (the triggering container's finishedAt, else the progress condition's transition time),
 *   shared by stages — mains in parallel, then sidecars one at a time in reverse spec order.
 *   Each container's share counts from when its stop was issued: an equal part of what was left
 *   then, never less than `minStageMs`, so a late caller spends what is left, or the minimum;
 * - escalation is the kubelet's termination (the pod's result recorded first, then the pod
 *   deleted), never a signal from inside the container's PID namespace (docs/adr/0101). An
 *   escalation that did not take (the pod is neither terminal nor deleted) is due again, and its
 *   containers are reported failed only once it is older than `minStageMs`;
 * - resuming: stops already issued (read, with their times, from the progress condition, or
 *   evident from a stop container in the pod) are never due again, so a restarted controller
 *   does not repeat them.
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { findCondition, timeMs, type InvalidAnnotationError } from '@podlife/core';
import { readLifecycle, type ContainerLifecycle, type LifecycleOptions, type PodLifecycle, type StopSpec } from './annotations.js';
import { NO_HANDLER_EXIT, ephemeralName } from './stop-containers.js';
import { RESTART_ALL_CONTAINERS_FEATURE } from './node-features.js';
import { ALL_CONTAINERS_RESTARTING, RESTART_ALL_CONTAINERS, kubeletHonoursRestartAll, matchingRule, restartedInPlace } from './restart-in-place.js';
import {
  ConditionType,
  NO_UPDATES,
  invalidUpdate,
  issuedStops,
  keystoneFinishedUpdate,
  containerStoppedEvent,
  stopFailedUpdate,
  stoppedContainers,
  stoppedUpdate,
  stoppingUpdate,
  validUpdate,
  type IssuedStop,
  type SidecarExit,
  type StatusUpdate,
} from './records.js';

/** How a stop spec is delivered inside the pod. */
export type StopMethod = 'exec' | 'ephemeral';

/** The clock and the admin settings `evaluatePod` decides with. */
export interface EvaluateOptions extends LifecycleOptions {
  /** The current time in ms since the epoch; the only notion of time evaluatePod has. */
  nowMs: number;
  /** How stops are delivered unless a fallback is needed; default 'exec'. */
  strategy?: StopMethod;
  /** Least time a stop stage (and a SIGKILL) is given even when the budget is spent; default 2000 ms. */
  minStageMs?: number;
}

/** Why there is nothing to do. */
export type NoneWhy =
  | 'not-ours'
  | 'terminating'
  | 'terminal'
  | 'waiting'
  | 'restart-always'
  | 'no-sidecars'
  | 'native-sidecars'
  | 'restart-in-place'
  | 'done';

/** One container to stop now: its role, stop spec, method and share of the budget. */
export interface StopStep {
  readonly container: string;
  readonly role: 'main' | 'sidecar';
  /** 0-based; steps of one stage run in parallel, stages one after the other. */
  readonly stage: number;
  /** The container's stop spec (sent before any escalation). */
  readonly stop: StopSpec;
  readonly method: StopMethod;
  /** The stop spec was issued (the progress record, or a stop container in the pod, says so). */
  readonly issued: boolean;
  /** When it was issued, when known. */
  readonly issuedAtMs?: number;
  /**
   * Escalation is due for this container now: end it through the kubelet's termination (record
   * `result`, delete the pod), never a SIGKILL from inside.
   */
  readonly escalate: boolean;
}

/**
 * Why an escalation is due: the stage's share ran out, PID 1 cannot get the signal, a stop
 * container failed without delivering its stop, or an earlier escalation did not take.
 */
export type EscalationWhy = 'share' | 'no-handler' | 'not-delivered' | 'not-ended';

/** Nothing to do now, and why; maybe a record to close or a time to look again. */
export interface NoneDecision {
  readonly action: 'none';
  readonly why: NoneWhy;
  readonly updates: readonly StatusUpdate[];
  /**
   * With the update that closes a stop's record: from when the rule fired to the last stopped
   * container's finishedAt (the stop latency of DESIGN 3.5).
   */
  readonly stopLatencyMs?: number;
}
/** The annotations are invalid: record why, act on nothing. */
export interface InvalidDecision {
  readonly action: 'invalid';
  /** The first problems (at most REPORTED_PROBLEMS_MAX). */
  readonly errors: readonly InvalidAnnotationError[];
  /** Problems beyond those listed. */
  readonly omitted: number;
  readonly updates: readonly StatusUpdate[];
}
/** Stop containers: the steps due now, the record to write, and when to evaluate again. */
export interface StopDecision {
  readonly action: 'stop';
  readonly rule: 'K' | 'S';
  /** The container whose end fired the rule. */
  readonly trigger: string;
  readonly firedAtMs: number;
  readonly budgetMs: number;
  /** What is left of the budget at nowMs (never negative). */
  readonly remainingMs: number;
  /** Every container the rule stops, in stop order, including those already stopped. */
  readonly targets: readonly string[];
  /** Containers still running, in stop order: the plan. Only the current stage's are acted on. */
  readonly steps: readonly StopStep[];
  /** Stage of the first step: the only one acted on now. */
  readonly currentStage: number;
  /** Number of stages still to run, including the current one. */
  readonly stagesLeft: number;
  /**
   * Due now, in this order: the stop specs of the current stage not yet issued (`issue`), then,
   * when every one of them was issued, the escalation (`escalation`), if due.
   */
  readonly issue: readonly StopStep[];
  readonly escalation: { readonly why: EscalationWhy; readonly containers: readonly string[] } | undefined;
  /**
   * When the current stage's share ends (its stops counted as issued at nowMs if they are due):
   * past it, the escalation is due.
   */
  readonly stageDeadlineMs: number;
  /** When this decision changes with no change to the pod: evaluate again then (undefined: only a pod change). */
  readonly nextEvaluationAtMs: number | undefined;
  /**
   * The current stage starts this long after it would have on time (a controller that was away:
   * a failover or an outage), when more than LATE_AFTER_MS; its stages then share what is left
   * of the budget, or get their minimum when nothing is left.
   */
  readonly lateByMs: number | undefined;
  /** Stops recorded as issued, with stops evident from stop containers added (the record to extend). */
  readonly issued: readonly IssuedStop[];
  /** Containers still running though their escalation was issued at least the minimum share ago. */
  readonly failed: readonly string[];
  /** Containers the record lists as seen stopped after their stop (this decision's additions included). */
  readonly stopped: readonly string[];
  /** The pod's result from its main containers, recorded before an escalation ends the pod. */
  readonly result: 'Succeeded' | 'Failed';
  readonly updates: readonly StatusUpdate[];
}
/** Delete the pod (TerminatePod, or a recorded phase with containers still running). */
export interface DeleteDecision {
  readonly action: 'delete';
  readonly rule: 'K' | 'S';
  readonly trigger: string;
  /**
   * PhaseRecorded: the pod's phase is terminal (recorded by podlife) while containers still run.
   * RestartPodUnsupported: RestartPod asked for, but the keystone has no RestartAllContainers rule
   * for its exit (not every node that may run the pod supports it) or its kubelet ignores the rule,
   * so the pod is deleted as with TerminatePod.
   */
  readonly why: 'TerminatePod' | 'RestartPolicyAlways' | 'PhaseRecorded' | 'RestartPodUnsupported';
  readonly gracePeriodSeconds: number;
  readonly updates: readonly StatusUpdate[];
}
/** Record the terminal phase (`completion: phase`). */
export interface PhaseDecision {
  readonly action: 'phase';
  readonly rule: 'K' | 'S';
  readonly trigger: string;
  readonly phase: 'Succeeded' | 'Failed';
  /** Then the pod is deleted with what is left of the budget (at least 1 s). */
  readonly gracePeriodSeconds: number;
  readonly updates: readonly StatusUpdate[];
}
/** The outcome of `evaluatePod`, by `action`. */
export type Decision = NoneDecision | InvalidDecision | StopDecision | DeleteDecision | PhaseDecision;

export const DEFAULT_GRACE_SECONDS = 30;
export const DEFAULT_MIN_STAGE_MS = 2000;
/** Why a container is reported failed (the Event and the condition say it). */
export const STILL_RUNNING = "still running after its stop, its share of the grace period and the escalation to the kubelet's termination";
/** A stage that starts this much later than it would have on time was started by a controller that was away. */
export const LATE_AFTER_MS = 2000;
const NONE: Readonly<Record<NoneWhy, NoneDecision>> = Object.freeze({
  'not-ours': none('not-ours'),
  terminating: none('terminating'),
  terminal: none('terminal'),
  waiting: none('waiting'),
  'restart-always': none('restart-always'),
  'no-sidecars': none('no-sidecars'),
  'native-sidecars': none('native-sidecars'),
  'restart-in-place': none('restart-in-place'),
  done: none('done'),
});

function none(why: NoneWhy, updates: readonly StatusUpdate[] = NO_UPDATES): NoneDecision {
  return Object.freeze({ action: 'none', why, updates });
}

/** What the keystone rules say about a pod now (see the guarantees above). */
export function evaluatePod(pod: V1Pod, options: EvaluateOptions): Decision {
  if (pod.metadata?.deletionTimestamp) return NONE.terminating;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return endLeftovers(pod, options) ?? closeRecord(pod, options);
  const reading = readLifecycle(pod, options);
  if (reading.kind === 'not-ours') return NONE['not-ours'];
  const conditions = pod.status?.conditions;
  if (reading.kind === 'invalid') {
    return { action: 'invalid', errors: reading.errors, omitted: reading.omitted, updates: [invalidUpdate(reading.errors, reading.omitted)] };
  }
  const lifecycle = reading.lifecycle;
  const validity = findCondition(conditions, ConditionType.LifecycleValid);
  const becameValid = validity !== undefined && validity.status !== 'True' ? validUpdate() : undefined;

  const decision = lifecycle.keystones.length > 0 ? ruleK(pod, lifecycle, options) : ruleS(pod, lifecycle, options);
  if (becameValid === undefined) return decision;
  return { ...decision, updates: [becameValid, ...decision.updates] } as Decision;
}

/**
 * A terminal pod whose containers still run because podlife recorded its phase (completion by
 * phase, or an escalation that crashed between recording the result and deleting the pod): the
 * kubelet does not stop containers of a pod someone else made terminal, so delete it. Pods that
 * did not opt into phase completion and have no stop in progress are never touched here.
 */
function endLeftovers(pod: V1Pod, options: EvaluateOptions): DeleteDecision | undefined {
  const containers = pod.spec?.containers;
  if (!Array.isArray(containers) || !Array.isArray(pod.status?.containerStatuses)) return undefined;
  let running: string | undefined;
  for (const c of containers) {
    if (c && typeof c.name === 'string' && !isStopped(statusOf(pod, c.name))) {
      running = c.name;
      break;
    }
  }
  if (running === undefined) return undefined;
  const reading = readLifecycle(pod, options);
  if (reading.kind !== 'valid') return undefined;
  const inProgress = findCondition(pod.status?.conditions, ConditionType.SidecarsStopped)?.status === 'False';
  if (reading.lifecycle.completion !== 'phase' && !inProgress) return undefined;
  // Not before the Job has counted the recorded result: until then the kubelet could still
  // report the killed containers' view (a Failed phase) and the Job would count that instead.
  if (awaitsJobCount(pod)) return undefined;
  return {
    action: 'delete',
    rule: reading.lifecycle.keystones.length > 0 ? 'K' : 'S',
    trigger: running,
    why: 'PhaseRecorded',
    gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
    updates: NO_UPDATES,
  };
}

/** The Job controller's finalizer: present until the Job has counted the pod's result. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** True while a Job has yet to count this pod (its tracking finalizer is still on it). */
export function awaitsJobCount(pod: V1Pod): boolean {
  const finalizers = pod.metadata?.finalizers;
  return Array.isArray(finalizers) && finalizers.includes(JOB_TRACKING_FINALIZER);
}

/** What is left of a budget that started at `firedAtMs`, in whole seconds, at least 1 (0 would force-delete). */
function remainingGraceSeconds(pod: V1Pod, firedAtMs: number, nowMs: number): number {
  const budgetMs = (pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  return Math.max(1, Math.ceil((firedAtMs + budgetMs - nowMs) / 1000));
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

/**
 * Positions by name for long status lists, built once per list, so a found status costs one
 * lookup. A position is only a hint, checked against the list as it is now, so a caller that
 * changes the list in place (a replaced, added or reordered status) still gets the live answer:
 * a hint that no longer names the container falls back to a scan, and the index is rebuilt. A
 * name with no status at all costs a scan each time (a container the kubelet has not reported).
 */
const statusIndexes = new WeakMap<readonly V1ContainerStatus[], Map<string, number>>();
const SCAN_MAX = 8;

function statusOf(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  const statuses = pod.status?.containerStatuses;
  if (!Array.isArray(statuses)) return undefined;
  if (statuses.length <= SCAN_MAX) return scanStatuses(statuses, name);
  let index = statusIndexes.get(statuses);
  if (index === undefined) index = indexStatuses(statuses);
  const at = index.get(name);
  if (at !== undefined) {
    const s = statuses[at] as V1ContainerStatus | undefined;
    if (s?.name === name) return s;
  }
  // Not in the index, or moved: the list changed since it was indexed (or has no such status).
  const found = scanStatuses(statuses, name);
  if (found !== undefined) indexStatuses(statuses);
  return found;
}

function scanStatuses(statuses: readonly V1ContainerStatus[], name: string): V1ContainerStatus | undefined {
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i] as V1ContainerStatus;
    if (s?.name === name) return s;
  }
  return undefined;
}

/** The first position of each name (as a scan finds it), kept for `statuses`. */
function indexStatuses(statuses: readonly V1ContainerStatus[]): Map<string, number> {
  const index = new Map<string, number>();
  for (let i = statuses.length - 1; i >= 0; i--) {
    const s = statuses[i] as V1ContainerStatus;
    if (s && typeof s.name === 'string') index.set(s.name, i);
  }
  statusIndexes.set(statuses, index);
  return index;
}

/** Terminated and will not be restarted under the pod's restartPolicy. */
function isFinished(status: V1ContainerStatus | undefined, restartPolicy: string): boolean {
  const t = status?.state?.terminated;
  if (!t) return false;
  if (restartPolicy === 'Never') return true;
  if (restartPolicy === 'OnFailure') return t.exitCode === 0;
  return false;
}

/** Not running now: terminated, or waiting to be restarted after a termination. */
function isStopped(status: V1ContainerStatus | undefined): boolean {
  if (!status) return false;
  if (status.state?.terminated) return true;
  return status.state?.waiting !== undefined && status.lastState?.terminated !== undefined;
}

interface Exit {
  readonly exitCode: number | undefined;
  readonly finishedAtMs: number | undefined;
}
const NO_EXIT: Exit = Object.freeze({ exitCode: undefined, finishedAtMs: undefined });

function lastExit(status: V1ContainerStatus | undefined): Exit {
  const t = status?.state?.terminated ?? status?.lastState?.terminated;
  return { exitCode: t?.exitCode, finishedAtMs: timeMs(t?.finishedAt) };
}

function ruleK(pod: V1Pod, lifecycle: PodLifecycle, options: EvaluateOptions): Decision {
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  const conditions = pod.status?.conditions;
  const grace = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;

  // The first keystone to end fires the rule (earliest finishedAt; spec order breaks ties).
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

  if (lifecycle.onKeystoneExit === 'RestartPod') {
    // Already restarted in place by the kubelet (its own 137 record, not a keystone exit).
    if (restartedInPlace(statusOf(pod, keystone.name)) && kubeletHonoursRestartAll(pod)) return NONE['restart-in-place'];
    const rule = matchingRule(pod.spec?.containers?.[keystone.index], exit.exitCode ?? -1);
    // The kubelet restarts the pod in place on this exit: nothing of ours to do.
    if (rule?.action === RESTART_ALL_CONTAINERS && kubeletHonoursRestartAll(pod)) return NONE['restart-in-place'];
    const why = rule?.action === RESTART_ALL_CONTAINERS
      ? `the kubelet of node ${pod.spec?.nodeName ?? '<none>'} ignores the keystone's ${RESTART_ALL_CONTAINERS} rule (it writes no ${ALL_CONTAINERS_RESTARTING} condition)`
      : `the keystone has no ${RESTART_ALL_CONTAINERS} restart rule for this exit (podlife's webhook adds one only when every node that may run the pod declares ${RESTART_ALL_CONTAINERS_FEATURE})`;
    return {
      action: 'delete',
      rule: 'K',
      trigger: keystone.name,
      why: 'RestartPodUnsupported',
      gracePeriodSeconds: grace,
      updates: [keystoneFinishedUpdate(keystone.name, exit.exitCode, `RestartPod cannot restart in place: ${why}; deleting the pod with its grace period of ${grace}s instead (TerminatePod)`)],
    };
  }
  if (restartPolicy === 'Always') {
    return {
      action: 'delete',
      rule: 'K',
      trigger: keystone.name,
      why: 'RestartPolicyAlways',
      gracePeriodSeconds: grace,
      updates: [keystoneFinishedUpdate(keystone.name, exit.exitCode, 'deleting the pod (restartPolicy Always: a keystone exit ends the pod)')],
    };
  }

  if (lifecycle.onKeystoneExit === 'TerminatePod') {
    return {
      action: 'delete',
      rule: 'K',
      trigger: keystone.name,
      why: 'TerminatePod',
      gracePeriodSeconds: grace,
      updates: [keystoneFinishedUpdate(keystone.name, exit.exitCode, `deleting the pod with its grace period of ${grace}s`)],
    };
  }
  if (lifecycle.completion === 'phase') {
    const phase = phaseFromMains(pod, lifecycle);
    const firedAt = exit.finishedAtMs ?? timeMs(findCondition(conditions, ConditionType.KeystoneFinished)?.lastTransitionTime) ?? options.nowMs;
    return {
      action: 'phase',
      rule: 'K',
      trigger: keystone.name,
      phase,
      gracePeriodSeconds: remainingGraceSeconds(pod, firedAt, options.nowMs),
      updates: [keystoneFinishedUpdate(keystone.name, exit.exitCode, `marking the pod ${phase}, then ending the other containers through the kubelet`)],
    };
  }

  const finishedRecord = findCondition(conditions, ConditionType.KeystoneFinished);
  const firedAtMs = exit.finishedAtMs ?? timeMs(finishedRecord?.lastTransitionTime) ?? options.nowMs;
  // Announced once: the condition says it was.
  const keystoneUpdate =
    finishedRecord?.status === 'True' ? undefined : keystoneFinishedUpdate(keystone.name, exit.exitCode, 'stopping the other containers');
  return planStop(pod, lifecycle, 'K', keystone.name, firedAtMs, keystone, keystoneUpdate, options);
}

function ruleS(pod: V1Pod, lifecycle: PodLifecycle, options: EvaluateOptions): Decision {
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
    return { action: 'phase', rule: 'S', trigger, phase: phaseFromMains(pod, lifecycle), gracePeriodSeconds: grace, updates: NO_UPDATES };
  }
  const fired =
    firedAtMs ?? timeMs(findCondition(pod.status?.conditions, ConditionType.SidecarsStopped)?.lastTransitionTime) ?? options.nowMs;
  return planStop(pod, lifecycle, 'S', trigger, fired, undefined, undefined, options);
}

/** Succeeded when every main container that has terminated exited 0 (the kubelet's rule for native sidecars). */
function phaseFromMains(pod: V1Pod, lifecycle: PodLifecycle): 'Succeeded' | 'Failed' {
  for (const c of lifecycle.containers) {
    if (c.role === 'sidecar') continue;
    const code = statusOf(pod, c.name)?.state?.terminated?.exitCode;
    if (code !== undefined && code !== 0) return 'Failed';
  }
  return 'Succeeded';
}

function planStop(
  pod: V1Pod,
  lifecycle: PodLifecycle,
  rule: 'K' | 'S',
  trigger: string,
  firedAtMs: number,
  /** Rule K's keystone: every other main is stopped too. */
  keystone: ContainerLifecycle | undefined,
  /** The keystone's record, when it is still to be written. */
  keystoneUpdate: StatusUpdate | undefined,
  options: EvaluateOptions,
): Decision {
  const nowMs = options.nowMs;
  const minStage = options.minStageMs ?? DEFAULT_MIN_STAGE_MS;
  const method = options.strategy ?? 'exec';
  const restartPolicy = pod.spec?.restartPolicy ?? 'Always';
  const budgetMs = (pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  const budgetEnd = firedAtMs + budgetMs;

  // Stages: under rule K every other main together, then each sidecar alone in reverse spec
  // order. One flat list in stop order: its first `mainCount` entries are stage 0 when there are
  // any, and each entry after them is a stage of its own.
  const containers = lifecycle.containers;
  const order: ContainerLifecycle[] = [];
  const targets: string[] = [];
  if (keystone !== undefined) {
    for (const c of containers) {
      if (c !== keystone && c.role !== 'sidecar') {
        order.push(c);
        targets.push(c.name);
      }
    }
  }
  const mainCount = order.length;
  for (let i = containers.length - 1; i >= 0; i--) {
    const c = containers[i] as ContainerLifecycle;
    if (c.role === 'sidecar') {
      order.push(c);
      targets.push(c.name);
    }
  }
  const stageCount = mainCount > 0 ? order.length - mainCount + 1 : order.length;

  const progress: V1PodCondition | undefined = findCondition(pod.status?.conditions, ConditionType.SidecarsStopped);
  const recording = progress?.status === 'False';
  // The record read back, and then what only the pod shows (stop containers it does not list).
  const recorded: readonly IssuedStop[] = recording ? issuedStops(progress.message) : NOTHING_RECORDED;
  const issued = withEphemeralStops(pod, targets, recorded, nowMs);
  // Entries of older records carry no time: the record's own start stands in for it.
  const undated = recording ? (timeMs(progress.lastTransitionTime) ?? firedAtMs) : firedAtMs;
  const issuedAt = issuedTimes(issued, undated);

  const steps: StopStep[] = [];
  const issue: StopStep[] = [];
  let escalation: StopDecision['escalation'];
  let failed: readonly string[] = [];
  let currentStage = -1;
  let stageDeadlineMs = 0;
  let nextEvaluationAtMs: number | undefined;
  let lateByMs: number | undefined;
  let onTimeStart = firedAtMs; // when the next stage would have started with a controller always there
  for (let i = 0, end = 0; i < stageCount; i++) {
    const start = end;
    end = i === 0 && mainCount > 0 ? mainCount : start + 1;
    if (currentStage >= 0) {
      // A later stage: planned, not acted on now.
      for (let j = start; j < end; j++) {
        const c = order[j] as ContainerLifecycle;
        if (!isStopped(statusOf(pod, c.name))) steps.push(stopStep(c, i, method, issuedAt.get(c.name), false));
      }
      continue;
    }
    const running: ContainerLifecycle[] = [];
    for (let j = start; j < end; j++) {
      const c = order[j] as ContainerLifecycle;
      const status = statusOf(pod, c.name);
      if (!isStopped(status)) running.push(c);
      else onTimeStart = Math.max(onTimeStart, lastExit(status).finishedAtMs ?? onTimeStart);
    }
    if (running.length === 0) continue;
    currentStage = i;
    const stagesLeft = stageCount - i;
    // Each container gets its share from when its own stop was issued: an equal part of what is
    // left of the budget then, and never less than the minimum, however late that was.
    let stageIssued = false;
    let pending = false;
    for (const c of running) {
      const at = issuedAt.get(c.name);
      if (at === undefined) pending = true;
      else stageIssued = true;
      const from = at ?? nowMs;
      stageDeadlineMs = Math.max(stageDeadlineMs, from + Math.max(minStage, (budgetEnd - from) / stagesLeft));
    }
    const escalatedAt = issued.length > 0 ? escalationTime(issued, running, undated) : undefined;
    if (pending) {
      if (!stageIssued && nowMs - onTimeStart > LATE_AFTER_MS) lateByMs = nowMs - onTimeStart;
      nextEvaluationAtMs = stageDeadlineMs;
    } else if (escalatedAt !== undefined) {
      // Escalated, yet the pod is neither terminal nor deleted: the phase it recorded was written
      // over (the kubelet reports its own view until it ends the pod), or a step failed. Again.
      escalation = { why: 'not-ended', containers: running.map((c) => c.name) };
      if (nowMs >= escalatedAt + minStage) failed = escalation.containers;
      else nextEvaluationAtMs = escalatedAt + minStage;
    } else if (running.some((c) => stopContainerExit(pod, c.name) === NO_HANDLER_EXIT)) {
      escalation = { why: 'no-handler', containers: running.map((c) => c.name) };
    } else if (running.some((c) => stopNotDelivered(stopContainerExit(pod, c.name)))) {
      // Its stop container failed without delivering the stop (kill refused, endpoint down): the
      // share would be waited out for nothing.
      escalation = { why: 'not-delivered', containers: running.map((c) => c.name) };
    } else if (nowMs >= stageDeadlineMs) {
      escalation = { why: 'share', containers: running.map((c) => c.name) };
    } else {
      nextEvaluationAtMs = stageDeadlineMs;
    }
    for (const c of running) {
      const step = stopStep(c, i, method, issuedAt.get(c.name), escalation !== undefined);
      steps.push(step);
      if (!step.issued) issue.push(step);
    }
  }

  const updates: StatusUpdate[] = [];
  if (keystoneUpdate) updates.push(keystoneUpdate);

  // Containers seen stopped after their stop was issued: the record lists them, so that each
  // one's ContainerStopped Event goes out once, with the write that adds it.
  const stoppedBefore = recording ? stoppedContainers(progress.message) : NONE_STOPPED;
  const newlyStopped: readonly string[] = issuedAt.size > 0 ? stoppedSince(pod, targets, issuedAt, stoppedBefore) : NONE_STOPPED;

  if (steps.length === 0) {
    if (progress?.status === 'True') return updates.length > 0 ? none('done', updates) : NONE.done;
    const exits: SidecarExit[] = [];
    let lastStopMs = -Infinity;
    for (const name of targets) {
      const exit = lastExit(statusOf(pod, name));
      exits.push({ container: name, exitCode: exit.exitCode });
      if (exit.finishedAtMs !== undefined) lastStopMs = Math.max(lastStopMs, exit.finishedAtMs);
    }
    updates.push(stoppedUpdate(exits, restartPolicy, newlyStopped));
    const latency = Number.isFinite(lastStopMs) ? { stopLatencyMs: lastStopMs - firedAtMs } : {};
    return { action: 'none', why: 'done', updates, ...latency };
  }

  // The record is written when it starts, when it gains what only the pod showed (a stop
  // container added by a controller that died before recording it), when a container it
  // stopped is seen stopped, and on a failure.
  const stopped = newlyStopped.length === 0 ? stoppedBefore : [...stoppedBefore, ...newlyStopped];
  if (failed.length > 0) {
    const failure = stopFailedUpdate(targets, issued, failed.join(', '), STILL_RUNNING, stopped);
    updates.push({ ...failure, events: [...newlyStopped.map(containerStoppedEvent), ...failure.events] });
  } else if (progress === undefined || progress.status !== 'False' || issued.length > recorded.length || newlyStopped.length > 0) {
    updates.push(stoppingUpdate(targets, issued, stopped, newlyStopped));
  }
  return {
    action: 'stop',
    rule,
    trigger,
    firedAtMs,
    budgetMs,
    remainingMs: Math.max(0, budgetEnd - nowMs),
    targets,
    steps,
    currentStage,
    stagesLeft: stageCount - currentStage,
    issue,
    escalation,
    stageDeadlineMs,
    nextEvaluationAtMs,
    lateByMs,
    issued,
    failed,
    stopped,
    result: phaseFromMains(pod, lifecycle),
    updates,
  };
}

/** Targets whose stop was issued and that are stopped now, though the record does not list them yet. */
function stoppedSince(pod: V1Pod, targets: readonly string[], issuedAt: ReadonlyMap<string, number>, listed: readonly string[]): string[] {
  const seen = new Set(listed);
  const out: string[] = [];
  for (const name of targets) {
    if (issuedAt.has(name) && !seen.has(name) && isStopped(statusOf(pod, name))) out.push(name);
  }
  return out;
}

function stopStep(c: ContainerLifecycle, stage: number, method: StopMethod, issuedAtMs: number | undefined, escalate: boolean): StopStep {
  const role = c.role === 'sidecar' ? 'sidecar' : 'main';
  if (issuedAtMs === undefined) return { container: c.name, role, stage, stop: c.stop, method, issued: false, escalate };
  return { container: c.name, role, stage, stop: c.stop, method, issued: true, issuedAtMs, escalate };
}

const NOTHING_ISSUED: ReadonlyMap<string, number> = new Map();
const NOTHING_RECORDED: readonly IssuedStop[] = Object.freeze([]);
const NONE_STOPPED: readonly string[] = Object.freeze([]);

/** When each container's stop spec was first issued (`undated` for entries without a time). */
function issuedTimes(issued: readonly IssuedStop[], undated: number): ReadonlyMap<string, number> {
  if (issued.length === 0) return NOTHING_ISSUED;
  const out = new Map<string, number>();
  for (const s of issued) {
    if (s.escalated) continue;
    const at = s.atMs ?? undated;
    const known = out.get(s.container);
    if (known === undefined || at < known) out.set(s.container, at);
  }
  return out;
}

/** When the escalation that covers one of `running` was first issued, if it was. */
function escalationTime(issued: readonly IssuedStop[], running: readonly ContainerLifecycle[], undated: number): number | undefined {
  let at: number | undefined;
  for (const s of issued) {
    if (!s.escalated || !running.some((c) => c.name === s.container)) continue;
    const t = s.atMs ?? undated;
    if (at === undefined || t < at) at = t;
  }
  return at;
}

/**
 * A stop container's own failure: exit 1-127 (a refused kill, an endpoint that did not answer).
 * 0 is a delivered stop; 128 and above is the stop container ended by a signal, as a lingering
 * one is when its target's PID namespace ends.
 */
const stopNotDelivered = (exit: number | undefined): boolean => exit !== undefined && exit > 0 && exit < 128 && exit !== NO_HANDLER_EXIT;

/** The exit code of the container's ephemeral stop container, once it has ended. */
export function stopContainerExit(pod: V1Pod, container: string): number | undefined {
  const statuses = pod.status?.ephemeralContainerStatuses;
  if (!Array.isArray(statuses)) return undefined;
  const name = ephemeralName(container, false);
  for (const s of statuses) {
    const code = s?.name === name ? s.state?.terminated?.exitCode : undefined;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/**
 * The recorded stops, and the stops evident from ephemeral stop containers the record does not
 * list: such a container is itself a record that its stop was issued, and a controller that died
 * between adding it and writing the progress condition must neither add it again nor announce
 * the stop twice. `recorded` itself when the pod shows nothing more.
 */
function withEphemeralStops(pod: V1Pod, targets: readonly string[], recorded: readonly IssuedStop[], nowMs: number): readonly IssuedStop[] {
  const ephemerals = pod.spec?.ephemeralContainers;
  if (!Array.isArray(ephemerals) || ephemerals.length === 0) return recorded;
  const issued = [...recorded];
  const targetOf = new Map<string, string | undefined>();
  for (const e of ephemerals) if (e && typeof e.name === 'string') targetOf.set(e.name, e.targetContainerName);
  const seen = issuedSet(issued);
  for (const container of targets) {
    for (const escalated of [false, true]) {
      if (seen.has(issuedKey(container, escalated))) continue;
      const name = ephemeralName(container, escalated);
      if (targetOf.get(name) === container) issued.push({ container, escalated, atMs: ephemeralStartedAt(pod, name) ?? nowMs });
    }
  }
  return issued;
}

/** When a stop container started (running or terminated), as its status says. */
function ephemeralStartedAt(pod: V1Pod, name: string): number | undefined {
  const statuses = pod.status?.ephemeralContainerStatuses;
  if (!Array.isArray(statuses)) return undefined;
  for (const s of statuses) if (s?.name === name) return timeMs(s.state?.running?.startedAt ?? s.state?.terminated?.startedAt);
  return undefined;
}

function issuedKey(container: string, escalated: boolean): string {
  return escalated ? `${container}:KILL` : container;
}

function issuedSet(issued: readonly IssuedStop[]): Set<string> {
  const out = new Set<string>();
  for (const s of issued) out.add(issuedKey(s.container, s.escalated));
  return out;
}
