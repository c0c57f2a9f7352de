/**
 * completion: phase — end a pod by writing its terminal phase, judged by main containers.
 *
 * Guarantees:
 * - the patch tests the phase it read, so a phase the kubelet wrote meanwhile is never
 *   overwritten (the server answers 422 and the outcome is `failed`, to re-evaluate);
 * - idempotent: a pod already Succeeded/Failed is reported `already`; never throws.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import type { PodApi } from './api.js';
import { podRef } from './api.js';
import type { ActionOutcome } from './delete.js';

export function phasePatch(pod: V1Pod, phase: 'Succeeded' | 'Failed'): JsonPatchOp[] {
  const current = pod.status?.phase;
  if (current === undefined) return [{ op: 'add', path: '/status/phase', value: phase }];
  return [
    { op: 'test', path: '/status/phase', value: current },
    { op: 'replace', path: '/status/phase', value: phase },
  ];
}

export async function markPhase(api: PodApi, pod: V1Pod, phase: 'Succeeded' | 'Failed'): Promise<ActionOutcome> {
  const detail = `set status.phase=${phase}`;
  const current = pod.status?.phase;
  if (current === 'Succeeded' || current === 'Failed') return { outcome: 'already', detail };
  try {
    await api.patchStatus(podRef(pod), phasePatch(pod, phase));
    return { outcome: 'done', detail };
  } catch (err) {
    return { outcome: 'failed', detail, error: err instanceof Error ? err.message : String(err) };
  }
}
