/**
 * The few facts podlife reads from a pod's Events, for both core/v1 and events.k8s.io/v1 shapes.
 *
 * Guarantees: an event that belongs to another incarnation of the pod (same name, other uid) is
 * ignored; an event without any timestamp sorts first and never throws.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import type { Time } from '@podlife/core';

/** The fields read from an Event; `CoreV1Event` and `EventsV1Event` both fit. */
export interface PodEvent {
  type?: string;
  reason?: string;
  message?: string;
  /** events.k8s.io/v1 calls the message `note`. */
  note?: string;
  count?: number;
  firstTimestamp?: Time;
  lastTimestamp?: Time;
  eventTime?: Time;
  deprecatedLastTimestamp?: Time;
  series?: { count?: number; lastObservedTime?: Time };
  involvedObject?: { uid?: string; fieldPath?: string };
  regarding?: { uid?: string; fieldPath?: string };
  metadata?: { creationTimestamp?: Time };
}

/** When the event last happened. */
export function eventTimeMs(e: PodEvent): number {
  return (
    timeMs(e.series?.lastObservedTime) ??
    timeMs(e.lastTimestamp) ??
    timeMs(e.deprecatedLastTimestamp) ??
    timeMs(e.eventTime) ??
    timeMs(e.firstTimestamp) ??
    timeMs(e.metadata?.creationTimestamp) ??
    0
  );
}

/** When the event first happened. */
export function eventFirstMs(e: PodEvent): number {
  return timeMs(e.firstTimestamp) ?? timeMs(e.eventTime) ?? eventTimeMs(e);
}

export function eventMessage(e: PodEvent): string {
  return (e.message ?? e.note ?? '').trim();
}

/** Container named by an event's `fieldPath` (`spec.containers{app}`), if any. */
export function eventContainer(e: PodEvent): string | undefined {
  const path = e.involvedObject?.fieldPath ?? e.regarding?.fieldPath;
  return path ? /\{([^}]+)\}/.exec(path)?.[1] : undefined;
}

/** The pod's events, oldest first, without those of an earlier pod of the same name. */
export function eventsOf(pod: V1Pod, events: readonly PodEvent[] | undefined): PodEvent[] {
  const uid = pod.metadata?.uid;
  const mine = (events ?? []).filter((e) => {
    const other = e.involvedObject?.uid ?? e.regarding?.uid;
    return !uid || !other || other === uid;
  });
  return mine.sort((a, b) => eventTimeMs(a) - eventTimeMs(b));
}

/** The most recent event with one of `reasons`, or undefined. */
export function latestEvent(events: readonly PodEvent[], reasons: readonly string[]): PodEvent | undefined {
  let found: PodEvent | undefined;
  for (const e of events) if (e.reason !== undefined && reasons.includes(e.reason)) found = e;
  return found;
}
