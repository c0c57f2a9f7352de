/**
 * Carrying out a decision: the stop sequence with its budget and escalation, TerminatePod,
 * and completion by phase.
 *
 * Guarantees:
 * - stages run in the decision's order: the steps of one stage in parallel, the next stage
 *   only when the previous one has stopped (or was given up);
 * - each stage waits at most its share of what is left of the budget (`stageDeadline`), then
 *   escalates once, from outside the container: the pod's result (from its main containers) is
 *   recorded in status.phase, then the pod is deleted so that the kubelet ends what is left
 *   (docs/adr/0101); a signal from exec or an ephemeral container runs inside the container's
 *   PID namespace, where the kernel drops SIGKILL to init. A stop that finds PID 1 without a
 *   handler for its signal escalates at once and says why. A container still running
 *   `minStageMs` after the escalation is reported `failed` (a Warning Event and the condition);
 * - once escalated, later stages are left to the kubelet's termination of the pod;
 * - a stop already recorded as issued is not sent again; each newly issued stop is written
 *   to the progress record (through `progress`) before waiting, so a controller that dies
 *   mid-way resumes without repeating;
 * - exec first (unless configured otherwise), the ephemeral container as fallback when an
 *   image is configured; every action is reported to `report` for Events and metrics;
 * - never throws for API failures; only an aborted `signal` ends a run early.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { formatStopSpec, type StopSpec } from '../annotations.js';
import type { KeystoneConfig } from '../config.js';
import { DEFAULT_MIN_STAGE_MS, STILL_RUNNING, awaitsJobCount, stageDeadline, type Decision, type StopDecision, type StopMethod, type StopStep } from '../evaluate.js';
import {
  EventReason,
  stopFailedUpdate,
  stoppingUpdate,
  type IssuedStop,
  type LifecycleEvent,
  type StatusUpdate,
} from '../records.js';
import { podRef, type PodApi, type PodExecApi } from './api.js';
import { deletePod, type ActionOutcome } from './delete.js';
import { stopByEphemeral } from './ephemeral.js';
import { stopByExec, type StopAttempt } from './exec.js';
import { markPhase } from './phase.js';

export type ActionReport =
  | {
      readonly kind: 'stop-issued';
      readonly container: string;
      readonly stop: string;
      readonly method: StopMethod;
      readonly escalated: boolean;
      readonly ok: boolean;
      readonly detail: string;
      readonly error?: string;
    }
  | { readonly kind: 'stopped'; readonly container: string; readonly waitedMs: number }
  | {
      readonly kind: 'escalated';
      readonly container: string;
      /** share: its share of the budget ran out; no-handler: PID 1 cannot get the signal from inside. */
      readonly why: 'share' | 'no-handler';
      readonly stop: string;
      readonly outcome: 'done' | 'already' | 'failed';
      readonly detail: string;
      readonly error?: string;
    }
  | { readonly kind: 'stop-failed'; readonly container: string; readonly why: string }
  | { readonly kind: 'deleted' | 'phase'; readonly outcome: 'done' | 'already' | 'failed'; readonly detail: string; readonly error?: string };

export interface DispatchContext {
  readonly pods: PodApi;
  readonly exec?: PodExecApi;
  readonly config?: KeystoneConfig;
  now(): number;
  /**
   * Resolves true once the container is no longer running (or the pod is going away), false when
   * `untilMs` passes first, 'no-handler' when its stop container reported (NO_HANDLER_EXIT) that
   * PID 1 has no handler for the signal.
   */
  waitForStopped(container: string, untilMs: number, signal?: AbortSignal): Promise<WaitOutcome>;
  /** Every action, for Events (see `reportEvent`) and metrics. */
  report?(report: ActionReport): void;
  /** Write a progress condition (merge into pods/status); its Events go with it when it changed. */
  progress?(update: StatusUpdate): Promise<void> | void;
  readonly signal?: AbortSignal;
}

export type WaitOutcome = boolean | 'no-handler';

export interface DispatchResult {
  /** Containers that ended, and those given up on. */
  readonly stopped: readonly string[];
  readonly failed: readonly string[];
  /** For delete/phase: whether the action took (or had already taken) effect. */
  readonly ok: boolean;
}

/** The Event for an action report (undefined for reports that carry no Event of their own). */
export function reportEvent(report: ActionReport): LifecycleEvent | undefined {
  switch (report.kind) {
    case 'stop-issued':
      return report.ok
        ? {
            type: 'Normal',
            reason: EventReason.StoppingContainer,
            note: `stopping container ${report.container} with ${report.stop}${report.escalated ? ' (budget share exhausted)' : ''} via ${report.detail}`,
            action: 'Stop',
          }
        : {
            type: 'Warning',
            reason: EventReason.StopFailed,
            note: `could not deliver ${report.stop} to container ${report.container}: ${report.error ?? 'unknown error'}`,
            action: 'Stop',
          };
    case 'escalated': {
      if (report.outcome === 'failed') {
        return { type: 'Warning', reason: EventReason.StopFailed, note: `could not end container ${report.container} through the kubelet (${report.detail}): ${report.error ?? 'unknown error'}`, action: 'Stop' };
      }
      if (report.why === 'no-handler') {
        return {
          type: 'Warning',
          reason: EventReason.StopFailed,
          note:
            `container ${report.container} cannot be stopped with ${report.stop}: its PID 1 has no handler for the signal, and the kernel drops ` +
            `a signal sent to a PID namespace's init from inside it (exec and ephemeral containers run inside); ending it through the kubelet instead ` +
            `(${report.detail}); remedies: a PID 1 that handles the signal (an init such as tini), a preset:/http: stop, or native sidecars`,
          action: 'Stop',
        };
      }
      return {
        type: 'Normal',
        reason: EventReason.StoppingContainer,
        note: `container ${report.container} outlived its share of the grace period after ${report.stop}; ending it through the kubelet (${report.detail})`,
        action: 'Stop',
      };
    }
    case 'stopped':
      return { type: 'Normal', reason: EventReason.ContainerStopped, note: `container ${report.container} stopped`, action: 'Stop' };
    case 'stop-failed':
      return { type: 'Warning', reason: EventReason.StopFailed, note: `container ${report.container} did not stop: ${report.why}`, action: 'Stop' };
    case 'deleted':
    case 'phase':
      return report.outcome === 'failed'
        ? { type: 'Warning', reason: EventReason.StopFailed, note: `${report.detail} failed: ${report.error ?? 'unknown error'}`, action: 'Stop' }
        : undefined;
  }
}

export async function runDecision(pod: V1Pod, decision: Decision, ctx: DispatchContext): Promise<DispatchResult> {
  switch (decision.action) {
    case 'stop':
      return runStop(pod, decision, ctx);
    case 'delete': {
      const r = await deletePod(ctx.pods, pod, decision.gracePeriodSeconds);
      ctx.report?.({ kind: 'deleted', ...r });
      return { stopped: [], failed: [], ok: r.outcome !== 'failed' };
    }
    case 'phase': {
      // The kubelet never stops the containers of a pod someone else made terminal: once the
      // result is recorded, the pod's deletion has it end them (docs/adr/0100).
      const r = await markPhase(ctx.pods, pod, decision.phase);
      ctx.report?.({ kind: 'phase', ...r });
      if (r.outcome === 'failed') return { stopped: [], failed: [], ok: false };
      // A Job pod is deleted once the Job has counted the result (evaluatePod's PhaseRecorded).
      if (awaitsJobCount(pod)) return { stopped: [], failed: [], ok: true };
      const d = await deletePod(ctx.pods, pod, decision.gracePeriodSeconds);
      ctx.report?.({ kind: 'deleted', ...d });
      return { stopped: [], failed: [], ok: d.outcome !== 'failed' };
    }
    default:
      return { stopped: [], failed: [], ok: true };
  }
}

export async function runStop(pod: V1Pod, decision: StopDecision, ctx: DispatchContext): Promise<DispatchResult> {
  const config = ctx.config ?? {};
  const minStage = config.minStageMs ?? DEFAULT_MIN_STAGE_MS;
  const budgetEnd = decision.firedAtMs + decision.budgetMs;
  const issued: IssuedStop[] = [...decision.issued];
  const stopped: string[] = [];
  const failed: string[] = [...decision.failed];

  // Progress writes are serialised: parallel steps must not lose each other's record.
  let writes: Promise<void> = Promise.resolve();
  const record = (stop: IssuedStop): Promise<void> => {
    issued.push(stop);
    const update = failed.length > 0
      ? { ...stopFailedUpdate(decision.targets, issued, failed.join(', '), STILL_RUNNING), events: [] }
      : stoppingUpdate(decision.targets, issued);
    writes = writes.then(async () => {
      try {
        await ctx.progress?.(update);
      } catch {
        // A lost progress write only risks repeating a stop after a restart; the stop itself stands.
      }
    });
    return writes;
  };

  const deliver = async (step: StopStep): Promise<StopAttempt> => {
    const attempt = await deliverStop(pod, step.container, step.stop, step.method, ctx, config);
    ctx.report?.({
      kind: 'stop-issued',
      container: step.container,
      stop: formatStopSpec(step.stop),
      method: attempt.method,
      escalated: false,
      ok: attempt.ok,
      detail: attempt.detail,
      ...(attempt.error !== undefined ? { error: attempt.error } : {}),
    });
    await record({ container: step.container, escalated: false });
    return attempt;
  };

  // One escalation ends the whole pod, whichever step asks first.
  let ending: Promise<ActionOutcome> | undefined;
  const escalate = async (step: StopStep, why: 'share' | 'no-handler'): Promise<void> => {
    const first = ending === undefined;
    ending ??= endThroughKubelet(pod, decision, budgetEnd, ctx);
    const r = await ending;
    ctx.report?.({ kind: 'escalated', container: step.container, why, stop: formatStopSpec(step.stop), ...r, ...(first ? {} : { outcome: r.outcome === 'failed' ? 'failed' : 'already' }) });
    await record({ container: step.container, escalated: true });
  };

  const runStep = async (step: StopStep, deadline: number): Promise<void> => {
    const began = ctx.now();
    let gone = false;
    if (!step.escalate) {
      const noHandler = !step.issued && (await deliver(step)).noHandler === true;
      const waited = noHandler ? 'no-handler' : await ctx.waitForStopped(step.container, deadline, ctx.signal);
      if (ctx.signal?.aborted) return;
      gone = waited === true;
      if (!gone) await escalate(step, waited === 'no-handler' ? 'no-handler' : 'share');
    } else if (!step.issued) {
      await escalate(step, 'share');
    }
    if (!gone) gone = (await ctx.waitForStopped(step.container, Math.max(deadline, ctx.now()) + minStage, ctx.signal)) === true;
    if (ctx.signal?.aborted) return;
    if (gone) {
      stopped.push(step.container);
      ctx.report?.({ kind: 'stopped', container: step.container, waitedMs: ctx.now() - began });
      return;
    }
    failed.push(step.container);
    ctx.report?.({ kind: 'stop-failed', container: step.container, why: STILL_RUNNING });
    await (writes = writes.then(async () => {
      try {
        await ctx.progress?.(stopFailedUpdate(decision.targets, issued, step.container, STILL_RUNNING));
      } catch {
        // reported through `report` already
      }
    }));
  };

  const stages = new Map<number, StopStep[]>();
  for (const step of decision.steps) {
    const list = stages.get(step.stage);
    if (list) list.push(step);
    else stages.set(step.stage, [step]);
  }
  let left = decision.stagesLeft;
  for (const [stage, steps] of stages) {
    if (ctx.signal?.aborted || ending !== undefined) break;
    const deadline =
      stage === decision.currentStage ? decision.stageDeadlineMs : stageDeadline(ctx.now(), budgetEnd, left, minStage);
    await Promise.all(steps.map((s) => runStep(s, deadline)));
    left--;
  }
  await writes;
  return { stopped, failed, ok: failed.length === 0 };
}

/**
 * The escalation: record the pod's result from its main containers (so that a Job counts it, and
 * never counts the kubelet's view of killed sidecars), then delete the pod with what is left of
 * the budget so that the kubelet, from outside, ends every container still running.
 */
async function endThroughKubelet(pod: V1Pod, decision: StopDecision, budgetEnd: number, ctx: DispatchContext): Promise<ActionOutcome> {
  const phase = await markPhase(ctx.pods, pod, decision.result);
  if (phase.outcome === 'failed') return phase;
  // A Job pod is deleted once the Job has counted the result (evaluatePod's PhaseRecorded).
  if (awaitsJobCount(pod)) return { ...phase, detail: `${phase.detail}; the pod is deleted once its Job has counted it` };
  const grace = Math.max(1, Math.ceil((budgetEnd - ctx.now()) / 1000));
  const deleted = await deletePod(ctx.pods, pod, grace);
  return { ...deleted, detail: `${phase.detail}, then ${deleted.detail}` };
}

async function deliverStop(
  pod: V1Pod,
  container: string,
  spec: StopSpec,
  preferred: StopMethod,
  ctx: DispatchContext,
  config: KeystoneConfig,
): Promise<StopAttempt & { method: StopMethod }> {
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
