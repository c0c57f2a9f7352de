/**
 * setPodCondition: write one custom condition on a pod the way the API's own controllers do.
 *
 * Guarantees:
 * - no API call when the condition already says the same (status, reason, message);
 * - `lastTransitionTime` moves only when the status changes (`setCondition` from core);
 * - the write is a strategic-merge patch on `pods/status` carrying only this condition, merged by
 *   `type`, so conditions written by the kubelet or other controllers are never clobbered;
 * - the patch carries the `resourceVersion` of the pod it was computed from, so the API server
 *   rejects it (409) if the pod changed in between; the pod is then re-read, the decision made again
 *   (often a no-op by then) and retried with backoff (p-retry). See docs/adr/0040.
 */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import pRetry, { AbortError } from 'p-retry';
import { ContentType, conditionsPatch, isConflict, isNotFound, resourcePath, setCondition } from '@podlife/core';
import type { ConditionInput, KubeClient } from '@podlife/core';

/** What setPodCondition needs of a client. */
export type PodStatusClient = Pick<KubeClient, 'get' | 'patch'>;

/** Clock, retries, locking and abort signal of a condition write. */
export interface SetPodConditionOptions {
  /** The time written as `lastTransitionTime` on a status change. Default: now. */
  nowMs?: number;
  /** Conflict retries before giving up. Default 10. */
  retries?: number;
  /** Skip the resourceVersion precondition (one blind merge by type, never a conflict). Default false. */
  unlocked?: boolean;
  signal?: AbortSignal;
}

/** Whether a condition write happened, and the pod after it. */
export interface SetPodConditionResult {
  /** Whether a write happened. */
  changed: boolean;
  /** The pod after the write (or as last read when nothing changed). */
  pod: V1Pod;
  condition: V1PodCondition;
  /** API writes attempted (0 when nothing changed). */
  writes: number;
}

/** A pod that cannot have its condition written; `reason` says why. */
export class PodConditionWriteError extends Error {
  readonly pod: string;
  readonly conditionType: string;
  constructor(pod: string, conditionType: string, reason: string, options?: { cause?: unknown }) {
    super(`pod ${pod}: cannot set condition ${conditionType}: ${reason}`, options);
    this.name = 'PodConditionWriteError';
    this.pod = pod;
    this.conditionType = conditionType;
  }
}

/**
 * A strategic merge keeps fields the patch leaves out, so a reason or message that is no longer
 * there must be sent as null to be removed from the stored condition.
 */
function statusPatch(condition: V1PodCondition): { status: { conditions: Record<string, unknown>[] } } {
  const [c] = conditionsPatch([condition]).status.conditions;
  return { status: { conditions: [{ ...c, reason: condition.reason ?? null, message: condition.message ?? null }] } };
}

function podPath(pod: V1Pod, subresource?: string): string {
  const ref = { version: 'v1', resource: 'pods', namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '' };
  return resourcePath(subresource ? { ...ref, subresource } : ref);
}

/** Write one condition on a pod (see the guarantees above); resolves with whether it changed. */
export async function setPodCondition(
  client: PodStatusClient,
  pod: V1Pod,
  condition: ConditionInput<V1PodCondition>,
  options: number | SetPodConditionOptions = {},
): Promise<SetPodConditionResult> {
  const opts: SetPodConditionOptions = typeof options === 'number' ? { nowMs: options } : options;
  const name = `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
  if (!pod.metadata?.name) throw new PodConditionWriteError(name, condition.type, 'the pod has no metadata.name');
  let current = pod;
  let writes = 0;

  const attempt = async (): Promise<SetPodConditionResult> => {
    const next = setCondition(current.status?.conditions, condition, opts.nowMs ?? Date.now());
    if (!next.changed) return { changed: false, pod: current, condition: next.condition, writes };
    const rv = current.metadata?.resourceVersion;
    const patch = statusPatch(next.condition);
    const body = opts.unlocked || !rv ? patch : { metadata: { resourceVersion: rv }, ...patch };
    writes++;
    try {
      const updated = await client.patch<V1Pod>(podPath(current, 'status'), body, ContentType.StrategicMergePatch);
      return { changed: true, pod: updated, condition: next.condition, writes };
    } catch (err) {
      if (isNotFound(err)) throw new AbortError(new PodConditionWriteError(name, condition.type, 'the pod no longer exists', { cause: err }));
      if (!isConflict(err)) throw new AbortError(err instanceof Error ? err : new Error(String(err)));
      // Someone wrote the pod since we read it: decide again on what is there now.
      current = await client.get<V1Pod>(podPath(current), undefined, opts.signal).catch((e: unknown) => {
        if (isNotFound(e)) throw new AbortError(new PodConditionWriteError(name, condition.type, 'the pod no longer exists', { cause: e }));
        throw e;
      });
      throw err;
    }
  };

  try {
    return await pRetry(attempt, {
      retries: opts.retries ?? 10,
      minTimeout: 10,
      maxTimeout: 1000,
      factor: 2,
      randomize: true,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (err) {
    if (isConflict(err)) {
      throw new PodConditionWriteError(name, condition.type, `still conflicting after ${writes} writes: the pod changes faster than it can be written`, { cause: err });
    }
    throw err;
  }
}
