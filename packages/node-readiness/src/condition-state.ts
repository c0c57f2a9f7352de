/**
 * The four states of a node condition a rule waits for, kept apart because they call for
 * different responses: True / False (the agent reports, possibly failing), Unknown (the agent
 * says it cannot tell, or its heartbeat is older than `maxConditionAge`), Missing (no agent).
 *
 * Guarantees: pure; `failing` is true only for an explicit, fresh status opposite to the required
 * one — never for Unknown, stale or Missing — so a dead agent alone can never re-taint a node;
 * a transition or heartbeat time later than `nowMs` (a skewed or lying node clock) is read as
 * `nowMs`, so a debounce measured from it is never further away than the debounce itself.
 */
import type { V1NodeCondition } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import type { ConditionStatus } from '@podlife/core';
import type { ResolvedCondition } from './rule.js';

/** The four states of a watched node condition. */
export type ConditionState = 'True' | 'False' | 'Unknown' | 'Missing';

/** One node condition as a gate sees it: its state and freshness, whether it satisfies or fails the rule, and since when. */
export interface ConditionObservation {
  type: string;
  state: ConditionState;
  /** Unknown because the heartbeat is older than maxConditionAge (the agent reported True/False). */
  stale: boolean;
  /** What the rule compares: the reported status, Unknown when stale, defaultStatus when missing. */
  status?: ConditionStatus;
  required: ConditionStatus;
  satisfied: boolean;
  failing: boolean;
  transitionMs?: number;
  heartbeatMs?: number;
  reason?: string;
  message?: string;
  /** A pod condition: what it reads ("DaemonSet kube-system/cilium"), and the pod it judged. */
  podSource?: string;
  pod?: string;
}

export function observeCondition(
  conditions: readonly V1NodeCondition[] | undefined,
  want: ResolvedCondition,
  maxAgeMs: number | undefined,
  nowMs: number,
): ConditionObservation {
  const c = conditions?.find((x) => x.type === want.type);
  if (!c) {
    const status = want.defaultStatus;
    return {
      type: want.type,
      state: 'Missing',
      stale: false,
      ...(status ? { status } : {}),
      required: want.requiredStatus,
      satisfied: status !== undefined && status === want.requiredStatus,
      failing: false,
    };
  }
  const transitionMs = notAfter(timeMs(c.lastTransitionTime), nowMs);
  const heartbeatMs = notAfter(timeMs(c.lastHeartbeatTime), nowMs) ?? transitionMs;
  const reported: ConditionStatus = c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
  const stale = reported !== 'Unknown' && maxAgeMs !== undefined && heartbeatMs !== undefined && nowMs - heartbeatMs > maxAgeMs;
  const status: ConditionStatus = stale ? 'Unknown' : reported;
  return {
    type: want.type,
    state: status,
    stale,
    status,
    required: want.requiredStatus,
    satisfied: status === want.requiredStatus,
    failing: status !== 'Unknown' && status !== want.requiredStatus,
    ...(transitionMs !== undefined ? { transitionMs } : {}),
    ...(heartbeatMs !== undefined ? { heartbeatMs } : {}),
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
}

/** `ms`, or `nowMs` when `ms` is later: nothing reported can have happened after it was read. */
function notAfter(ms: number | undefined, nowMs: number): number | undefined {
  return ms === undefined ? undefined : Math.min(ms, nowMs);
}

/** One line a user can act on: "GPUReady is Unknown (heartbeat 300s old, max 120s)". */
export function describeObservation(o: ConditionObservation, nowMs: number, maxAgeMs?: number): string {
  const need = `needs ${o.required}`;
  if (o.podSource !== undefined) {
    const stale = o.stale ? ` (stale: the node's heartbeat is ${Math.round((nowMs - (o.heartbeatMs ?? nowMs)) / 1000)}s old, maxConditionAge ${Math.round((maxAgeMs ?? 0) / 1000)}s)` : '';
    const counted = o.state === 'Missing' && o.status ? `, counted as ${o.status} by defaultStatus` : '';
    return `${o.type} is ${o.state}${stale}${counted}: ${o.message ?? o.podSource}${o.satisfied ? '' : `; ${need}${o.failing ? ' (pod failing)' : ''}`}`;
  }
  switch (o.state) {
    case 'Missing':
      return o.status
        ? `${o.type} is Missing (agent absent), counted as ${o.status} by defaultStatus; ${need}`
        : `${o.type} is Missing (agent absent: no such node condition); ${need}`;
    case 'Unknown':
      if (o.stale) {
        const age = Math.round((nowMs - (o.heartbeatMs ?? nowMs)) / 1000);
        return `${o.type} is Unknown (stale: heartbeat ${age}s old, maxConditionAge ${Math.round((maxAgeMs ?? 0) / 1000)}s); ${need}`;
      }
      return `${o.type} is Unknown${o.reason ? ` (${o.reason})` : ''}; ${need}`;
    default:
      return `${o.type} is ${o.state}${o.reason ? ` (${o.reason}${o.message ? `: ${o.message}` : ''})` : ''}${o.satisfied ? '' : `; ${need}${o.failing ? ' (agent failing)' : ''}`}`;
  }
}
