/**
 * Reading a stop's progress record back: what was issued and when, what was seen stopped, and
 * what only the pod shows (a stop container the record does not list).
 *
 * Guarantees:
 * - pure; the record is the `SidecarsStopped=False` condition (records.ts), completed by the
 *   pod's stop containers: a controller that died between adding one and writing the record
 *   neither adds it again nor announces that stop twice;
 * - a stop's time is the one the record holds (when its delivery returned), so every share is
 *   counted from a stop's delivery, however slow it was; entries of older records carry no time
 *   and are dated, as they are read, by the record's own start: every entry read back has a time;
 * - an entry's delivery finding (`noHandler`) is read back as it was written;
 * - a deferred entry (`proxy!deferred@…`: nothing was run, for want of an exec slot) is not an
 *   issued stop: it dates no share and marks nothing stopped; it only says since when the stop
 *   has been put off (`deferredAt`), for the schedule to say when to try again.
 */
import type { V1EphemeralContainer, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { findCondition, timeMs } from '@podlife/core';
import { ephemeralStartedAt, isStopped, statusOf } from './container-states.js';
import { ConditionType, issuedStops, stoppedContainers, type IssuedStop } from './records.js';
import { ephemeralName } from './stop-containers.js';

/** The progress record as read from the pod. */
export interface Progress {
  /** The record's condition, when there is one. */
  readonly condition: V1PodCondition | undefined;
  /** A stop is recorded as in progress (`SidecarsStopped=False`). */
  readonly recording: boolean;
  /** The number of entries the record itself lists (those after are evident only from the pod). */
  readonly recordedCount: number;
  /** The recorded stops, then those evident from stop containers; each with its time. */
  readonly issued: readonly DatedStop[];
  /** When each container's stop spec was first issued. */
  readonly issuedAt: ReadonlyMap<string, number>;
  /** When each container's stop, not issued yet, was first put off for want of an exec slot. */
  readonly deferredAt: ReadonlyMap<string, number>;
  /** Containers the record lists as seen stopped after their stop. */
  readonly stoppedBefore: readonly string[];
  /** Targets stopped since their stop was issued, not yet listed. */
  readonly newlyStopped: readonly string[];
}

/** An issued stop read back, with its time (an undated entry of an older record gets the record's start). */
export type DatedStop = IssuedStop & { readonly atMs: number };

const NOTHING_ISSUED: ReadonlyMap<string, number> = new Map();
const NOTHING_RECORDED: readonly DatedStop[] = Object.freeze([]);
const NONE_STOPPED: readonly string[] = Object.freeze([]);

/** No record and no stop container: a stop's first pass. One object for every such pass. */
const NOT_STARTED: Progress = Object.freeze({
  condition: undefined,
  recording: false,
  recordedCount: 0,
  issued: NOTHING_RECORDED,
  issuedAt: NOTHING_ISSUED,
  deferredAt: NOTHING_ISSUED,
  stoppedBefore: NONE_STOPPED,
  newlyStopped: NONE_STOPPED,
});

/** The progress of a stop of `targets` that fired at `firedAtMs`, as the pod records and shows it. */
export function readProgress(pod: V1Pod, targets: readonly string[], firedAtMs: number, nowMs: number): Progress {
  const condition = findCondition(pod.status?.conditions, ConditionType.SidecarsStopped);
  const ephemerals = pod.spec?.ephemeralContainers;
  const withStopContainers = Array.isArray(ephemerals) && ephemerals.length > 0;
  // Checked here, not in the callees: a stop's first pass has neither, and pays for no call.
  if (condition === undefined && !withStopContainers) return NOT_STARTED;
  const recording = condition?.status === 'False';
  // Entries of older records carry no time: the record's own start stands in for it.
  const recorded = recording ? dated(issuedStops(condition.message), timeMs(condition.lastTransitionTime) ?? firedAtMs) : NOTHING_RECORDED;
  const issued = withStopContainers ? withEphemeralStops(pod, ephemerals, targets, recorded, nowMs) : recorded;
  const issuedAt = issued.length === 0 ? NOTHING_ISSUED : issuedTimes(issued, false);
  const deferredAt = issued.length === 0 ? NOTHING_ISSUED : issuedTimes(issued, true);
  const stoppedBefore = recording ? stoppedContainers(condition.message) : NONE_STOPPED;
  const newlyStopped = issuedAt.size > 0 ? stoppedSince(pod, targets, issuedAt, stoppedBefore) : NONE_STOPPED;
  return { condition, recording, recordedCount: recorded.length, issued, issuedAt, deferredAt, stoppedBefore, newlyStopped };
}

/** `entries` with a time each: `undatedMs` for those without one (the same array when all have one). */
function dated(entries: readonly IssuedStop[], undatedMs: number): readonly DatedStop[] {
  if (entries.every((s) => s.atMs !== undefined)) return entries as readonly DatedStop[];
  return entries.map((s) => (s.atMs !== undefined ? (s as DatedStop) : { ...s, atMs: undatedMs }));
}

/**
 * When each container's stop spec was first issued (`deferred` false), or first put off and not
 * issued since (`deferred` true).
 */
function issuedTimes(issued: readonly DatedStop[], deferred: boolean): ReadonlyMap<string, number> {
  let out: Map<string, number> | undefined;
  for (const s of issued) {
    if (s.escalated || (s.deferred === true) !== deferred) continue;
    const at = s.atMs;
    const known = out?.get(s.container);
    if (known === undefined || at < known) (out ??= new Map()).set(s.container, at);
  }
  if (out === undefined) return NOTHING_ISSUED;
  if (deferred) for (const s of issued) if (s.deferred !== true && !s.escalated) out.delete(s.container);
  return out;
}

/** When the escalation that covers one of `running` was first issued, if it was. */
export function escalationTime(progress: Progress, running: readonly string[]): number | undefined {
  let at: number | undefined;
  for (const s of progress.issued) {
    if (!s.escalated || !running.includes(s.container)) continue;
    const t = s.atMs;
    if (at === undefined || t < at) at = t;
  }
  return at;
}

/** A delivery of `container`'s stop found PID 1 without a handler for the signal. */
export function deliveryFoundNoHandler(progress: Progress, container: string): boolean {
  for (const s of progress.issued) if (s.noHandler === true && s.container === container) return true;
  return false;
}

/** Targets whose stop was issued and that are stopped now, though the record does not list them yet. */
function stoppedSince(pod: V1Pod, targets: readonly string[], issuedAt: ReadonlyMap<string, number>, listed: readonly string[]): readonly string[] {
  let out: string[] | undefined;
  for (const name of targets) {
    if (issuedAt.has(name) && !listed.includes(name) && isStopped(statusOf(pod, name))) (out ??= []).push(name);
  }
  return out ?? NONE_STOPPED;
}

/**
 * The recorded stops, and the stops evident from the pod's ephemeral containers (`ephemerals`, not
 * empty) that are stop containers the record does not list: such a container is itself a record
 * that its stop was issued.
 */
function withEphemeralStops(
  pod: V1Pod,
  ephemerals: readonly V1EphemeralContainer[],
  targets: readonly string[],
  recorded: readonly DatedStop[],
  nowMs: number,
): readonly DatedStop[] {
  const issued = [...recorded];
  const targetOf = new Map<string, string | undefined>();
  for (const e of ephemerals) if (e && typeof e.name === 'string') targetOf.set(e.name, e.targetContainerName);
  const seen = new Set<string>();
  for (const s of issued) if (s.deferred !== true) seen.add(issuedKey(s.container, s.escalated));
  for (const container of targets) {
    for (const escalated of [false, true]) {
      if (seen.has(issuedKey(container, escalated))) continue;
      const name = ephemeralName(container, escalated);
      if (targetOf.get(name) === container) issued.push({ container, escalated, atMs: ephemeralStartedAt(pod, name) ?? nowMs });
    }
  }
  return issued;
}

function issuedKey(container: string, escalated: boolean): string {
  return escalated ? `${container}:KILL` : container;
}
