/**
 * A rule's stop as one decision: the schedule (schedule.ts) of the containers the rule stops, over
 * the progress record read back (progress.ts), with the record to write.
 *
 * Guarantees:
 * - pure; the decision holds the plan, what is due now, when to look again, and the record;
 * - resuming: stops already issued (read, with their times, from the progress record, or evident
 *   from a stop container in the pod) are never due again, so a restarted controller does not
 *   repeat them;
 * - the record is written when it starts, when it gains what only the pod showed, when a
 *   container it stopped is seen stopped (each one's ContainerStopped Event goes out once, with
 *   that write), and on a failure; once every target has stopped it is closed
 *   (`SidecarsStopped=True`) with each exit code and the stop latency.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodLifecycle } from './annotations.js';
import { lastExit, phaseFromMains, statusOf } from './container-states.js';
import { DEFAULT_GRACE_SECONDS, NONE, none, type Decision, type EvaluateOptions } from './decision.js';
import { readProgress, type Progress } from './progress.js';
import { progressUpdate, stoppedUpdate, type SidecarExit, type StatusUpdate } from './records.js';
import { scheduleStop, type StopOrder } from './schedule.js';

/** What fired a rule's stop. */
export interface StopTrigger {
  readonly rule: 'K' | 'S';
  /** The container whose end fired the rule. */
  readonly trigger: string;
  readonly firedAtMs: number;
  /** Rule K's record of the keystone's end, when it is still to be written. */
  readonly keystoneUpdate?: StatusUpdate | undefined;
}

/** The decision for stopping `order`'s containers (see the guarantees above). */
export function planStop(pod: V1Pod, lifecycle: PodLifecycle, fired: StopTrigger, order: StopOrder, options: EvaluateOptions): Decision {
  const nowMs = options.nowMs;
  const budgetMs = (pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
  const progress = readProgress(pod, order.targets, fired.firedAtMs, nowMs);
  const schedule = scheduleStop(pod, order, progress, fired.firedAtMs, fired.firedAtMs + budgetMs, options);
  if (schedule === undefined) return closed(pod, order.targets, progress, fired.firedAtMs, fired.keystoneUpdate ? [fired.keystoneUpdate] : []);

  const stopped = progress.newlyStopped.length === 0 ? progress.stoppedBefore : [...progress.stoppedBefore, ...progress.newlyStopped];
  const changed = !progress.recording || progress.issued.length > progress.recordedCount || progress.newlyStopped.length > 0;
  const record = schedule.failed.length > 0 || changed ? progressUpdate(order.targets, progress.issued, stopped, progress.newlyStopped, schedule.failed) : undefined;
  // Array literals of the size they hold: this runs on every pass over a stopping pod.
  const keystone = fired.keystoneUpdate;
  const updates: StatusUpdate[] = keystone ? (record ? [keystone, record] : [keystone]) : record ? [record] : [];
  // Named properties, not a spread of the schedule: this is evaluatePod's hottest object.
  return {
    action: 'stop',
    rule: fired.rule,
    trigger: fired.trigger,
    firedAtMs: fired.firedAtMs,
    budgetMs,
    remainingMs: Math.max(0, fired.firedAtMs + budgetMs - nowMs),
    targets: order.targets,
    steps: schedule.steps,
    currentStage: schedule.currentStage,
    stagesLeft: schedule.stagesLeft,
    issue: schedule.issue,
    escalation: schedule.escalation,
    stageDeadlineMs: schedule.stageDeadlineMs,
    nextEvaluationAtMs: schedule.nextEvaluationAtMs,
    requeueAfterMs: schedule.requeueAfterMs,
    lateByMs: schedule.lateByMs,
    minStageMs: schedule.minStageMs,
    issued: progress.issued,
    failed: schedule.failed,
    stopped,
    newlyStopped: progress.newlyStopped,
    result: phaseFromMains(pod, lifecycle),
    updates,
  };
}

/** Every target has stopped: close the record with each exit code (once), and the stop latency. */
function closed(pod: V1Pod, targets: readonly string[], progress: Progress, firedAtMs: number, updates: StatusUpdate[]): Decision {
  if (progress.condition?.status === 'True') return updates.length > 0 ? none('done', updates) : NONE.done;
  const exits: SidecarExit[] = [];
  let lastStopMs = -Infinity;
  for (const name of targets) {
    const exit = lastExit(statusOf(pod, name));
    exits.push({ container: name, exitCode: exit.exitCode });
    if (exit.finishedAtMs !== undefined) lastStopMs = Math.max(lastStopMs, exit.finishedAtMs);
  }
  updates.push(stoppedUpdate(exits, pod.spec?.restartPolicy ?? 'Always', progress.newlyStopped));
  const latency = Number.isFinite(lastStopMs) ? { stopLatencyMs: lastStopMs - firedAtMs } : {};
  return { action: 'none', why: 'done', updates, ...latency };
}
