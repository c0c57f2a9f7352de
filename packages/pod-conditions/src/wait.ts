/**
 * waitForPodCondition: resolve when a pod's condition reaches a status.
 *
 * Guarantees:
 * - it watches through a core Informer on that one pod, so a dropped connection, an API server
 *   restart or a compacted resourceVersion (410) is resumed or relisted, never a silent hang;
 * - it settles exactly once: with the pod, or with a `PodWaitError` whose `reason` says why
 *   (`NotFound` at the start, `Deleted`, `Replaced` by a new pod of the same name, `Finished`
 *   before the condition could be reached, `Timeout`, `Aborted`);
 * - the watch is always stopped before it settles;
 * - the sandbox condition is read under either name (`PodHasNetwork` on 1.25-1.27).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { Informer, stripManagedFields } from '@podlife/core';
import type { KubeClient, ListWatchTransport } from '@podlife/core';
import { podCondition } from './model.js';
import { formatDuration } from './duration.js';

/** The reasons a wait for a pod condition can fail. */
export type PodWaitFailure = 'NotFound' | 'Deleted' | 'Replaced' | 'Finished' | 'Timeout' | 'Aborted';

/** Why waiting for a pod condition ended without it. */
export class PodWaitError extends Error {
  readonly reason: PodWaitFailure;
  /** The pod as last seen, when it was seen at all. */
  readonly pod: V1Pod | undefined;
  constructor(reason: PodWaitFailure, message: string, pod?: V1Pod, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PodWaitError';
    this.reason = reason;
    this.pod = pod;
  }
}

/** The status waited for, the time limit and the abort signal of a wait. */
export interface WaitForPodConditionOptions {
  /** The status to wait for; default 'True'. */
  status?: 'True' | 'False' | 'Unknown';
  /** Give up after this long; default none. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Reject if the pod reaches Succeeded/Failed first; default true. */
  failOnFinished?: boolean;
  /** Watch inactivity watchdog; default the informer's. */
  watchdogMs?: number;
  /** Reconnect backoff of the watch (first delay, cap). */
  backoff?: { minMs?: number; maxMs?: number };
  /** Replaces the HTTP list/watch (tests). */
  transport?: ListWatchTransport<V1Pod>;
}

/** Resolves with the pod once its `type` condition has `status` (True by default). */
export async function waitForPodCondition(
  client: KubeClient | undefined,
  namespace: string,
  name: string,
  type: string,
  opts: WaitForPodConditionOptions = {},
): Promise<V1Pod> {
  const want = opts.status ?? 'True';
  const what = `pod ${namespace}/${name} condition ${type}=${want}`;
  if (opts.signal?.aborted) throw new PodWaitError('Aborted', `waiting for ${what} was aborted`, undefined, { cause: opts.signal.reason });

  const informer = new Informer<V1Pod>({
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
    fieldSelector: `metadata.name=${name}`,
    transform: stripManagedFields,
    name: `wait ${namespace}/${name}`,
    ...(client ? { client } : {}),
    ...(opts.transport ? { transport: opts.transport } : {}),
    ...(opts.watchdogMs !== undefined ? { watchdogMs: opts.watchdogMs } : {}),
    ...(opts.backoff ? { backoff: opts.backoff } : {}),
  });

  let uid: string | undefined;
  let last: V1Pod | undefined;
  const lastSeen = (): string => {
    const c = last ? podCondition(last, type) : undefined;
    return c ? ` (last ${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''})` : last ? ` (no ${type} condition yet)` : '';
  };

  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await new Promise<V1Pod>((resolve, reject) => {
      const observe = (pod: V1Pod): void => {
        const podUid = pod.metadata?.uid;
        if (uid !== undefined && podUid !== undefined && podUid !== uid) {
          reject(new PodWaitError('Replaced', `${what}: the pod was deleted and a new one with the same name created (uid ${uid} -> ${podUid})`, last));
          return;
        }
        uid ??= podUid;
        last = pod;
        if (podCondition(pod, type)?.status === want) return resolve(pod);
        const phase = pod.status?.phase;
        if ((opts.failOnFinished ?? true) && (phase === 'Succeeded' || phase === 'Failed')) {
          // The kubelet moves a deleted pod to a terminal phase before it is removed: name the
          // deletion, the cause, rather than the phase it led to.
          if (pod.metadata?.deletionTimestamp) {
            reject(new PodWaitError('Deleted', `${what}: the pod was deleted while waiting (it ended ${phase})${lastSeen()}`, pod));
          } else {
            reject(new PodWaitError('Finished', `${what}: the pod finished (${phase}) first${lastSeen()}`, pod));
          }
        }
      };
      informer.on('add', observe);
      informer.on('update', (pod) => observe(pod)); // (new, old)
      informer.on('delete', (pod) => {
        if (uid === undefined || pod.metadata?.uid === uid) reject(new PodWaitError('Deleted', `${what}: the pod was deleted while waiting${lastSeen()}`, pod));
      });
      informer.on('synced', () => {
        if (informer.store.size === 0 && last === undefined) reject(new PodWaitError('NotFound', `${what}: pod ${namespace}/${name} does not exist`));
      });
      if (opts.timeoutMs !== undefined) {
        const ms = opts.timeoutMs;
        timer = setTimeout(() => reject(new PodWaitError('Timeout', `timed out after ${formatDuration(ms)} waiting for ${what}${lastSeen()}`, last)), ms);
      }
      if (opts.signal) {
        const signal = opts.signal;
        onAbort = () => reject(new PodWaitError('Aborted', `waiting for ${what} was aborted`, last, { cause: signal.reason }));
        signal.addEventListener('abort', onAbort, { once: true });
      }
      informer.start();
    });
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    informer.removeAllListeners();
    await informer.stop();
  }
}
