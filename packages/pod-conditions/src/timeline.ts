/**
 * The start timeline of a pod: when it passed each stage, and how long each took.
 *
 * Guarantees:
 * - a stage is reached when `stageReached` says so (the answer explainPod uses too);
 * - stages are ordered by the time they were reached, never by an assumed order: without init
 *   containers the kubelet sets `Initialized` at pod start, which can precede the sandbox condition
 *   (KEP-3085 discusses this), and the timeline shows it that way;
 * - a stage's duration runs from the previous reached stage (or the pod's creation) to its own time;
 * - stages not reached follow in canonical order; the first of them runs until `nowMs` (the one the pod
 *   is waiting in), the others have no time;
 * - with Events, image pulls appear as extra spans (`kind: 'pull'`) and a missing scheduling time is
 *   taken from the `Scheduled` event.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import { podCondition } from './model.js';
import { firstContainerStartMs, sandboxReady } from './sandbox.js';
import { eventContainer, eventFirstMs, eventTimeMs, eventsOf } from './events.js';
import type { PodEvent } from './events.js';

/** The start stages of a pod. */
export type StageName = 'scheduled' | 'sandbox' | 'initialized' | 'containersReady' | 'ready';

export const stageOrder: readonly StageName[] = ['scheduled', 'sandbox', 'initialized', 'containersReady', 'ready'];

export const stageLabels: Readonly<Record<StageName, string>> = {
  scheduled: 'scheduled',
  sandbox: 'sandbox & network',
  initialized: 'initialized',
  containersReady: 'containers ready',
  ready: 'ready',
};

const stageCondition: Readonly<Record<StageName, string>> = {
  scheduled: 'PodScheduled',
  sandbox: 'PodReadyToStartContainers',
  initialized: 'Initialized',
  containersReady: 'ContainersReady',
  ready: 'Ready',
};

/** One stage or image pull on the timeline: when it was reached and how long it took. */
export interface TimelineEntry {
  kind: 'stage' | 'pull';
  /** A stage name, or `pull:<container>`. */
  key: string;
  label: string;
  /** reached: done; waiting: the pod is in it now; not-reached: a later stage. */
  state: 'reached' | 'waiting' | 'not-reached';
  /** Where the time came from. */
  source: 'condition' | 'inferred' | 'event' | 'none';
  startMs?: number;
  endMs?: number;
  durationMs?: number;
}

/** A pod's start stages and image pulls, with times and durations. */
export interface PodTimeline {
  createdMs?: number;
  /** Stages ordered by time reached, then the rest; pulls are in `pulls`, ordered by start. */
  stages: TimelineEntry[];
  pulls: TimelineEntry[];
  /** From creation to Ready (or to `nowMs` while not ready). */
  totalMs?: number;
}

/** A stage the pod has passed: when (if known) and where that came from. */
export interface StageReached {
  stage: StageName;
  /** Unknown when only the fact is known (a condition without a time, a pod IP). */
  atMs?: number;
  source: TimelineEntry['source'];
}

/** Reasons a container waits for only once its pod's sandbox exists (any but these two). */
const BEFORE_SANDBOX = new Set(['ContainerCreating', 'PodInitializing']);
/** Events the kubelet records only for a container of a pod whose sandbox exists. */
const AFTER_SANDBOX = new Set(['Pulling', 'Pulled', 'Created', 'Started']);

/**
 * Whether the pod has passed `stage`: the one answer `podTimeline` and `explainPod` both use, so
 * the stage the timeline shows in progress is the stage the diagnosis names. A stage's condition
 * decides when the pod has it; without the condition, scheduling is read from `spec.nodeName` and
 * the Scheduled event, the sandbox from what only a live sandbox produces (a started container,
 * a container's pull or start Event, a container waiting for a reason past ContainerCreating, a
 * pod IP).
 */
export function stageReached(pod: V1Pod, stage: StageName, events: readonly PodEvent[]): StageReached | undefined {
  const c = podCondition(pod, stageCondition[stage]);
  if (c?.status === 'True') {
    const at = timeMs(c.lastTransitionTime);
    return at !== undefined ? { stage, atMs: at, source: 'condition' } : { stage, source: 'condition' };
  }
  if (stage === 'scheduled') {
    if (c && !pod.spec?.nodeName) return undefined;
    const e = events.find((x) => x.reason === 'Scheduled');
    if (e) return { stage, atMs: eventTimeMs(e), source: 'event' };
    return pod.spec?.nodeName ? { stage, source: 'inferred' } : undefined;
  }
  if (c || stage !== 'sandbox' || !pod.spec?.nodeName) return undefined;
  // No sandbox condition (before 1.25, or the gate off): infer what can be inferred.
  const started = firstContainerStartMs(pod);
  if (started !== undefined) return { stage, atMs: started, source: 'inferred' };
  let firstEvent: number | undefined;
  for (const e of events) {
    if (!AFTER_SANDBOX.has(e.reason ?? '') || !eventContainer(e)) continue;
    const t = eventFirstMs(e);
    if (firstEvent === undefined || t < firstEvent) firstEvent = t;
  }
  if (firstEvent !== undefined) return { stage, atMs: firstEvent, source: 'inferred' };
  const waitingPast = (pod.status?.containerStatuses ?? []).some((s) => s.state?.waiting?.reason !== undefined && !BEFORE_SANDBOX.has(s.state.waiting.reason));
  return waitingPast || sandboxReady(pod).status === 'True' ? { stage, source: 'inferred' } : undefined;
}

/** The pod's start timeline. `nowMs` bounds the stage the pod is waiting in. */
export function podTimeline(pod: V1Pod, events?: readonly PodEvent[], nowMs?: number): PodTimeline {
  const evs = eventsOf(pod, events);
  const createdMs = timeMs(pod.metadata?.creationTimestamp);
  const reached: (StageReached & { atMs: number })[] = [];
  const untimed: StageReached[] = [];
  for (const stage of stageOrder) {
    const r = stageReached(pod, stage, evs);
    if (r?.atMs !== undefined) reached.push({ ...r, atMs: r.atMs });
    else if (r) untimed.push(r);
  }
  // Stable sort keeps the canonical order among equal times (conditions have second precision).
  reached.sort((a, b) => a.atMs - b.atMs);

  const stages: TimelineEntry[] = [];
  let prev = createdMs;
  for (const r of untimed) stages.push({ kind: 'stage', key: r.stage, label: stageLabels[r.stage], state: 'reached', source: r.source });
  for (const r of reached) {
    const start = prev ?? r.atMs;
    const entry: TimelineEntry = {
      kind: 'stage',
      key: r.stage,
      label: stageLabels[r.stage],
      state: 'reached',
      source: r.source,
      startMs: start,
      endMs: r.atMs,
      durationMs: Math.max(0, r.atMs - start),
    };
    stages.push(entry);
    prev = prev === undefined ? r.atMs : Math.max(prev, r.atMs);
  }
  const done = new Set([...reached, ...untimed].map((r) => r.stage));
  let waiting = pod.metadata?.deletionTimestamp === undefined && !isTerminal(pod);
  for (const stage of stageOrder) {
    if (done.has(stage)) continue;
    const entry: TimelineEntry = { kind: 'stage', key: stage, label: stageLabels[stage], state: 'not-reached', source: 'none' };
    if (waiting) {
      entry.state = 'waiting';
      if (prev !== undefined) {
        entry.startMs = prev;
        if (nowMs !== undefined) {
          entry.endMs = Math.max(prev, nowMs);
          entry.durationMs = entry.endMs - prev;
        }
      }
      waiting = false;
    }
    stages.push(entry);
  }

  const readyEntry = stages.find((s) => s.key === 'ready' && s.state === 'reached');
  const end = readyEntry?.endMs ?? nowMs;
  const timeline: PodTimeline = { stages, pulls: imagePulls(evs, nowMs) };
  if (createdMs !== undefined) {
    timeline.createdMs = createdMs;
    if (end !== undefined) timeline.totalMs = Math.max(0, end - createdMs);
  }
  return timeline;
}

function isTerminal(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** First `Pulling` to the following `Pulled` per container; a pull still going runs to `nowMs`. */
function imagePulls(events: readonly PodEvent[], nowMs: number | undefined): TimelineEntry[] {
  const pulls = new Map<string, TimelineEntry>();
  for (const e of events) {
    const container = eventContainer(e);
    if (!container) continue;
    const key = `pull:${container}`;
    if (e.reason === 'Pulling' && !pulls.has(key)) {
      const start = eventFirstMs(e);
      const entry: TimelineEntry = { kind: 'pull', key, label: `pull ${container}`, state: 'waiting', source: 'event', startMs: start };
      if (nowMs !== undefined) {
        entry.endMs = Math.max(start, nowMs);
        entry.durationMs = entry.endMs - start;
      }
      pulls.set(key, entry);
    } else if (e.reason === 'Pulled') {
      const entry = pulls.get(key);
      if (entry?.startMs !== undefined && entry.state === 'waiting') {
        entry.state = 'reached';
        entry.endMs = Math.max(entry.startMs, eventTimeMs(e));
        entry.durationMs = entry.endMs - entry.startMs;
      }
    }
  }
  return [...pulls.values()].sort((a, b) => (a.startMs ?? 0) - (b.startMs ?? 0));
}
