/**
 * The schedule of a stop: in which order containers stop, which stage is current, when its share
 * ends, whether the escalation is due, and when to look again.
 *
 * Guarantees:
 * - pure and clock-free (the time is an argument); the only place keystone computes a deadline
 *   or a requeue time — the reconciler returns `requeueAfterMs` as it is;
 * - order however late the caller comes: stages are every other main together (rule K), then
 *   each sidecar alone in reverse spec order; no sidecar is in the current stage while a main
 *   still runs, and a stage's stop specs are all issued before its escalation is due;
 * - one budget, the pod's terminationGracePeriodSeconds, counted from when the rule fired and
 *   shared by stages; each container's share counts from when its stop was issued (the time the
 *   progress record holds: when the delivery returned): an equal part of what was left then,
 *   never less than `minStageMs`, so a late caller spends what is left, or the minimum;
 * - the escalation is due when the share ran out, when a delivery or a stop container found PID 1
 *   without a handler, when a stop container failed without delivering, and again while an
 *   escalation did not take — then not hurried (every `minStageMs`), its containers reported
 *   failed once it is `minStageMs` old.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerLifecycle, PodLifecycle } from './annotations.js';
import { awaitsJobCount, isStopped, lastExit, statusOf, stopContainerExit, stopFoundNoHandler, stopNotDelivered } from './container-states.js';
import { DEFAULT_GRACE_SECONDS, LATE_AFTER_MS, type Escalation, type EscalationWhy, type Lateness, type StopMethod, type StopStep } from './decision.js';
import { deliveryFoundNoHandler, escalationTime, type Progress } from './progress.js';

/** How soon a pod whose status patch met a newer pod is looked at again, if no event comes first. */
export const STALE_RETRY_MS = 500;

/** The containers a rule stops, in stop order, and how they group into stages. */
export interface StopOrder {
  readonly order: readonly ContainerLifecycle[];
  readonly targets: readonly string[];
  /** The first `mainCount` entries of `order` are stage 0 (rule K's other mains); each entry after is a stage of its own. */
  readonly mainCount: number;
  readonly stageCount: number;
}

/** Rule K's other mains together (when `keystone` is given), then each sidecar alone in reverse spec order. */
export function stopOrder(lifecycle: PodLifecycle, keystone: ContainerLifecycle | undefined): StopOrder {
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
  return { order, targets, mainCount, stageCount: mainCount > 0 ? order.length - mainCount + 1 : order.length };
}

/** The entries of `order` in stage `i`: [start, end). */
function stageBounds(o: StopOrder, i: number): readonly [number, number] {
  if (o.mainCount === 0) return [i, i + 1];
  return i === 0 ? [0, o.mainCount] : [o.mainCount + i - 1, o.mainCount + i];
}

/** The first stage with a container still running, and when it would have started with a controller always there. */
export interface CurrentStage {
  readonly stage: number;
  readonly running: readonly ContainerLifecycle[];
  readonly onTimeStartMs: number;
}

/** The current stage: the first one with a container not stopped; undefined when every target has stopped. */
export function currentStage(pod: V1Pod, o: StopOrder, firedAtMs: number): CurrentStage | undefined {
  let onTimeStartMs = firedAtMs;
  for (let i = 0; i < o.stageCount; i++) {
    const [start, end] = stageBounds(o, i);
    const running: ContainerLifecycle[] = [];
    for (let j = start; j < end; j++) {
      const c = o.order[j] as ContainerLifecycle;
      const status = statusOf(pod, c.name);
      if (!isStopped(status)) running.push(c);
      else onTimeStartMs = Math.max(onTimeStartMs, lastExit(status).finishedAtMs ?? onTimeStartMs);
    }
    if (running.length > 0) return { stage: i, running, onTimeStartMs };
  }
  return undefined;
}

/** When the current stage's share ends, and whether some of its stops are still to issue (then counted from now). */
export function stageDeadline(
  running: readonly ContainerLifecycle[],
  issuedAt: ReadonlyMap<string, number>,
  timing: { readonly nowMs: number; readonly budgetEndMs: number; readonly stagesLeft: number; readonly minStageMs: number },
): { readonly deadlineMs: number; readonly pending: boolean; readonly stageIssued: boolean } {
  let deadlineMs = 0;
  let pending = false;
  let stageIssued = false;
  for (const c of running) {
    const at = issuedAt.get(c.name);
    if (at === undefined) pending = true;
    else stageIssued = true;
    const from = at ?? timing.nowMs;
    deadlineMs = Math.max(deadlineMs, from + Math.max(timing.minStageMs, (timing.budgetEndMs - from) / timing.stagesLeft));
  }
  return { deadlineMs, pending, stageIssued };
}

/** What is due for a stage whose stops were all issued: an escalation and why, the containers failed, when to look again. */
export interface EscalationDue {
  readonly why: EscalationWhy | undefined;
  readonly failed: readonly string[];
  readonly nextAtMs: number | undefined;
}

const NO_FAILURES: readonly string[] = Object.freeze([]);

/** Whether the escalation of a stage whose stops were all issued is due now (see the guarantees above). */
export function escalationDue(pod: V1Pod, running: readonly string[], progress: Progress, deadlineMs: number, nowMs: number, minStageMs: number): EscalationDue {
  const escalatedAt = progress.issued.length > 0 ? escalationTime(progress, running) : undefined;
  if (escalatedAt !== undefined) {
    // Escalated, yet the pod is neither terminal nor deleted: the phase it recorded was written
    // over (the kubelet reports its own view until it ends the pod), or a step failed. Again, but
    // not hurried: the kubelet or the Job controller moves next.
    const failed = nowMs >= escalatedAt + minStageMs ? running : NO_FAILURES;
    return { why: 'not-ended', failed, nextAtMs: nowMs + minStageMs };
  }
  if (running.some((c) => deliveryFoundNoHandler(progress, c) || stopFoundNoHandler(stopContainerExit(pod, c)))) {
    return { why: 'no-handler', failed: NO_FAILURES, nextAtMs: undefined };
  }
  if (running.some((c) => stopNotDelivered(stopContainerExit(pod, c)))) {
    // Its stop container failed without delivering the stop (kill refused, endpoint down): the
    // share would be waited out for nothing.
    return { why: 'not-delivered', failed: NO_FAILURES, nextAtMs: undefined };
  }
  if (nowMs >= deadlineMs) return { why: 'share', failed: NO_FAILURES, nextAtMs: undefined };
  return { why: undefined, failed: NO_FAILURES, nextAtMs: deadlineMs };
}

/** The delay to evaluate again after, from the decision's time; at least 1 ms. */
export function requeueAfter(nextAtMs: number | undefined, nowMs: number): number | undefined {
  return nextAtMs === undefined ? undefined : Math.max(1, nextAtMs - nowMs);
}

/** What is left of a budget that started at `firedAtMs`, in whole seconds, at least 1 (0 would force-delete). */
export function remainingGraceSeconds(pod: V1Pod, firedAtMs: number, nowMs: number): number {
  const budgetMs = (pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  return Math.max(1, Math.ceil((firedAtMs + budgetMs - nowMs) / 1000));
}

/** The inputs of a stop's schedule. */
export interface ScheduleInput {
  readonly pod: V1Pod;
  readonly order: StopOrder;
  readonly progress: Progress;
  readonly firedAtMs: number;
  readonly budgetMs: number;
  readonly nowMs: number;
  readonly minStageMs: number;
  readonly method: StopMethod;
}

/** A stop's schedule: the plan, what is due now, and when to look again. */
export interface StopSchedule {
  readonly steps: readonly StopStep[];
  readonly issue: readonly StopStep[];
  readonly escalation: Escalation | undefined;
  readonly failed: readonly string[];
  readonly currentStage: number;
  readonly stagesLeft: number;
  readonly stageDeadlineMs: number;
  readonly nextEvaluationAtMs: number | undefined;
  readonly requeueAfterMs: number | undefined;
  readonly lateByMs: number | undefined;
  readonly late: Lateness | undefined;
}

/** The schedule of a stop (undefined when every target has stopped). */
export function scheduleStop(s: ScheduleInput): StopSchedule | undefined {
  const current = currentStage(s.pod, s.order, s.firedAtMs);
  if (current === undefined) return undefined;
  const stagesLeft = s.order.stageCount - current.stage;
  const budgetEndMs = s.firedAtMs + s.budgetMs;
  const running = current.running.map((c) => c.name);
  const deadline = stageDeadline(current.running, s.progress.issuedAt, { nowMs: s.nowMs, budgetEndMs, stagesLeft, minStageMs: s.minStageMs });
  const late = deadline.pending && !deadline.stageIssued && s.nowMs - current.onTimeStartMs > LATE_AFTER_MS ? s.nowMs - current.onTimeStartMs : undefined;
  const due: EscalationDue = deadline.pending
    ? { why: undefined, failed: NO_FAILURES, nextAtMs: deadline.deadlineMs }
    : escalationDue(s.pod, running, s.progress, deadline.deadlineMs, s.nowMs, s.minStageMs);
  const remainingMs = Math.max(0, budgetEndMs - s.nowMs);
  const escalation = due.why === undefined ? undefined : escalationOf(s.pod, due.why, running, remainingMs);
  const { steps, issue } = stepsOf(s, current, escalation !== undefined);
  return {
    steps,
    issue,
    escalation,
    failed: due.failed,
    currentStage: current.stage,
    stagesLeft,
    stageDeadlineMs: deadline.deadlineMs,
    nextEvaluationAtMs: due.nextAtMs,
    requeueAfterMs: requeueAfter(due.nextAtMs, s.nowMs),
    lateByMs: late,
    late: late === undefined ? undefined : { byMs: late, remainingMs, stagesLeft, minStageMs: s.minStageMs },
  };
}

function escalationOf(pod: V1Pod, why: EscalationWhy, containers: readonly string[], remainingMs: number): Escalation {
  const base = { why, containers, gracePeriodSeconds: Math.max(1, Math.ceil(remainingMs / 1000)), thenDelete: !awaitsJobCount(pod) };
  if (why !== 'not-delivered') return base;
  const stopExits: Record<string, number> = {};
  for (const c of containers) {
    const exit = stopContainerExit(pod, c);
    if (exit !== undefined) stopExits[c] = exit;
  }
  return { ...base, stopExits };
}

/** The plan: the current stage's steps (acted on) then the later stages' (not yet), and those due to issue now. */
function stepsOf(s: ScheduleInput, current: CurrentStage, escalate: boolean): { steps: StopStep[]; issue: StopStep[] } {
  const steps: StopStep[] = [];
  const issue: StopStep[] = [];
  for (const c of current.running) {
    const step = stopStep(c, current.stage, s.method, s.progress.issuedAt.get(c.name), escalate);
    steps.push(step);
    if (!step.issued) issue.push(step);
  }
  for (let i = current.stage + 1; i < s.order.stageCount; i++) {
    const [start, end] = stageBounds(s.order, i);
    for (let j = start; j < end; j++) {
      const c = s.order.order[j] as ContainerLifecycle;
      if (!isStopped(statusOf(s.pod, c.name))) steps.push(stopStep(c, i, s.method, s.progress.issuedAt.get(c.name), false));
    }
  }
  return { steps, issue };
}

function stopStep(c: ContainerLifecycle, stage: number, method: StopMethod, issuedAtMs: number | undefined, escalate: boolean): StopStep {
  const role = c.role === 'sidecar' ? 'sidecar' : 'main';
  if (issuedAtMs === undefined) return { container: c.name, role, stage, stop: c.stop, method, issued: false, escalate };
  return { container: c.name, role, stage, stop: c.stop, method, issued: true, issuedAtMs, escalate };
}
