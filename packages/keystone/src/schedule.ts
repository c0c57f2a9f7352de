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
 *   failed once it is `minStageMs` old;
 * - a stop put off for want of an exec slot (a `!deferred` entry) is still to be issued: it is
 *   due again DEFERRED_RETRY_MS after it was put off, and every DEFERRED_RETRY_MS after that
 *   while the record still shows it; its share counts from its delivery like any other, and no
 *   escalation is due while a stop of the stage waits (docs/adr/0261).
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { ContainerLifecycle, PodLifecycle } from './annotations.js';
import { awaitsJobCount, isStopped, lastExit, statusOf, stopContainerExit, stopFoundNoHandler, stopNotDelivered } from './container-states.js';
import { DEFAULT_GRACE_SECONDS, DEFAULT_MIN_STAGE_MS, LATE_AFTER_MS, type EvaluateOptions, type Escalation, type EscalationWhy, type StopMethod, type StopStep } from './decision.js';
import { deliveryFoundNoHandler, escalationTime, type Progress } from './progress.js';

/** How soon a pod whose status patch met a newer pod is looked at again, if no event comes first. */
export const STALE_RETRY_MS = 500;

/**
 * How long a stop put off for want of an exec slot waits before it is tried again. A slot frees
 * as soon as one of the namespace's commands returns (a stop's budget, 10 s, at most), so a
 * second is short beside a stage's share (at least 2 s) and long beside a failed exec's cost
 * (the deferral itself runs nothing and writes the record once).
 */
export const DEFERRED_RETRY_MS = 1000;

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
  let sidecars = 0;
  let mainCount = 0;
  for (const c of containers) {
    if (c.role === 'sidecar') sidecars++;
    else if (keystone !== undefined && c !== keystone) mainCount++;
  }
  // Sized up front: every pass over a stopping pod builds these two.
  const order = new Array<ContainerLifecycle>(mainCount + sidecars);
  const targets = new Array<string>(mainCount + sidecars);
  let n = 0;
  if (keystone !== undefined) {
    for (const c of containers) {
      if (c !== keystone && c.role !== 'sidecar') {
        order[n] = c;
        targets[n++] = c.name;
      }
    }
  }
  for (let i = containers.length - 1; i >= 0; i--) {
    const c = containers[i] as ContainerLifecycle;
    if (c.role === 'sidecar') {
      order[n] = c;
      targets[n++] = c.name;
    }
  }
  return { order, targets, mainCount, stageCount: mainCount > 0 ? sidecars + 1 : sidecars };
}

/** The first entry of `order` in stage `i`. */
function stageStart(o: StopOrder, i: number): number {
  if (o.mainCount === 0) return i;
  return i === 0 ? 0 : o.mainCount + i - 1;
}

/** One past the last entry of `order` in stage `i`. */
function stageEnd(o: StopOrder, i: number): number {
  if (o.mainCount === 0) return i + 1;
  return i === 0 ? o.mainCount : o.mainCount + i;
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
    let running: ContainerLifecycle[] | undefined;
    for (let j = stageStart(o, i), end = stageEnd(o, i); j < end; j++) {
      const c = o.order[j] as ContainerLifecycle;
      const status = statusOf(pod, c.name);
      // A stage of one (every sidecar's) gets an array of one, not a grown one.
      if (!isStopped(status)) running = running === undefined ? [c] : (running.push(c), running);
      else onTimeStartMs = Math.max(onTimeStartMs, lastExit(status).finishedAtMs ?? onTimeStartMs);
    }
    if (running !== undefined) return { stage: i, running, onTimeStartMs };
  }
  return undefined;
}

/** When the current stage's share ends: each of `running` gets its share from its stop's issue (from now for one still to issue). */
export function stageDeadline(
  running: readonly ContainerLifecycle[],
  issuedAt: ReadonlyMap<string, number>,
  nowMs: number,
  budgetEndMs: number,
  stagesLeft: number,
  minStageMs: number,
): number {
  let deadlineMs = 0;
  for (const c of running) {
    const from = issuedAt.get(c.name) ?? nowMs;
    deadlineMs = Math.max(deadlineMs, from + Math.max(minStageMs, (budgetEndMs - from) / stagesLeft));
  }
  return deadlineMs;
}

/** How many of `running` had their stop issued. */
function issuedCount(running: readonly ContainerLifecycle[], issuedAt: ReadonlyMap<string, number>): number {
  if (issuedAt.size === 0) return 0;
  let n = 0;
  for (const c of running) if (issuedAt.has(c.name)) n++;
  return n;
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

/** Whether a stop put off at `deferredAtMs` (undefined: never) may be tried now. */
function retryDue(deferredAtMs: number | undefined, nowMs: number): boolean {
  return deferredAtMs === undefined || nowMs >= deferredAtMs + DEFERRED_RETRY_MS;
}

/**
 * When to look again for the stops of `running` put off for want of an exec slot: when the first
 * of them is due again, or, for one tried now, DEFERRED_RETRY_MS from now (put off once more, it
 * is not recorded again, so no write of ours wakes the pod). Undefined when none was put off.
 */
function deferredRetryAt(running: readonly ContainerLifecycle[], deferredAt: ReadonlyMap<string, number>, nowMs: number): number | undefined {
  let at: number | undefined;
  for (const c of running) {
    const since = deferredAt.get(c.name);
    if (since === undefined) continue;
    const next = retryDue(since, nowMs) ? nowMs + DEFERRED_RETRY_MS : since + DEFERRED_RETRY_MS;
    if (at === undefined || next < at) at = next;
  }
  return at;
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
  /** The least share of a stage, as the options give it or its default. */
  readonly minStageMs: number;
}

/**
 * The schedule of a stop of `order`'s containers that fired at `firedAtMs`, with the budget from
 * `budgetEndMs` on, over the progress read back (undefined when every target has stopped).
 */
export function scheduleStop(pod: V1Pod, order: StopOrder, progress: Progress, firedAtMs: number, budgetEndMs: number, options: EvaluateOptions): StopSchedule | undefined {
  const current = currentStage(pod, order, firedAtMs);
  if (current === undefined) return undefined;
  const nowMs = options.nowMs;
  const minStageMs = options.minStageMs ?? DEFAULT_MIN_STAGE_MS;
  const stagesLeft = order.stageCount - current.stage;
  const remainingMs = Math.max(0, budgetEndMs - nowMs);
  const deadlineMs = stageDeadline(current.running, progress.issuedAt, nowMs, budgetEndMs, stagesLeft, minStageMs);
  const issuedNow = issuedCount(current.running, progress.issuedAt);
  const pending = issuedNow < current.running.length;
  // A stage with stops still to issue waits for its deadline; only a stage whose stops all went out may escalate.
  const due = pending ? undefined : escalationDue(pod, namesOf(current.running), progress, deadlineMs, nowMs, minStageMs);
  const retryAtMs = progress.deferredAt.size === 0 ? undefined : deferredRetryAt(current.running, progress.deferredAt, nowMs);
  const nextAtMs = earliest(due === undefined ? deadlineMs : due.nextAtMs, retryAtMs);
  const escalation = due?.why === undefined ? undefined : escalationOf(pod, due.why, namesOf(current.running), remainingMs);
  // A stage put off by the exec slots is not late for want of a controller.
  const lateMs = issuedNow === 0 && retryAtMs === undefined ? nowMs - current.onTimeStartMs : 0;
  const late = lateMs > LATE_AFTER_MS ? lateMs : undefined;
  const steps: StopStep[] = [];
  const issue: StopStep[] = [];
  addSteps(steps, issue, pod, order, progress.issuedAt, current, options.strategy ?? 'exec', escalation !== undefined);
  return {
    steps,
    issue: retryAtMs === undefined ? issue : issue.filter((s) => retryDue(progress.deferredAt.get(s.container), nowMs)),
    escalation,
    failed: due?.failed ?? NO_FAILURES,
    currentStage: current.stage,
    stagesLeft,
    stageDeadlineMs: deadlineMs,
    nextEvaluationAtMs: nextAtMs,
    requeueAfterMs: requeueAfter(nextAtMs, nowMs),
    lateByMs: late,
    minStageMs,
  };
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

function namesOf(containers: readonly ContainerLifecycle[]): string[] {
  return containers.map((c) => c.name);
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

/** The plan into `steps`: the current stage's (acted on) then the later stages' (not yet); those due to issue now into `issue`. */
function addSteps(
  steps: StopStep[],
  issue: StopStep[],
  pod: V1Pod,
  order: StopOrder,
  issuedAt: ReadonlyMap<string, number>,
  current: CurrentStage,
  method: StopMethod,
  escalate: boolean,
): void {
  for (const c of current.running) {
    const step = stopStep(c, current.stage, method, issuedAt.get(c.name), escalate);
    steps.push(step);
    if (!step.issued) issue.push(step);
  }
  for (let i = current.stage + 1; i < order.stageCount; i++) {
    for (let j = stageStart(order, i), end = stageEnd(order, i); j < end; j++) {
      const c = order.order[j] as ContainerLifecycle;
      if (!isStopped(statusOf(pod, c.name))) steps.push(stopStep(c, i, method, issuedAt.get(c.name), false));
    }
  }
}

function stopStep(c: ContainerLifecycle, stage: number, method: StopMethod, issuedAtMs: number | undefined, escalate: boolean): StopStep {
  const role = c.role === 'sidecar' ? 'sidecar' : 'main';
  if (issuedAtMs === undefined) return { container: c.name, role, stage, stop: c.stop, method, issued: false, escalate };
  return { container: c.name, role, stage, stop: c.stop, method, issued: true, issuedAtMs, escalate };
}
