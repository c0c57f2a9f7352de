/**
 * What the keystone controller writes: pod conditions and Events.
 *
 * Guarantees:
 * - conditions are the progress record: `KeystoneFinished` and `SidecarsStopped` tell a
 *   restarted or failed-over controller what already happened, so it resumes, never repeats;
 * - the list of issued stops, each with when it was issued, is carried in the
 *   `SidecarsStopped=False` message in a fixed, readable form
 *   (`issued: app@1733050000123, proxy:KILL@1733050004120`, ms since the epoch) that
 *   `issuedStops` reads back — container names are DNS labels, so ',', ':' and '@' can never be
 *   part of one; the human part before it is clipped, the list itself never is (docs/adr/0091);
 *   An entry may carry what its delivery found (`proxy!nohandler@…`: PID 1 has no handler for
 *   the signal), or that it was not delivered at all because the namespace had its share of exec
 *   slots (`proxy!deferred@…`: the stop is still to be issued), for the next evaluation to
 *   decide on; a container has at most one `!deferred` entry, dropped once its stop is issued;
 * - one builder of the progress record (`progressUpdate`), used by the decision and, once its
 *   actions have run, by `passRecord` to add what they issued;
 * - one Event path: every Event a stop produces comes from here, derived from the decision and
 *   what its actions reported (`passRecord`, `actionEvent`); an Event that announces a condition
 *   travels with it (`StatusUpdate`) and a writer records it only when `setCondition` reports a
 *   change, so repeated reconciles of the same state never repeat an Event; an action's Event
 *   goes out once per action, and an action is never repeated once recorded.
 */
import type { InvalidAnnotationError } from '@podlife/core';
import type { Decision, StopDecision } from './decision.js';
import type { ActionReport, ActResult } from './strategies/act.js';

/** The pod conditions keystone writes. */
export const ConditionType = {
  KeystoneFinished: 'podlife.dev/KeystoneFinished',
  SidecarsStopped: 'podlife.dev/SidecarsStopped',
  LifecycleValid: 'podlife.dev/LifecycleValid',
} as const;

/** The reasons of the Events keystone records. */
export const EventReason = {
  KeystoneFinished: 'KeystoneFinished',
  StoppingContainer: 'StoppingContainer',
  ContainerStopped: 'ContainerStopped',
  StopFailed: 'StopFailed',
  SidecarExitedNonZero: 'SidecarExitedNonZero',
  InvalidLifecycleAnnotations: 'InvalidLifecycleAnnotations',
} as const;

/** A pod condition to merge by type. */
export interface PodConditionInput {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** An Event to record on the pod, with the condition change it announces. */
export interface LifecycleEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly note: string;
  /** events.k8s.io/v1 `action`: what the controller did or is about to do. */
  readonly action: string;
}

/** A condition to merge into pods/status, and the Events to record if (and only if) it changed. */
export interface StatusUpdate {
  readonly condition: PodConditionInput;
  readonly events: readonly LifecycleEvent[];
}

export const NO_UPDATES: readonly StatusUpdate[] = Object.freeze([]);

const MESSAGE_MAX = 1024;
function clip(message: string, max = MESSAGE_MAX): string {
  return message.length <= max ? message : `${message.slice(0, max - 3)}...`;
}

export function invalidUpdate(errors: readonly InvalidAnnotationError[], omitted = 0): StatusUpdate {
  const listed = errors.map((e) => e.message).join('; ');
  const message = omitted > 0 ? `${clip(listed, MESSAGE_MAX - 40)}; and ${omitted} more` : clip(listed);
  return {
    condition: { type: ConditionType.LifecycleValid, status: 'False', reason: 'InvalidAnnotations', message },
    events: [{ type: 'Warning', reason: EventReason.InvalidLifecycleAnnotations, note: message, action: 'Validate' }],
  };
}

export function validUpdate(): StatusUpdate {
  return {
    condition: { type: ConditionType.LifecycleValid, status: 'True', reason: 'Valid', message: 'lifecycle annotations are valid' },
    events: [],
  };
}

export function keystoneFinishedUpdate(container: string, exitCode: number | undefined, then: string): StatusUpdate {
  const code = exitCode === undefined ? 'without an exit code' : `with exit code ${exitCode}`;
  const message = `keystone container ${container} terminated ${code}; ${then}`;
  return {
    condition: { type: ConditionType.KeystoneFinished, status: 'True', reason: 'KeystoneTerminated', message },
    events: [{ type: 'Normal', reason: EventReason.KeystoneFinished, note: message, action: 'Stop' }],
  };
}

/**
 * One issued stop: the container, and whether it was the escalation (the pod ended through the
 * kubelet after the container outlived its share) rather than its stop spec.
 */
export interface IssuedStop {
  readonly container: string;
  readonly escalated: boolean;
  /** When it was issued (ms since the epoch); absent in records written before times were kept. */
  readonly atMs?: number;
  /** Its delivery found PID 1 without a handler for the signal (the kernel dropped it): escalation is due. */
  readonly noHandler?: boolean;
  /**
   * Not issued: nothing was run, the namespace had its share of exec slots. The stop is still to
   * be issued; `atMs` says when it was first put off, and the schedule says when to try again.
   */
  readonly deferred?: boolean;
}

const NO_HANDLER_MARK = '!nohandler';
const DEFERRED_MARK = '!deferred';

const ISSUED_MARK = 'issued: ';

/** Names shown in the human part of a progress message. */
const TARGETS_SHOWN = 10;

function describeTargets(targets: readonly string[]): string {
  if (targets.length <= TARGETS_SHOWN) return listed(targets, targets.length, asIs);
  return `${listed(targets, TARGETS_SHOWN, asIs)} and ${targets.length - TARGETS_SHOWN} more`;
}

/**
 * The first `count` items of `items`, formatted, separated by ', ': `Array.prototype.join` costs
 * several times more on lists this short, and every stop decision writes one or two of them.
 */
const asIs = (name: string): string => name;

function listed<T>(items: readonly T[], count: number, format: (item: T) => string): string {
  let out = '';
  for (let i = 0; i < count; i++) out += i === 0 ? format(items[i] as T) : `, ${format(items[i] as T)}`;
  return out;
}

/**
 * A `SidecarsStopped=False` message: a human part, clipped, then the containers seen stopped
 * after their stop, then the progress record, whole. The record is never clipped — a restarted
 * controller reads it back to know what it already sent; its size is bounded by the pod itself
 * (two entries per container at most).
 */
function progressMessage(human: string, issued: readonly IssuedStop[], stopped: readonly string[]): string {
  const seen = stopped.length > 0 ? `; ${STOPPED_MARK}${listed(stopped, stopped.length, asIs)}` : '';
  if (issued.length === 0) return `${clip(human)}${seen}; no stop issued yet`;
  return `${clip(human)}${seen}; ${ISSUED_MARK}${listed(issued, issued.length, formatIssued)}`;
}

const STOPPED_MARK = 'stopped: ';

function formatIssued(s: IssuedStop): string {
  const name = s.escalated
    ? `${s.container}:KILL`
    : s.noHandler === true
      ? `${s.container}${NO_HANDLER_MARK}`
      : s.deferred === true
        ? `${s.container}${DEFERRED_MARK}`
        : s.container;
  return s.atMs === undefined ? name : `${name}@${Math.round(s.atMs)}`;
}

/**
 * `SidecarsStopped=False/Stopping`; each container in `newlyStopped` (its stop was issued, and
 * it has stopped since the record last said so) gets a `ContainerStopped` Event with it.
 */
export function stoppingUpdate(targets: readonly string[], issued: readonly IssuedStop[], stopped: readonly string[] = [], newlyStopped: readonly string[] = []): StatusUpdate {
  return {
    condition: {
      type: ConditionType.SidecarsStopped,
      status: 'False',
      reason: 'Stopping',
      message: progressMessage(`stopping ${describeTargets(targets)}`, issued, stopped),
    },
    events: newlyStopped.length === 0 ? NO_EVENTS : newlyStopped.map(containerStoppedEvent),
  };
}

const NO_EVENTS: readonly LifecycleEvent[] = Object.freeze([]);

export function containerStoppedEvent(container: string): LifecycleEvent {
  return { type: 'Normal', reason: EventReason.ContainerStopped, note: `container ${container} stopped`, action: 'Stop' };
}

/** The containers a `SidecarsStopped=False` message lists as seen stopped after their stop. */
export function stoppedContainers(message: string | undefined): string[] {
  if (!message) return [];
  const issuedAt = message.lastIndexOf(`; ${ISSUED_MARK}`);
  const head = issuedAt < 0 ? message : message.slice(0, issuedAt);
  const at = head.lastIndexOf(`; ${STOPPED_MARK}`);
  if (at < 0) return [];
  const end = head.indexOf(';', at + 2);
  const list = head.slice(at + 2 + STOPPED_MARK.length, end < 0 ? undefined : end).trim();
  return list.length === 0 ? [] : list.split(', ');
}

/** The stops recorded in a `SidecarsStopped=False` message (empty when none or unreadable). */
export function issuedStops(message: string | undefined): IssuedStop[] {
  if (!message) return [];
  const at = message.lastIndexOf(ISSUED_MARK);
  if (at < 0) return [];
  const rest = message.slice(at + ISSUED_MARK.length).trim();
  if (rest.length === 0) return [];
  const out: IssuedStop[] = [];
  for (const part of rest.split(', ')) {
    const at = part.indexOf('@');
    const name = at < 0 ? part : part.slice(0, at);
    const atMs = at < 0 ? Number.NaN : Number(part.slice(at + 1));
    const stop = issuedEntry(name);
    out.push(Number.isFinite(atMs) ? { ...stop, atMs } : stop);
  }
  return out;
}

/** One entry's name part: `proxy`, `proxy:KILL`, `proxy!nohandler` or `proxy!deferred`. */
function issuedEntry(name: string): IssuedStop {
  const colon = name.indexOf(':');
  if (colon >= 0) return { container: name.slice(0, colon), escalated: true };
  if (name.endsWith(NO_HANDLER_MARK)) return { container: name.slice(0, -NO_HANDLER_MARK.length), escalated: false, noHandler: true };
  if (name.endsWith(DEFERRED_MARK)) return { container: name.slice(0, -DEFERRED_MARK.length), escalated: false, deferred: true };
  return { container: name, escalated: false };
}

export function stopFailedUpdate(targets: readonly string[], issued: readonly IssuedStop[], container: string, why: string, stopped: readonly string[] = []): StatusUpdate {
  const note = clip(`container ${container} did not stop: ${why}`);
  return {
    condition: {
      type: ConditionType.SidecarsStopped,
      status: 'False',
      reason: 'StopFailed',
      message: progressMessage(`${note}; stopping ${describeTargets(targets)}`, issued, stopped),
    },
    events: [{ type: 'Warning', reason: EventReason.StopFailed, note, action: 'Stop' }],
  };
}

export interface SidecarExit {
  readonly container: string;
  readonly exitCode: number | undefined;
}

/** The remedies named whenever a sidecar's exit code would fail the pod. */
export function sidecarExitRemedies(container: string): string {
  return (
    `remedies: let the webhook convert sidecars to native ones (${'podlife.dev/native-sidecars'}: "true", kubelet >= 1.29), ` +
    `stop it with a preset or http endpoint that exits 0 (stop.podlife.dev/${container}: preset:<name>), ` +
    `or end the pod by phase (podlife.dev/completion: phase)`
  );
}

/**
 * `SidecarsStopped=True` with each stopped container's exit code; under restartPolicy Never a
 * non-zero sidecar exit fails the pod, so each one also gets a `SidecarExitedNonZero` Warning.
 * Containers in `newlyStopped` get their `ContainerStopped` Event with it.
 */
export function stoppedUpdate(exits: readonly SidecarExit[], restartPolicy: string, newlyStopped: readonly string[] = []): StatusUpdate {
  const codes = exits.map((e) => `${e.container}=${e.exitCode ?? 'unknown'}`).join(', ');
  const events: LifecycleEvent[] = newlyStopped.map(containerStoppedEvent);
  let nonZeroExits = 0;
  for (const e of exits) {
    const nonZero = exitsNonZero(e.exitCode);
    if (nonZero && restartPolicy === 'Never') {
      nonZeroExits++;
      events.push({
        type: 'Warning',
        reason: EventReason.SidecarExitedNonZero,
        note: clip(`sidecar ${e.container} exited with code ${e.exitCode}, which fails the pod under restartPolicy Never; ${sidecarExitRemedies(e.container)}`),
        action: 'Stop',
      });
    }
  }
  return {
    condition: {
      type: ConditionType.SidecarsStopped,
      status: 'True',
      reason: nonZeroExits > 0 ? 'StoppedWithNonZeroExit' : 'Stopped',
      message: exits.length > 0 ? `stopped: ${codes}` : 'nothing left to stop',
    },
    events,
  };
}

function exitsNonZero(code: number | undefined): boolean {
  return code !== undefined && code !== 0;
}

/**
 * The `SidecarsStopped=False` update for a stop in progress — its targets, what was issued, what
 * was seen stopped (`newlyStopped`: since the record last said so, each with its ContainerStopped
 * Event), what failed: the one builder of the progress record.
 */
export function progressUpdate(
  targets: readonly string[],
  issued: readonly IssuedStop[],
  stopped: readonly string[],
  newlyStopped: readonly string[],
  failed: readonly string[],
): StatusUpdate {
  if (failed.length === 0) return stoppingUpdate(targets, issued, stopped, newlyStopped);
  const failure = stopFailedUpdate(targets, issued, failed.join(', '), STILL_RUNNING_NOTE, stopped);
  return { ...failure, events: [...newlyStopped.map(containerStoppedEvent), ...failure.events] };
}

/** Why a container is reported failed (the Event and the condition say it). */
export const STILL_RUNNING_NOTE = "still running after its stop, its share of the grace period and the escalation to the kubelet's termination";

/** What one pass writes and announces: the conditions (with their Events) and the Events of its actions. */
export interface PassRecord {
  /** The conditions to merge; each one's Events go out only if it changes. */
  readonly updates: readonly StatusUpdate[];
  /** The Events of the actions of this pass, in the order they ran: each action happened, so each goes out. */
  readonly events: readonly LifecycleEvent[];
}

/**
 * What a pass records once its actions have run: the decision's conditions, with the progress
 * record extended by what was issued, and an Event per action report. A repeated escalation is
 * not a new entry (the first one dates the failure report), nor is a stop deferred again (the
 * first deferral stays, so retries write nothing); a stop issued drops its `!deferred` entry.
 */
export function passRecord(decision: Decision, acted: Pick<ActResult, 'issued'> & { readonly reports?: readonly ActionReport[] }): PassRecord {
  const events: LifecycleEvent[] = [];
  for (const r of acted.reports ?? []) {
    const e = actionEvent(r, decision);
    if (e) events.push(e);
  }
  if (decision.action !== 'stop') return { updates: decision.updates, events };
  const added = acted.issued.filter((s) => isNewEntry(s, decision.issued));
  if (added.length === 0) return { updates: decision.updates, events };
  const kept = decision.issued.filter((d) => d.deferred !== true || !added.some((s) => s.container === d.container && s.deferred !== true));
  const record = progressUpdate(decision.targets, [...kept, ...added], decision.stopped, decision.newlyStopped, decision.failed);
  const index = decision.updates.findIndex((u) => u.condition.type === ConditionType.SidecarsStopped);
  const updates = index >= 0 ? decision.updates.map((u, i) => (i === index ? record : u)) : [...decision.updates, record];
  return { updates, events };
}

/** Whether `s` adds to the record `recorded`: not a repeated escalation, nor a stop deferred again. */
function isNewEntry(s: IssuedStop, recorded: readonly IssuedStop[]): boolean {
  if (s.escalated) return !recorded.some((d) => d.escalated && d.container === s.container);
  if (s.deferred === true) return !recorded.some((d) => d.deferred === true && d.container === s.container);
  return true;
}

/** The Event for an action report (undefined for reports that carry no Event of their own), with what the decision adds to it. */
export function actionEvent(report: ActionReport, decision?: Decision): LifecycleEvent | undefined {
  const stop = decision?.action === 'stop' ? decision : undefined;
  switch (report.kind) {
    case 'stop-issued':
      return report.ok
        ? { type: 'Normal', reason: EventReason.StoppingContainer, note: `stopping container ${report.container} with ${report.stop} via ${stopMethod(report)}${stop ? lateNote(stop) : ''}`, action: 'Stop' }
        : {
            type: 'Warning',
            reason: EventReason.StopFailed,
            note: clip(`could not deliver ${report.stop} to container ${report.container}: ${report.error ?? 'unknown error'}`),
            action: 'Stop',
          };
    case 'stop-deferred':
      return undefined; // not a failure: the stop is still to be issued, and the record says when it was put off
    case 'escalated':
      return escalationEvent(report, stop?.escalation?.stopExits?.[report.container]);
    case 'deleted':
    case 'phase':
      return report.outcome === 'failed'
        ? { type: 'Warning', reason: EventReason.StopFailed, note: `${report.detail} failed: ${report.error ?? 'unknown error'}`, action: 'Stop' }
        : undefined;
  }
}

function escalationEvent(report: ActionReport & { kind: 'escalated' }, stopExit: number | undefined): LifecycleEvent | undefined {
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
          `the stop container of ${report.container} exited ${stopExit ?? 'non-zero'} without delivering ${report.stop} ` +
          `(its log says why: a kill refused by the container's user, an endpoint that did not answer); ending it through the kubelet instead (${report.detail})`,
        action: 'Stop',
      };
    case 'not-ended':
      return undefined; // repeated while the first escalation has not taken; the first one was announced
  }
}

/** How a stop went out, for its Event: the method and the container it ran in, never the script (the log has it). */
function stopMethod(report: ActionReport & { kind: 'stop-issued' }): string {
  // The ephemeral detail is `ephemeral container <name> (<command>)`: the container, not its command.
  return report.method === 'ephemeral' ? report.detail.replace(/ \(.*$/s, '') : report.method;
}

/** Says how late a stop goes out and what that leaves of the budget. */
function lateNote(stop: StopDecision): string {
  if (stop.lateByMs === undefined) return '';
  const left = stop.remainingMs > 0 ? `${seconds(stop.remainingMs)} of the budget left for ${stop.stagesLeft} stage(s)` : 'nothing left of the budget';
  return ` (${seconds(stop.lateByMs)} late, the controller was unavailable: ${left}, at least ${seconds(stop.minStageMs)} each)`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
