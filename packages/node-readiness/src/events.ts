/**
 * The slice of core's EventRecorder node-readiness needs, so reconcilers can be tested with a stub.
 * Guarantees: an Event failing to post never fails a reconcile (Events are best effort).
 */
import type { KubeObject } from '@podlife/core';

export interface EventRecorderLike {
  event(regarding: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string, action?: string): Promise<void>;
}

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
export function emit(sink: EventRecorderLike | undefined, regarding: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string, action?: string): void {
  if (!sink) return;
  sink.event(regarding, type, reason, note.slice(0, 1000), action).catch(() => undefined);
}
