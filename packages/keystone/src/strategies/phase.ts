/**
 * completion: phase — end a pod by writing its terminal phase, judged by main containers.
 *
 * Guarantees:
 * - the patch tests the phase it read, so a phase the kubelet wrote meanwhile is never
 *   overwritten, and the pod's uid, so a pod recreated under the same name is never marked (the
 *   server answers 422 and the outcome is `stale`: evaluate again on the newer pod, nothing
 *   failed);
 * - idempotent: a pod already Succeeded/Failed is reported `already`; never throws.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { ApiError, type JsonPatchOp } from '@podlife/core';
import type { PodApi } from './api.js';
import { podRef } from './api.js';

/** 422: a JSON patch whose `test` operation failed (the phase changed since it was read). */
function isUnprocessable(err: unknown): boolean {
  return err instanceof ApiError && err.status === 422;
}

export function phasePatch(pod: V1Pod, phase: 'Succeeded' | 'Failed'): JsonPatchOp[] {
  const uid = pod.metadata?.uid;
  const ops: JsonPatchOp[] = uid ? [{ op: 'test', path: '/metadata/uid', value: uid }] : [];
  const current = pod.status?.phase;
  if (current === undefined) ops.push({ op: 'add', path: '/status/phase', value: phase });
  else ops.push({ op: 'test', path: '/status/phase', value: current }, { op: 'replace', path: '/status/phase', value: phase });
  return ops;
}

export interface PhaseOutcome {
  /** stale: the pod's phase changed since it was read, or the name is another pod's now (a test of the patch failed); evaluate again. */
  readonly outcome: 'done' | 'already' | 'failed' | 'stale';
  readonly detail: string;
  readonly error?: string;
  /** The pod as the patch returned it. */
  readonly written?: V1Pod;
}

export async function markPhase(api: PodApi, pod: V1Pod, phase: 'Succeeded' | 'Failed'): Promise<PhaseOutcome> {
  const detail = `set status.phase=${phase}`;
  const current = pod.status?.phase;
  if (current === 'Succeeded' || current === 'Failed') return { outcome: 'already', detail };
  const ops = phasePatch(pod, phase);
  try {
    const written = await api.patchStatus(podRef(pod), ops);
    return { outcome: 'done', detail, ...(written ? { written } : {}) };
  } catch (err) {
    if (isUnprocessable(err) && ops.some((op) => op.op === 'test')) return { outcome: 'stale', detail, error: errorMessage(err) };
    return { outcome: 'failed', detail, error: errorMessage(err) };
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
