/**
 * Is the pod's sandbox (and its network) up? A tri-state answer with where it came from.
 *
 * Guarantees:
 * - when the kubelet writes the sandbox condition (`PodReadyToStartContainers`, or `PodHasNetwork`
 *   on 1.25-1.27), the answer is that condition (`source: 'condition'`);
 * - otherwise it is inferred (`source: 'inferred'`) from facts that only a live sandbox produces, and
 *   says `Unknown` rather than guess.
 *
 * Limits of the inference (clusters before 1.25, or with the feature gate off):
 * - `True` from "a container has started" is the past: a sandbox that died later (node reboot, runtime
 *   crash) is only visible through the condition, so an inferred `True` may be stale;
 * - a pod IP means the network plugin answered, but hostNetwork pods carry the node's IP from the start,
 *   so for them only a started container counts;
 * - a pending pod bound to a node with no IP and no started container is `Unknown`: its sandbox may be
 *   being created, failing, or ready with images still pulling.
 */
import type { V1Pod, V1ContainerStatus } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import { podCondition } from './model.js';

/** A condition status: known true, known false, or cannot tell. */
export type TriState = 'True' | 'False' | 'Unknown';
/** An IP family of a pod address. */
export type IpFamily = 'IPv4' | 'IPv6';

/** A tri-state answer, where it came from, and why. */
export interface Readiness {
  status: TriState;
  source: 'condition' | 'inferred';
  /** UpperCamelCase, machine-readable. */
  reason: string;
  /** One sentence for people. */
  message: string;
  /** Epoch ms since when this status holds, when known. */
  sinceMs?: number;
  /** `nowMs - sinceMs`, when both are known. */
  forMs?: number;
}

export function ipFamily(ip: string): IpFamily {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

/** The pod's IPs (`status.podIPs`, falling back to `status.podIP` on old API servers). */
export function podIPs(pod: V1Pod): string[] {
  const list = (pod.status?.podIPs ?? []).map((p) => p.ip).filter((ip): ip is string => typeof ip === 'string' && ip !== '');
  if (list.length > 0) return list;
  const single = pod.status?.podIP;
  return single ? [single] : [];
}

function allStatuses(pod: V1Pod): V1ContainerStatus[] {
  const s = pod.status;
  if (!s) return [];
  return [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? []), ...(s.ephemeralContainerStatuses ?? [])];
}

/** The earliest time any container (in any of its states) started: proof a sandbox existed then. */
export function firstContainerStartMs(pod: V1Pod): number | undefined {
  let first: number | undefined;
  for (const cs of allStatuses(pod)) {
    for (const state of [cs.state, cs.lastState]) {
      const t = timeMs(state?.running?.startedAt) ?? timeMs(state?.terminated?.startedAt);
      if (t !== undefined && (first === undefined || t < first)) first = t;
    }
  }
  return first;
}

function lastFinishMs(pod: V1Pod): number | undefined {
  let last: number | undefined;
  for (const cs of allStatuses(pod)) {
    const t = timeMs(cs.state?.terminated?.finishedAt);
    if (t !== undefined && (last === undefined || t > last)) last = t;
  }
  return last;
}

function withFor(r: Readiness, nowMs: number | undefined): Readiness {
  if (nowMs !== undefined && r.sinceMs !== undefined) r.forMs = Math.max(0, nowMs - r.sinceMs);
  return r;
}

/** Whether the pod's sandbox is ready (created, network configured), at `nowMs` if given. */
export function sandboxReady(pod: V1Pod, nowMs?: number): Readiness {
  const c = podCondition(pod, 'PodReadyToStartContainers');
  if (c) {
    const status: TriState = c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
    const r: Readiness = {
      status,
      source: 'condition',
      reason: c.reason ?? (status === 'True' ? 'SandboxReady' : status === 'False' ? 'SandboxNotReady' : 'SandboxUnknown'),
      message: c.message ?? `${c.type} is ${c.status}`,
    };
    const since = timeMs(c.lastTransitionTime);
    if (since !== undefined) r.sinceMs = since;
    return withFor(r, nowMs);
  }
  return withFor(inferSandbox(pod), nowMs);
}

function inferSandbox(pod: V1Pod): Readiness {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') {
    const r: Readiness = {
      status: 'False',
      source: 'inferred',
      reason: 'PodTerminal',
      message: `the pod is ${phase}: its sandbox is torn down`,
    };
    const end = lastFinishMs(pod);
    if (end !== undefined) r.sinceMs = end;
    return r;
  }
  if (!pod.spec?.nodeName) {
    return { status: 'False', source: 'inferred', reason: 'NotScheduled', message: 'the pod is not bound to a node yet' };
  }
  const started = firstContainerStartMs(pod);
  if (started !== undefined) {
    return {
      status: 'True',
      source: 'inferred',
      reason: 'ContainerStarted',
      message: 'a container has started, so the sandbox existed (it may have been recreated since)',
      sinceMs: started,
    };
  }
  if (!pod.spec.hostNetwork && podIPs(pod).length > 0) {
    return {
      status: 'True',
      source: 'inferred',
      reason: 'PodIPAssigned',
      message: 'the network plugin assigned a pod IP, so the sandbox network is configured',
    };
  }
  return {
    status: 'Unknown',
    source: 'inferred',
    reason: 'NoSandboxSignal',
    message: 'the cluster does not report the sandbox condition and no container has started yet',
  };
}

/**
 * Whether the pod's network is up, for one IP family if given. A sandbox that is ready without an
 * address of the asked family is a half-up dual-stack pod: `False`, reason `NoAddressOfFamily`.
 * hostNetwork pods share the node's network: they are up when the sandbox is, with the node's addresses.
 */
export function networkReady(pod: V1Pod, family?: IpFamily, nowMs?: number): Readiness {
  const sandbox = sandboxReady(pod, nowMs);
  const hostNetwork = pod.spec?.hostNetwork === true;
  if (family === undefined) {
    if (!hostNetwork || sandbox.status !== 'True') return sandbox;
    return { ...sandbox, reason: 'HostNetwork', message: "the pod uses the node's network, and its sandbox is ready" };
  }
  const ips = podIPs(pod).filter((ip) => ipFamily(ip) === family);
  if (sandbox.status === 'False') return sandbox;
  if (ips.length === 0) {
    if (sandbox.status === 'Unknown') return sandbox;
    const other = podIPs(pod);
    const r: Readiness = {
      ...sandbox,
      status: 'False',
      reason: 'NoAddressOfFamily',
      message:
        other.length > 0
          ? `the sandbox is ready but has no ${family} address (only ${other.join(', ')})${hostNetwork ? ": the node has none" : ''}`
          : `the sandbox is ready but no ${family} address is reported yet`,
    };
    return r;
  }
  if (sandbox.status === 'Unknown') {
    // An address of the family exists, so the network plugin set it up; hostNetwork addresses prove nothing.
    if (hostNetwork) return sandbox;
    return withFor(
      { status: 'True', source: 'inferred', reason: 'PodIPAssigned', message: `the pod has ${family} address ${ips[0]}` },
      nowMs,
    );
  }
  return { ...sandbox, reason: hostNetwork ? 'HostNetwork' : sandbox.reason, message: `${family} address ${ips.join(', ')}; ${sandbox.message}` };
}
