/**
 * The Events node-readiness posts: their reasons, and `emit`, which posts one.
 * Guarantees: an Event failing to post never fails a reconcile (Events are best effort).
 */
import type { EventRecorderLike, EventType, KubeObject } from '@podlife/core';

export const Reasons = {
  TaintAdded: 'ReadinessTaintAdded',
  TaintRemoved: 'ReadinessTaintRemoved',
  TaintReleased: 'ReadinessTaintReleased',
  WriteFailed: 'ReadinessWriteFailed',
  AdditionRefused: 'ReadinessTaintAdditionRefused',
  InvalidRule: 'InvalidRule',
  OverlappingRule: 'OverlappingRule',
  CircuitBreakerOpen: 'CircuitBreakerOpen',
  CircuitBreakerClosed: 'CircuitBreakerClosed',
  DryRun: 'DryRun',
  CleanupComplete: 'CleanupComplete',
} as const;

/** Posts an Event without letting its failure escape. */
export function emit(sink: EventRecorderLike | undefined, regarding: KubeObject, type: EventType, reason: string, note: string, action?: string): void {
  if (!sink) return;
  sink.event(regarding, type, reason, note.slice(0, 1000), action).catch(() => undefined);
}
