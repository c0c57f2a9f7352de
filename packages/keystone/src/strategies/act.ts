/**
 * Acting on a decision: one pass of one-shot actuators, nothing waited for. `evaluatePod` says
 * what is due and how; this dispatches exactly that to the actuators and returns what each did.
 *
 * Guarantees:
 * - no decision here: what to stop, whether to escalate, with which grace period and whether to
 *   delete after recording a phase all come from the decision; what an action found (a PID 1
 *   without a handler for its signal) is returned, for the record and the next evaluation;
 * - a stop decision: the stop specs due (one stage, in parallel), then the escalation if the
 *   decision holds one; escalation comes from outside the container: the pod's result is
 *   recorded in status.phase, then the pod is deleted (unless the decision says a Job has yet to
 *   count that result) so that the kubelet ends what still runs (docs/adr/0101);
 * - every attempted stop is returned with the time its attempt returned (a stop through pods/exec
 *   has reached the container by then, however slow the exec was), and every action is returned
 *   as a report (and passed to `report`, if given), for the record, Events and metrics;
 * - a stop whose exec was not run because its namespace had its share of exec slots is returned
 *   as `deferred` (report `stop-deferred`), neither issued nor failed: when to try it again is
 *   the next evaluation's to decide, from the record;
 * - a status patch refused because the pod changed since it was read (its `test` operation) is
 *   `stale`, not a failure: the caller evaluates again on the newer pod;
 * - never throws for API failures.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { formatStopSpec, type StopSpec } from '../annotations.js';
import type { KeystoneConfig } from '../config.js';
import type { Decision, Escalation, EscalationWhy, StopDecision, StopMethod } from '../decision.js';
import type { IssuedStop } from '../records.js';
import { podRef, type PodApi, type PodExecApi } from './api.js';
import { deletePod } from './delete.js';
import { stopByEphemeral } from './ephemeral.js';
import { stopByExec, type StopAttempt } from './exec.js';
import { markPhase } from './phase.js';

/** What `actOn` did, one report per action, for the record, Events and metrics. */
export type ActionReport =
  | {
      readonly kind: 'stop-issued';
      readonly container: string;
      readonly stop: string;
      readonly method: StopMethod;
      readonly ok: boolean;
      readonly detail: string;
      readonly error?: string;
      /** The signal went out but PID 1 has no handler for it: the next evaluation escalates. */
      readonly noHandler?: boolean;
    }
  | {
      /** Nothing was run: the namespace had its share of exec slots; the stop is still to be issued. */
      readonly kind: 'stop-deferred';
      readonly container: string;
      readonly stop: string;
      readonly method: StopMethod;
      readonly detail: string;
      readonly error?: string;
    }
  | {
      readonly kind: 'escalated';
      readonly container: string;
      readonly why: EscalationWhy;
      readonly stop: string;
      readonly outcome: 'done' | 'already' | 'failed';
      readonly detail: string;
      readonly error?: string;
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
  /** Called with every action as it is done (the same reports are returned in `ActResult.reports`). */
  report?(report: ActionReport): void;
  readonly signal?: AbortSignal;
}

/** The outcome of one pass of `actOn`. */
export interface ActResult {
  /** Stops attempted in this pass (escalations and deferred ones included), to add to the progress record. */
  readonly issued: readonly IssuedStop[];
  /** False when an action failed: the caller retries later. */
  readonly ok: boolean;
  /** The pod as a status patch of this pass returned it, when one was made. */
  readonly written?: V1Pod;
  /** A status patch found the pod changed since it was read: evaluate again on the newer pod. */
  readonly stale?: boolean;
  /** What each action did, in order. */
  readonly reports?: readonly ActionReport[];
}

const NOTHING: ActResult = Object.freeze({ issued: [], ok: true });

/** Carries out what `decision` says is due now. */
export async function actOn(pod: V1Pod, decision: Decision, ctx: ActContext): Promise<ActResult> {
  const reports: ActionReport[] = [];
  const report = (r: ActionReport): void => {
    reports.push(r);
    ctx.report?.(r);
  };
  const result = await dispatch(pod, decision, ctx, report);
  return reports.length === 0 ? result : { ...result, reports };
}

type Report = (r: ActionReport) => void;

function dispatch(pod: V1Pod, decision: Decision, ctx: ActContext, report: Report): Promise<ActResult> {
  switch (decision.action) {
    case 'stop':
      return actOnStop(pod, decision, ctx, report);
    case 'delete':
      return deleteNow(pod, decision.gracePeriodSeconds, ctx, report, undefined);
    case 'phase':
      return recordPhase(pod, decision.phase, decision.thenDelete ? decision.gracePeriodSeconds : undefined, ctx, report);
    default:
      return Promise.resolve(NOTHING);
  }
}

async function deleteNow(pod: V1Pod, grace: number, ctx: ActContext, report: Report, written: V1Pod | undefined): Promise<ActResult> {
  const r = await deletePod(ctx.pods, pod, grace);
  report({ kind: 'deleted', ...r });
  return { issued: [], ok: r.outcome !== 'failed', ...(written ? { written } : {}) };
}

/**
 * The kubelet never stops the containers of a pod someone else made terminal: once the result is
 * recorded, the pod's deletion (with `grace`, when the decision asks for it) has it end them
 * (docs/adr/0100).
 */
async function recordPhase(pod: V1Pod, phase: 'Succeeded' | 'Failed', grace: number | undefined, ctx: ActContext, report: Report): Promise<ActResult> {
  const r = await markPhase(ctx.pods, pod, phase);
  if (r.outcome === 'stale') return { issued: [], ok: true, stale: true };
  report({ kind: 'phase', outcome: r.outcome, detail: r.detail, ...(r.error !== undefined ? { error: r.error } : {}) });
  if (r.outcome === 'failed') return { issued: [], ok: false };
  if (grace === undefined) return { issued: [], ok: true, ...(r.written ? { written: r.written } : {}) };
  return deleteNow(pod, grace, ctx, report, r.written);
}

async function actOnStop(pod: V1Pod, decision: StopDecision, ctx: ActContext, report: Report): Promise<ActResult> {
  const attempts = await Promise.all(
    decision.issue.map(async (step) => {
      const attempt = await issueStop(pod, step.container, step.stop, step.method, ctx);
      const atMs = Math.max(ctx.nowMs, ctx.now?.() ?? ctx.nowMs);
      return { step, attempt, atMs };
    }),
  );
  const issued: IssuedStop[] = [];
  for (const { step, attempt, atMs } of attempts) {
    const { method, ok, detail, error, noHandler, deferred } = attempt;
    const stop = formatStopSpec(step.stop);
    const why = error !== undefined ? { error } : {};
    if (deferred) {
      report({ kind: 'stop-deferred', container: step.container, stop, method, detail, ...why });
      issued.push({ container: step.container, escalated: false, atMs, deferred });
      continue;
    }
    report({ kind: 'stop-issued', container: step.container, stop, method, ok, detail, ...why, ...(noHandler ? { noHandler } : {}) });
    issued.push(noHandler ? { container: step.container, escalated: false, atMs, noHandler } : { container: step.container, escalated: false, atMs });
  }
  const escalation = decision.escalation;
  if (!escalation) return { issued, ok: true };
  return escalate(pod, decision, escalation, issued, ctx, report);
}

/**
 * The escalation: record the pod's result from its main containers (so that a Job counts it, and
 * never counts the kubelet's view of killed sidecars), then delete the pod with what is left of
 * the budget so that the kubelet, from outside, ends every container still running.
 */
async function escalate(pod: V1Pod, decision: StopDecision, escalation: Escalation, issued: IssuedStop[], ctx: ActContext, report: Report): Promise<ActResult> {
  const r = await endThroughKubelet(pod, decision.result, escalation, ctx);
  if (r.outcome === 'stale') return { issued, ok: true, stale: true };
  const first = r.outcome;
  const stops = new Map(decision.steps.map((s) => [s.container, formatStopSpec(s.stop)]));
  escalation.containers.forEach((container, i) => {
    const outcome = i === 0 || first === 'failed' ? first : 'already';
    report({ kind: 'escalated', container, why: escalation.why, stop: stops.get(container) ?? '', outcome, detail: r.detail, ...(r.error !== undefined ? { error: r.error } : {}) });
    issued.push({ container, escalated: true, atMs: ctx.nowMs });
  });
  return { issued, ok: r.outcome !== 'failed', ...(r.written ? { written: r.written } : {}) };
}

async function endThroughKubelet(pod: V1Pod, result: 'Succeeded' | 'Failed', escalation: Escalation, ctx: ActContext): Promise<PhaseOutcome> {
  const phase = await markPhase(ctx.pods, pod, result);
  if (phase.outcome === 'failed' || phase.outcome === 'stale') return phase;
  if (!escalation.thenDelete) return { ...phase, detail: `${phase.detail}; the pod is deleted once its Job has counted it` };
  const deleted = await deletePod(ctx.pods, pod, escalation.gracePeriodSeconds);
  return { ...deleted, detail: `${phase.detail}, then ${deleted.detail}`, ...(phase.written ? { written: phase.written } : {}) };
}

type PhaseOutcome = Awaited<ReturnType<typeof markPhase>>;

/**
 * Delivers a stop spec: the preferred method first, the other as fallback where it can apply. The
 * outcome is the last method's: `deferred` when that one was put off for want of an exec slot.
 */
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
