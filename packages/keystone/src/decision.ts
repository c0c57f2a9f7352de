/**
 * What `evaluatePod` returns: the decision types, their defaults and the fixed `none` answers.
 *
 * Guarantees:
 * - types and constants only, no logic: every module on the stop path names a decision the same
 *   way, and none of them computes one but the rules (`rule-k.ts`, `rule-s.ts`), the schedule
 *   (`schedule.ts`) and `evaluatePod`;
 * - a decision carries everything its actuators and its Events need (grace periods, whether a Job
 *   still has to count the pod, how late a stage is, a stop container's exit), so nothing
 *   downstream reads the pod again to decide;
 * - `requeueAfterMs` is the only time a caller waits for: it is computed in `schedule.ts`.
 */
import type { InvalidAnnotationError } from '@podlife/core';
import type { LifecycleOptions, StopSpec } from './annotations.js';
import { NO_UPDATES, STILL_RUNNING_NOTE, type IssuedStop, type StatusUpdate } from './records.js';

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
  /** The cluster runs ContainerStopSignals: read the webhook's stop signals as expected (NativeMechanisms). */
  stopSignals?: boolean;
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

/** The escalation due now: what to end through the kubelet, why, and how. */
export interface Escalation {
  readonly why: EscalationWhy;
  readonly containers: readonly string[];
  /** The grace period of the deletion: what is left of the budget, at least 1 s. */
  readonly gracePeriodSeconds: number;
  /** Delete the pod after recording its result; false while a Job has yet to count that result. */
  readonly thenDelete: boolean;
  /** For `not-delivered`: the exit code of each container's stop container. */
  readonly stopExits?: Readonly<Record<string, number>>;
}

/** Nothing to do now, and why; maybe a record to close or a time to look again. */
export interface NoneDecision {
  readonly action: 'none';
  readonly why: NoneWhy;
  readonly updates: readonly StatusUpdate[];
  /**
   * With the update that closes a stop's record: from when the rule fired to the last stopped
   * container's finishedAt (the stop latency the metrics report).
   */
  readonly stopLatencyMs?: number;
  readonly requeueAfterMs?: undefined;
}
/** The annotations are invalid: record why, act on nothing. */
export interface InvalidDecision {
  readonly action: 'invalid';
  /** The first problems (at most REPORTED_PROBLEMS_MAX). */
  readonly errors: readonly InvalidAnnotationError[];
  /** Problems beyond those listed. */
  readonly omitted: number;
  readonly updates: readonly StatusUpdate[];
  readonly requeueAfterMs?: undefined;
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
   * Due now, in this order: the stop specs of the current stage not yet issued (`issue`; one put
   * off for want of an exec slot once it is due again), then, when every one of them was issued,
   * the escalation (`escalation`), if due.
   */
  readonly issue: readonly StopStep[];
  readonly escalation: Escalation | undefined;
  /**
   * When the current stage's share ends (its stops counted as issued at nowMs if they are due):
   * past it, the escalation is due.
   */
  readonly stageDeadlineMs: number;
  /** When this decision changes with no change to the pod: evaluate again then (undefined: only a pod change). */
  readonly nextEvaluationAtMs: number | undefined;
  /** `nextEvaluationAtMs` as a delay from the decision (at least 1 ms): what the reconciler returns. */
  readonly requeueAfterMs: number | undefined;
  /**
   * The current stage starts this long after it would have on time (a controller that was away:
   * a failover or an outage), when more than LATE_AFTER_MS; its stages then share what is left
   * of the budget, or get their minimum when nothing is left.
   */
  readonly lateByMs: number | undefined;
  /** The least share a stage gets (the options' `minStageMs` or its default): what a late stop's Event says each stage still has. */
  readonly minStageMs: number;
  /** Stops recorded as issued, with stops evident from stop containers added (the record to extend). */
  readonly issued: readonly IssuedStop[];
  /** Containers still running though their escalation was issued at least the minimum share ago. */
  readonly failed: readonly string[];
  /** Containers the record lists as seen stopped after their stop (this decision's additions included). */
  readonly stopped: readonly string[];
  /** Containers seen stopped by this decision, not yet in the record: each gets its ContainerStopped Event. */
  readonly newlyStopped: readonly string[];
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
  readonly requeueAfterMs?: undefined;
}
/** Record the terminal phase (`completion: phase`). */
export interface PhaseDecision {
  readonly action: 'phase';
  readonly rule: 'K' | 'S';
  readonly trigger: string;
  readonly phase: 'Succeeded' | 'Failed';
  /** Then the pod is deleted with what is left of the budget (at least 1 s). */
  readonly gracePeriodSeconds: number;
  /** Delete the pod once its phase is recorded; false while a Job has yet to count it (a later pass deletes it). */
  readonly thenDelete: boolean;
  readonly updates: readonly StatusUpdate[];
  readonly requeueAfterMs?: undefined;
}
/** The outcome of `evaluatePod`, by `action`. */
export type Decision = NoneDecision | InvalidDecision | StopDecision | DeleteDecision | PhaseDecision;

export const DEFAULT_GRACE_SECONDS = 30;
export const DEFAULT_MIN_STAGE_MS = 2000;
/** Why a container is reported failed (the Event and the condition say it). */
export const STILL_RUNNING = STILL_RUNNING_NOTE;
/** A stage that starts this much later than it would have on time was started by a controller that was away. */
export const LATE_AFTER_MS = 2000;

export function none(why: NoneWhy, updates: readonly StatusUpdate[] = NO_UPDATES): NoneDecision {
  return Object.freeze({ action: 'none', why, updates });
}

/** The `none` decisions without updates, built once. */
export const NONE: Readonly<Record<NoneWhy, NoneDecision>> = Object.freeze({
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
