/**
 * Acting on a decision: one pass of one-shot actuators, nothing waited for. `evaluatePod` says
 * what is due; this does exactly that and reports it.
 *
 * Guarantees:
 * - a stop decision: the stop specs due (one stage, in parallel), then the escalation when due
 *   or when a stop found PID 1 without a handler for its signal (the kernel drops such a signal
 *   sent from inside the PID namespace, so waiting would only spend the share);
 * - escalation comes from outside the container: the pod's result (from its main containers)
 *   is recorded in status.phase, then the pod is deleted with what is left of the budget (at
 *   least 1 s) so that the kubelet ends what still runs — unless a Job has yet to count that
 *   result, in which case the deletion is left to a later pass (docs/adr/0101);
 * - TerminatePod deletes with the pod's grace period; completion by phase records the phase,
 *   then deletes the pod the same way;
 * - every attempted stop is returned with the time its attempt returned (a stop through pods/exec
 *   has reached the container by then, however slow the exec was), for the caller to add to the
 *   progress record, so that a container's share counts from its stop, not from the decision;
 *   each is reported (with every other action) to `report`, for Events and metrics;
 * - a status patch refused because the pod changed since it was read (its `test` operation) is
 *   `stale`, not a failure: the caller evaluates again on the newer pod;
 * - never throws for API failures.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { formatStopSpec, type StopSpec } from '../annotations.js';
import type { KeystoneConfig } from '../config.js';
import { DEFAULT_MIN_STAGE_MS, STILL_RUNNING, awaitsJobCount, stopContainerExit, type Decision, type EscalationWhy, type StopDecision, type StopMethod } from '../evaluate.js';
import { ConditionType, EventReason, stopFailedUpdate, stoppingUpdate, type IssuedStop, type LifecycleEvent, type StatusUpdate } from '../records.js';
import { podRef, type PodApi, type PodExecApi } from './api.js';
import { deletePod, type ActionOutcome } from './delete.js';
import { stopByEphemeral } from './ephemeral.js';
import { stopByExec, type StopAttempt } from './exec.js';
import { markPhase } from './phase.js';

/** What `actOn` did, one report per action, for Events and metrics. */
export type ActionReport =
  | {
      readonly kind: 'stop-issued';
      readonly container: string;
      readonly stop: string;
      readonly method: StopMethod;
      readonly ok: boolean;
      readonly detail: string;
      readonly error?: string;
      /** The stage started late (a controller that was away): how late, and what that leaves. */
      readonly late?: { readonly byMs: number; readonly remainingMs: number; readonly stagesLeft: number; readonly minStageMs: number };
    }
  | {
      readonly kind: 'escalated';
      readonly container: string;
      readonly why: EscalationWhy;
      readonly stop: string;
      readonly outcome: 'done' | 'already' | 'failed';
      readonly detail: string;
      readonly error?: string;
      /** For `not-delivered`: the exit code of the container's stop container. */
      readonly stopExit?: number;
    }
  | { readonly kind: 'deleted' | 'phase'; readonly outcome: 'done' | 'already' | 'failed'; readonly detail: string; readonly error?: string };

/** The APIs, settings and clock a pass of `actOn` works with. */
export interface ActContext {
  readonly pods: PodApi;
  readonly exec?: PodExecApi;
  readonly config?: KeystoneConfig;
  /** The time the decision was made at. */
  readonly nowMs: number;
  /** The clock a stop's time is read from when its attempt returns (default: `nowMs` for all). */
  now?(): number;
  /** Every action, for Events (see `reportEvent`) and metrics. */
  report?(report: ActionReport): void;
  readonly signal?: AbortSignal;
}

/** The outcome of one pass of `actOn`. */
export interface ActResult {
  /** Stops attempted in this pass (escalations included), to add to the progress record. */
  readonly issued: readonly IssuedStop[];
  /** False when an action failed: the caller retries later. */
  readonly ok: boolean;
  /** The pod as a status patch of this pass returned it, when one was made. */
  readonly written?: V1Pod;
  /** A status patch found the pod changed since it was read: evaluate again on the newer pod. */
  readonly stale?: boolean;
}

const NOTHING: ActResult = Object.freeze({ issued: [], ok: true });

/** The Event for an action report (undefined for reports that carry no Event of their own). */
export function reportEvent(report: ActionReport): LifecycleEvent | undefined {
  switch (report.kind) {
    case 'stop-issued':
      return report.ok
        ? { type: 'Normal', reason: EventReason.StoppingContainer, note: `stopping container ${report.container} with ${report.stop} via ${report.detail}${lateNote(report.late)}`, action: 'Stop' }
        : {
            type: 'Warning',
            reason: EventReason.StopFailed,
            note: `could not deliver ${report.stop} to container ${report.container}: ${report.error ?? 'unknown error'}`,
            action: 'Stop',
          };
    case 'escalated':
      return escalationEvent(report);
    case 'deleted':
    case 'phase':
      return report.outcome === 'failed'
        ? { type: 'Warning', reason: EventReason.StopFailed, note: `${report.detail} failed: ${report.error ?? 'unknown error'}`, action: 'Stop' }
        : undefined;
  }
}

function escalationEvent(report: ActionReport & { kind: 'escalated' }): LifecycleEvent | undefined {
  if (report.outcome === 'failed') {
    return { type: 'Warning', reason: EventReason.StopFailed, note: `could not end container ${report.container} through the kubelet (${report.detail}): ${report.error ?? 'unknown error'}`, action: 'Stop' };
  }
  switch (report.why) {
    case 'no-handler':
      return {
        type: 'Warning',
        reason: EventReason.StopFailed,
        note:
          `container ${report.container} cannot be stopped with ${report.stop}: its PID 1 has no handler for the signal, and the kernel drops ` +
          `a signal sent to a PID namespace's init from inside it (exec and ephemeral containers run inside); ending it through the kubelet instead ` +
          `(${report.detail}); remedies: a PID 1 that handles the signal (an init such as tini), a preset:/http: stop, or native sidecars`,
        action: 'Stop',
      };
    case 'share':
      return {
        type: 'Normal',
        reason: EventReason.StoppingContainer,
        note: `container ${report.container} outlived its share of the grace period after ${report.stop}; ending it through the kubelet (${report.detail})`,
        action: 'Stop',
      };
    case 'not-delivered':
      return {
        type: 'Warning',
        reason: EventReason.StopFailed,
        note:
          `the stop container of ${report.container} exited ${report.stopExit ?? 'non-zero'} without delivering ${report.stop} ` +
          `(its log says why: a kill refused by the container's user, an endpoint that did not answer); ending it through the kubelet instead (${report.detail})`,
        action: 'Stop',
      };
    case 'not-ended':
      return undefined; // repeated while the first escalation has not taken; the first one was announced
  }
}

/** Says how late a stop goes out and what that leaves of the budget (DESIGN 3.2). */
function lateNote(late: (ActionReport & { kind: 'stop-issued' })['late']): string {
  if (!late) return '';
  const left = late.remainingMs > 0 ? `${seconds(late.remainingMs)} of the budget left for ${late.stagesLeft} stage(s)` : 'nothing left of the budget';
  return ` (${seconds(late.byMs)} late, the controller was unavailable: ${left}, at least ${seconds(late.minStageMs)} each)`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** Carries out what `decision` says is due now. */
export async function actOn(pod: V1Pod, decision: Decision, ctx: ActContext): Promise<ActResult> {
  switch (decision.action) {
    case 'stop':
      return actOnStop(pod, decision, ctx);
    case 'delete': {
      const r = await deletePod(ctx.pods, pod, decision.gracePeriodSeconds);
      ctx.report?.({ kind: 'deleted', ...r });
      return { issued: [], ok: r.outcome !== 'failed' };
    }
    case 'phase': {
      // The kubelet never stops the containers of a pod someone else made terminal: once the
      // result is recorded, the pod's deletion has it end them (docs/adr/0100).
      const r = await markPhase(ctx.pods, pod, decision.phase);
      if (r.outcome === 'stale') return { issued: [], ok: true, stale: true };
      ctx.report?.({ kind: 'phase', outcome: r.outcome, detail: r.detail, ...(r.error !== undefined ? { error: r.error } : {}) });
      if (r.outcome === 'failed') return { issued: [], ok: false };
      const written = r.written;
      // A Job pod is deleted once the Job has counted the result (evaluatePod's PhaseRecorded).
      if (awaitsJobCount(pod)) return { issued: [], ok: true, ...(written ? { written } : {}) };
      const d = await deletePod(ctx.pods, pod, decision.gracePeriodSeconds);
      ctx.report?.({ kind: 'deleted', ...d });
      return { issued: [], ok: d.outcome !== 'failed', ...(written ? { written } : {}) };
    }
    default:
      return NOTHING;
  }
}

async function actOnStop(pod: V1Pod, decision: StopDecision, ctx: ActContext): Promise<ActResult> {
  const config = ctx.config ?? {};
  const issued: IssuedStop[] = [];
  let noHandler = false;
  const late =
    decision.lateByMs === undefined
      ? undefined
      : { byMs: decision.lateByMs, remainingMs: decision.remainingMs, stagesLeft: decision.stagesLeft, minStageMs: config.minStageMs ?? DEFAULT_MIN_STAGE_MS };
  const attempts = await Promise.all(
    decision.issue.map(async (step) => {
      const attempt = await issueStop(pod, step.container, step.stop, step.method, ctx);
      const atMs = Math.max(ctx.nowMs, ctx.now?.() ?? ctx.nowMs);
      ctx.report?.({
        kind: 'stop-issued',
        container: step.container,
        stop: formatStopSpec(step.stop),
        method: attempt.method,
        ok: attempt.ok,
        detail: attempt.detail,
        ...(attempt.error !== undefined ? { error: attempt.error } : {}),
        ...(late ? { late } : {}),
      });
      return { step, attempt, atMs };
    }),
  );
  for (const { step, attempt, atMs } of attempts) {
    issued.push({ container: step.container, escalated: false, atMs });
    noHandler ||= attempt.noHandler === true;
  }
  let escalation = decision.escalation;
  // `issue` is every stop spec of the current stage still to send: after this pass the whole
  // stage has had its stop, so a PID 1 that cannot receive it ends the stage through the kubelet.
  if (noHandler) {
    escalation = { why: 'no-handler', containers: decision.steps.filter((s) => s.stage === decision.currentStage).map((s) => s.container) };
  }
  if (!escalation) return { issued, ok: true };

  const r = await endThroughKubelet(pod, decision, ctx);
  if (r.outcome === 'stale') return { issued, ok: true, stale: true };
  const outcome0 = r.outcome;
  const stops = new Map(decision.steps.map((s) => [s.container, formatStopSpec(s.stop)]));
  escalation.containers.forEach((container, i) => {
    const outcome = i === 0 || outcome0 === 'failed' ? outcome0 : 'already';
    const stopExit = escalation.why === 'not-delivered' ? stopContainerExit(pod, container) : undefined;
    ctx.report?.({
      kind: 'escalated',
      container,
      why: escalation.why,
      stop: stops.get(container) ?? '',
      outcome,
      detail: r.detail,
      ...(r.error !== undefined ? { error: r.error } : {}),
      ...(stopExit !== undefined ? { stopExit } : {}),
    });
    // A repeated escalation is not a new entry: the first one dates the failure report.
    if (escalation.why !== 'not-ended') issued.push({ container, escalated: true, atMs: ctx.nowMs });
  });
  return { issued, ok: r.outcome !== 'failed', ...(r.written ? { written: r.written } : {}) };
}

/**
 * The escalation: record the pod's result from its main containers (so that a Job counts it, and
 * never counts the kubelet's view of killed sidecars), then delete the pod with what is left of
 * the budget so that the kubelet, from outside, ends every container still running.
 */
async function endThroughKubelet(pod: V1Pod, decision: StopDecision, ctx: ActContext): Promise<PhaseOutcome> {
  const phase = await markPhase(ctx.pods, pod, decision.result);
  if (phase.outcome === 'failed' || phase.outcome === 'stale') return phase;
  if (awaitsJobCount(pod)) return { ...phase, detail: `${phase.detail}; the pod is deleted once its Job has counted it` };
  const grace = Math.max(1, Math.ceil(decision.remainingMs / 1000));
  const deleted = await deletePod(ctx.pods, pod, grace);
  return { ...deleted, detail: `${phase.detail}, then ${deleted.detail}`, ...(phase.written ? { written: phase.written } : {}) };
}

type PhaseOutcome = Awaited<ReturnType<typeof markPhase>>;

/** Delivers a stop spec: the preferred method first, the other as fallback where it can apply. */
export async function issueStop(
  pod: V1Pod,
  container: string,
  spec: StopSpec,
  preferred: StopMethod,
  ctx: Pick<ActContext, 'pods' | 'exec' | 'config' | 'signal'>,
): Promise<StopAttempt & { method: StopMethod }> {
  const config = ctx.config ?? {};
  const order: StopMethod[] = preferred === 'ephemeral' ? ['ephemeral', 'exec'] : ['exec', 'ephemeral'];
  const errors: string[] = [];
  let last: (StopAttempt & { method: StopMethod }) | undefined;
  for (const method of order) {
    let attempt: StopAttempt | undefined;
    if (method === 'exec') {
      if (!ctx.exec) continue;
      attempt = await stopByExec(ctx.exec, podRef(pod), container, spec, config.execCommands, ctx.signal);
    } else {
      if (!config.ephemeralImage || spec.kind === 'exec') continue;
      attempt = await stopByEphemeral(ctx.pods, pod, container, spec, false, config.ephemeralImage, {
        securityContext: config.ephemeralSecurityContext,
        matchTargetUser: config.ephemeralMatchTargetUser,
      });
    }
    last = { ...attempt, method };
    if (attempt.ok) return last;
    errors.push(`${method}: ${attempt.error ?? 'failed'}`);
  }
  if (!last) return { ok: false, method: preferred, detail: formatStopSpec(spec), error: 'no stop strategy available (no exec client, no ephemeral image)' };
  return { ...last, error: errors.join('; ') };
}

/**
 * The conditions to write after acting: the decision's, with the progress record extended by
 * what was just issued (the one SidecarsStopped update replaced, or added).
 */
export function progressUpdates(decision: Decision, issuedNow: readonly IssuedStop[]): readonly StatusUpdate[] {
  if (decision.action !== 'stop' || issuedNow.length === 0) return decision.updates;
  const issued = [...decision.issued, ...issuedNow];
  const index = decision.updates.findIndex((u) => u.condition.type === ConditionType.SidecarsStopped);
  const previous = index >= 0 ? decision.updates[index] : undefined;
  const record =
    decision.failed.length > 0
      ? stopFailedUpdate(decision.targets, issued, decision.failed.join(', '), STILL_RUNNING, decision.stopped)
      : stoppingUpdate(decision.targets, issued, decision.stopped);
  // The Events stay with the update that first carried them.
  const merged: StatusUpdate = { condition: record.condition, events: previous?.events ?? [] };
  return index >= 0 ? decision.updates.map((u, i) => (i === index ? merged : u)) : [...decision.updates, merged];
}
