/**
 * Reading a pod's container states for the keystone rules: has a container finished, stopped,
 * with which exit and when; what its stop container reported; whether a Job still has to count
 * the pod.
 *
 * Guarantees:
 * - pure reads of `pod.status` (and the Job finalizer in `pod.metadata`), never a decision;
 * - a container the kubelet has not reported is neither finished nor stopped;
 * - long status lists are looked up by name through an index built once per list and checked
 *   against the list as it is now, so a list changed in place still gives the live answer.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import type { PodLifecycle } from './annotations.js';
import { NO_HANDLER_EXIT, ephemeralName } from './stop-containers.js';

/**
 * Positions by name for long status lists, built once per list, so a found status costs one
 * lookup. A position is only a hint, checked against the list as it is now, so a caller that
 * changes the list in place (a replaced, added or reordered status) still gets the live answer:
 * a hint that no longer names the container falls back to a scan, and the index is rebuilt. A
 * name with no status at all costs a scan each time (a container the kubelet has not reported).
 */
const statusIndexes = new WeakMap<readonly V1ContainerStatus[], Map<string, number>>();
const SCAN_MAX = 8;

export function statusOf(pod: V1Pod, name: string): V1ContainerStatus | undefined {
  const statuses = pod.status?.containerStatuses;
  if (!Array.isArray(statuses)) return undefined;
  if (statuses.length <= SCAN_MAX) return scanStatuses(statuses, name);
  let index = statusIndexes.get(statuses);
  if (index === undefined) index = indexStatuses(statuses);
  const at = index.get(name);
  if (at !== undefined) {
    const s = statuses[at] as V1ContainerStatus | undefined;
    if (s?.name === name) return s;
  }
  // Not in the index, or moved: the list changed since it was indexed (or has no such status).
  const found = scanStatuses(statuses, name);
  if (found !== undefined) indexStatuses(statuses);
  return found;
}

function scanStatuses(statuses: readonly V1ContainerStatus[], name: string): V1ContainerStatus | undefined {
  for (let i = 0; i < statuses.length; i++) {
    const s = statuses[i] as V1ContainerStatus;
    if (s?.name === name) return s;
  }
  return undefined;
}

/** The first position of each name (as a scan finds it), kept for `statuses`. */
function indexStatuses(statuses: readonly V1ContainerStatus[]): Map<string, number> {
  const index = new Map<string, number>();
  for (let i = statuses.length - 1; i >= 0; i--) {
    const s = statuses[i] as V1ContainerStatus;
    if (s && typeof s.name === 'string') index.set(s.name, i);
  }
  statusIndexes.set(statuses, index);
  return index;
}

/** Terminated and will not be restarted under the pod's restartPolicy. */
export function isFinished(status: V1ContainerStatus | undefined, restartPolicy: string): boolean {
  const t = status?.state?.terminated;
  if (!t) return false;
  if (restartPolicy === 'Never') return true;
  if (restartPolicy === 'OnFailure') return t.exitCode === 0;
  return false;
}

/** Not running now: terminated, or waiting to be restarted after a termination. */
export function isStopped(status: V1ContainerStatus | undefined): boolean {
  if (!status) return false;
  if (status.state?.terminated) return true;
  return status.state?.waiting !== undefined && status.lastState?.terminated !== undefined;
}

/** A container's last exit: its code and when it finished, when known. */
export interface Exit {
  readonly exitCode: number | undefined;
  readonly finishedAtMs: number | undefined;
}
export const NO_EXIT: Exit = Object.freeze({ exitCode: undefined, finishedAtMs: undefined });

export function lastExit(status: V1ContainerStatus | undefined): Exit {
  const t = status?.state?.terminated ?? status?.lastState?.terminated;
  return { exitCode: t?.exitCode, finishedAtMs: timeMs(t?.finishedAt) };
}

/** Succeeded when every main container that has terminated exited 0 (the kubelet's rule for native sidecars). */
export function phaseFromMains(pod: V1Pod, lifecycle: PodLifecycle): 'Succeeded' | 'Failed' {
  for (const c of lifecycle.containers) {
    if (c.role === 'sidecar') continue;
    const code = statusOf(pod, c.name)?.state?.terminated?.exitCode;
    if (code !== undefined && code !== 0) return 'Failed';
  }
  return 'Succeeded';
}

/** The exit code of the container's ephemeral stop container, once it has ended. */
export function stopContainerExit(pod: V1Pod, container: string): number | undefined {
  const statuses = pod.status?.ephemeralContainerStatuses;
  if (!Array.isArray(statuses)) return undefined;
  const name = ephemeralName(container, false);
  for (const s of statuses) {
    const code = s?.name === name ? s.state?.terminated?.exitCode : undefined;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/** The stop container reported PID 1 without a handler for the signal. */
export const stopFoundNoHandler = (exit: number | undefined): boolean => exit === NO_HANDLER_EXIT;

/**
 * A stop container's own failure: exit 1-127 (a refused kill, an endpoint that did not answer).
 * 0 is a delivered stop; 128 and above is the stop container ended by a signal, as a lingering
 * one is when its target's PID namespace ends.
 */
export const stopNotDelivered = (exit: number | undefined): boolean => exit !== undefined && exit > 0 && exit < 128 && exit !== NO_HANDLER_EXIT;

/** When a stop container started (running or terminated), as its status says. */
export function ephemeralStartedAt(pod: V1Pod, name: string): number | undefined {
  const statuses = pod.status?.ephemeralContainerStatuses;
  if (!Array.isArray(statuses)) return undefined;
  for (const s of statuses) if (s?.name === name) return timeMs(s.state?.running?.startedAt ?? s.state?.terminated?.startedAt);
  return undefined;
}

/** The Job controller's finalizer: present until the Job has counted the pod's result. */
export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

/** True while a Job has yet to count this pod (its tracking finalizer is still on it). */
export function awaitsJobCount(pod: V1Pod): boolean {
  const finalizers = pod.metadata?.finalizers;
  return Array.isArray(finalizers) && finalizers.includes(JOB_TRACKING_FINALIZER);
}
