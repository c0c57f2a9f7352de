/**
 * delete strategy (TerminatePod): delete the pod with its own grace period.
 *
 * Guarantees: idempotent — a pod already terminating or already gone is reported `already`;
 * the uid precondition means a pod recreated under the same name is never deleted by mistake;
 * never throws.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { PodApi } from './api.js';
import { podRef } from './api.js';

export interface ActionOutcome {
  readonly outcome: 'done' | 'already' | 'failed';
  readonly detail: string;
  readonly error?: string;
}

export async function deletePod(api: PodApi, pod: V1Pod, gracePeriodSeconds: number): Promise<ActionOutcome> {
  const detail = `delete pod with gracePeriodSeconds=${gracePeriodSeconds}`;
  if (pod.metadata?.deletionTimestamp) return { outcome: 'already', detail };
  try {
    const result = await api.deletePod(podRef(pod), gracePeriodSeconds);
    return { outcome: result === 'gone' ? 'already' : 'done', detail };
  } catch (err) {
    return { outcome: 'failed', detail, error: err instanceof Error ? err.message : String(err) };
  }
}
