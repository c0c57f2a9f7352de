/**
 * setPodConditions / setPodCondition: write custom conditions on a pod the way the API's own
 * controllers do.
 *
 * Guarantees:
 * - no API call when every condition already says the same (status, reason, message);
 * - `lastTransitionTime` moves only when the status changes (`setCondition` from core);
 * - the write is one strategic-merge patch on `pods/status` carrying only the conditions that
 *   changed, merged by `type`, so conditions written by the kubelet or other controllers are never
 *   clobbered, and conditions computed together change together: no reader sees one updated and
 *   the other not yet (ADR 0239);
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

/** Whether a write happened, the pod after it, and the conditions as decided (in input order). */
export interface SetPodConditionsResult {
  /** Whether a write happened. */
  changed: boolean;
  /** The pod after the write (or as last read when nothing changed). */
  pod: V1Pod;
  conditions: V1PodCondition[];
  /** API writes attempted (0 when nothing changed). */
  writes: number;
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

/** A pod that cannot have its conditions written; `reason` says why. */
export class PodConditionWriteError extends Error {
  readonly pod: string;
  readonly conditionTypes: readonly string[];
  constructor(pod: string, conditionTypes: string | readonly string[], reason: string, options?: { cause?: unknown }) {
    const types = typeof conditionTypes === 'string' ? [conditionTypes] : [...conditionTypes];
    super(`pod ${pod}: cannot set condition${types.length === 1 ? '' : 's'} ${types.join(', ')}: ${reason}`, options);
    this.name = 'PodConditionWriteError';
    this.pod = pod;
    this.conditionTypes = types;
  }

  /** The condition types of the write, joined with ", " when there are several. */
  get conditionType(): string {
    return this.conditionTypes.join(', ');
  }
}

/**
 * A strategic merge keeps fields the patch leaves out, so a reason or message that is no longer
 * there must be sent as null to be removed from the stored condition.
 */
function statusPatch(conditions: readonly V1PodCondition[]): { status: { conditions: Record<string, unknown>[] } } {
  const wire = conditionsPatch(conditions).status.conditions;
  return { status: { conditions: wire.map((c, i) => ({ ...c, reason: conditions[i]?.reason ?? null, message: conditions[i]?.message ?? null })) } };
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
  const r = await setPodConditions(client, pod, [condition], options);
  return { changed: r.changed, pod: r.pod, condition: r.conditions[0]!, writes: r.writes };
}

/**
 * Write several conditions on a pod in one patch (see the guarantees above). Each type may appear
 * once; an empty list writes nothing.
 */
export async function setPodConditions(
  client: PodStatusClient,
  pod: V1Pod,
  conditions: readonly ConditionInput<V1PodCondition>[],
  options: number | SetPodConditionOptions = {},
): Promise<SetPodConditionsResult> {
  const opts: SetPodConditionOptions = typeof options === 'number' ? { nowMs: options } : options;
  const name = `${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? ''}`;
  const types = conditions.map((c) => c.type);
  const twice = types.find((t, i) => types.indexOf(t) !== i);
  if (twice !== undefined) throw new PodConditionWriteError(name, types, `condition type ${twice} is given more than once`);
  if (!pod.metadata?.name) throw new PodConditionWriteError(name, types, 'the pod has no metadata.name');
  let current = pod;
  let writes = 0;

  const attempt = async (): Promise<SetPodConditionsResult> => {
    const nowMs = opts.nowMs ?? Date.now();
    let list = current.status?.conditions;
    const decided: V1PodCondition[] = [];
    const changed: V1PodCondition[] = [];
    for (const condition of conditions) {
      const next = setCondition(list, condition, nowMs);
      list = next.conditions;
      decided.push(next.condition);
      if (next.changed) changed.push(next.condition);
    }
    if (changed.length === 0) return { changed: false, pod: current, conditions: decided, writes };
    const rv = current.metadata?.resourceVersion;
    const patch = statusPatch(changed);
    const body = opts.unlocked || !rv ? patch : { metadata: { resourceVersion: rv }, ...patch };
    writes++;
    try {
      const updated = await client.patch<V1Pod>(podPath(current, 'status'), body, ContentType.StrategicMergePatch);
      return { changed: true, pod: updated, conditions: decided, writes };
    } catch (err) {
      if (isNotFound(err)) throw new AbortError(new PodConditionWriteError(name, types, 'the pod no longer exists', { cause: err }));
      if (!isConflict(err)) throw new AbortError(err instanceof Error ? err : new Error(String(err)));
      // Someone wrote the pod since we read it: decide again on what is there now.
      current = await client.get<V1Pod>(podPath(current), undefined, opts.signal).catch((e: unknown) => {
        if (isNotFound(e)) throw new AbortError(new PodConditionWriteError(name, types, 'the pod no longer exists', { cause: e }));
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
      throw new PodConditionWriteError(name, types, `still conflicting after ${writes} writes: the pod changes faster than it can be written`, { cause: err });
    }
    throw err;
  }
}
