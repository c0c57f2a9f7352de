/**
 * Did this pod succeed, ignoring its sidecars? One answer for the tools that read pod results
 * (CI runners, build systems, batch operators), judged as the kubelet judges a pod with native
 * sidecars: by its main containers only.
 *
 * Guarantees:
 * - pure; never throws on partial or odd statuses;
 * - native sidecars (init containers with restartPolicy Always) and containers the pod's
 *   lifecycle annotations mark `sidecar` (`role.podlife.dev/<c>` or the KEP-2872 draft key) are
 *   set aside, whatever their exit codes; each one set aside is listed with why;
 * - a main container counts as finished only when the kubelet will not restart it (restartPolicy
 *   Never: any exit; OnFailure: exit 0; Always: never), so `failed` is final;
 * - with a keystone (`role.podlife.dev/<c>: keystone`), the keystone's own exit decides, since the
 *   other mains are stopped when it ends;
 * - a pod the kubelet or API server already ended (phase Succeeded or Failed) keeps that phase's
 *   answer when no main container says otherwise, with the pod's reason (e.g. Evicted).
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { containerRestartPolicy, restartsAfter } from './crash-loop.js';

/** The keystone contract's role keys, read only. */
const ROLE_KEYS = ['role.podlife.dev/', 'sidecars.alpha.kubernetes.io/'] as const;

/** succeeded or failed (final: the kubelet will not restart the containers that decided), or running. */
export type PodOutcomeKind = 'succeeded' | 'failed' | 'running';

/** A container set aside from the verdict, and why. */
export interface SetAside {
  readonly container: string;
  readonly why: 'native-sidecar' | 'annotated-sidecar';
  /** Its exit code, when it has exited. */
  readonly exitCode?: number;
}

/** The verdict, its reason in one sentence, the containers it was judged by and those set aside. */
export interface PodOutcome {
  readonly outcome: PodOutcomeKind;
  readonly reason: string;
  readonly judgedBy: readonly string[];
  readonly setAside: readonly SetAside[];
}

function role(annotations: Record<string, string> | undefined, name: string): string | undefined {
  if (!annotations) return undefined;
  for (const prefix of ROLE_KEYS) {
    const value = annotations[prefix + name];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function exitOf(s: V1ContainerStatus | undefined): number | undefined {
  const code = s?.state?.terminated?.exitCode;
  return typeof code === 'number' ? code : undefined;
}

/** The pod's outcome from its main containers only (see the guarantees above). */
export function podOutcome(pod: V1Pod): PodOutcome {
  const annotations = pod.metadata?.annotations ?? undefined;
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  const statuses = new Map<string, V1ContainerStatus>();
  for (const s of pod.status?.containerStatuses ?? []) statuses.set(s.name, s);
  const initStatuses = new Map<string, V1ContainerStatus>();
  for (const s of pod.status?.initContainerStatuses ?? []) initStatuses.set(s.name, s);

  const setAside: SetAside[] = [];
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy !== 'Always') continue;
    const code = exitOf(initStatuses.get(c.name));
    setAside.push({ container: c.name, why: 'native-sidecar', ...(code !== undefined ? { exitCode: code } : {}) });
  }
  const mains = [];
  const keystones = [];
  for (const c of containers) {
    const r = role(annotations, c.name);
    if (r === 'sidecar') {
      const code = exitOf(statuses.get(c.name));
      setAside.push({ container: c.name, why: 'annotated-sidecar', ...(code !== undefined ? { exitCode: code } : {}) });
    } else {
      mains.push(c);
      if (r === 'keystone') keystones.push(c);
    }
  }
  const judged = keystones.length > 0 ? keystones : mains;
  const judgedBy = judged.map((c) => c.name);
  const aside = setAside.length > 0 ? `; set aside: ${setAside.map((s) => `${s.container} (${s.why === 'native-sidecar' ? 'native sidecar' : 'annotated sidecar'}${s.exitCode !== undefined ? `, exit ${s.exitCode}` : ''})`).join(', ')}` : '';
  const what = keystones.length > 0 ? 'keystone' : 'main container';

  const failed: string[] = [];
  const pending: string[] = [];
  for (const c of judged) {
    const code = exitOf(statuses.get(c.name));
    const policy = containerRestartPolicy(pod, c, false);
    if (code === undefined || restartsAfter(policy, code)) pending.push(c.name);
    else if (code !== 0) failed.push(`${c.name} exited ${code}`);
  }
  // With a keystone, the first one that finished decides (rule K stops the rest).
  if (keystones.length > 0) {
    const done = judged.find((c) => !pending.includes(c.name));
    if (done) {
      const code = exitOf(statuses.get(done.name));
      return code === 0
        ? { outcome: 'succeeded', reason: `keystone ${done.name} exited 0${aside}`, judgedBy, setAside }
        : { outcome: 'failed', reason: `keystone ${done.name} exited ${code}${aside}`, judgedBy, setAside };
    }
  } else if (failed.length > 0) {
    return { outcome: 'failed', reason: `${what} ${failed.join(', ')}${aside}`, judgedBy, setAside };
  }
  if (judged.length > 0 && pending.length === 0) {
    return { outcome: 'succeeded', reason: `every ${what} exited 0 (${judgedBy.join(', ')})${aside}`, judgedBy, setAside };
  }
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') {
    const why = pod.status?.reason ? `${pod.status.reason}: ` : '';
    const message = pod.status?.message ? `${why}${pod.status.message}` : `${why}the pod's phase is ${phase}`;
    return { outcome: phase === 'Failed' ? 'failed' : 'succeeded', reason: `${message}${aside}`, judgedBy, setAside };
  }
  const waiting = pending.length > 0 ? pending : judgedBy;
  return { outcome: 'running', reason: waiting.length > 0 ? `waiting for ${what} ${waiting.join(', ')}${aside}` : `the pod has no main container${aside}`, judgedBy, setAside };
}
