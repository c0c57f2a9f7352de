/** Pod fixtures for keystone tests: `pod().container('app').sidecar('proxy').finished('app', 0).build()`. */
import type { V1Container, V1ContainerStatus, V1EphemeralContainer, V1Pod, V1PodCondition } from '@kubernetes/client-node';

export const T0 = Date.parse('2024-05-01T10:00:00Z');
export const iso = (ms: number): string => new Date(ms).toISOString();

type State = { kind: 'running' } | { kind: 'waiting' } | { kind: 'terminated'; exitCode: number; at: number };

export class PodBuilder {
  private readonly annotations: Record<string, string> = {};
  private readonly containers: V1Container[] = [];
  private readonly inits: V1Container[] = [];
  private readonly ephemerals: V1EphemeralContainer[] = [];
  private readonly states = new Map<string, State>();
  private readonly last = new Map<string, { exitCode: number; at: number }>();
  private readonly conditions: V1PodCondition[] = [];
  private restart: string | undefined = 'Never';
  private graceSeconds: number | undefined;
  private deletion = false;
  private podPhase = 'Running';
  private share = false;
  private hostPid = false;

  constructor(readonly name = 'job-abc') {}

  container(name: string): this {
    this.containers.push({ name, image: 'app:1' });
    return this;
  }
  keystone(name: string): this {
    this.annotations[`role.podlife.dev/${name}`] = 'keystone';
    return this.container(name);
  }
  sidecar(name: string, stop?: string): this {
    this.annotations[`role.podlife.dev/${name}`] = 'sidecar';
    if (stop) this.annotations[`stop.podlife.dev/${name}`] = stop;
    return this.container(name);
  }
  nativeSidecar(name: string, annotate = true): this {
    this.inits.push({ name, image: 'proxy:1', restartPolicy: 'Always' });
    if (annotate) this.annotations[`role.podlife.dev/${name}`] = 'sidecar';
    return this;
  }
  init(name: string): this {
    this.inits.push({ name, image: 'init:1' });
    return this;
  }
  /** An ephemeral container targeting `target` (as a stop strategy adds them). */
  ephemeral(name: string, target: string): this {
    this.ephemerals.push({ name, image: 'busybox:1', targetContainerName: target });
    return this;
  }
  annotate(key: string, value: string): this {
    this.annotations[key] = value;
    return this;
  }
  restartPolicy(policy: string | undefined): this {
    this.restart = policy;
    return this;
  }
  grace(seconds: number): this {
    this.graceSeconds = seconds;
    return this;
  }
  shareProcessNamespace(): this {
    this.share = true;
    return this;
  }
  /** spec.hostPID: the containers see the node's processes, PID 1 the node's init. */
  hostPID(): this {
    this.hostPid = true;
    return this;
  }
  finished(name: string, exitCode: number, at = T0): this {
    this.states.set(name, { kind: 'terminated', exitCode, at });
    return this;
  }
  waiting(name: string): this {
    this.states.set(name, { kind: 'waiting' });
    return this;
  }
  /** Terminated once, running again (restartPolicy Always/OnFailure). */
  restarted(name: string, exitCode: number, at = T0): this {
    this.last.set(name, { exitCode, at });
    return this;
  }
  condition(type: string, status: 'True' | 'False', message = '', at = T0, reason = 'Test'): this {
    this.conditions.push({ type, status, message, reason, lastTransitionTime: iso(at) as unknown as Date });
    return this;
  }
  deleting(): this {
    this.deletion = true;
    return this;
  }
  phase(phase: string): this {
    this.podPhase = phase;
    return this;
  }

  build(): V1Pod {
    const statuses: V1ContainerStatus[] = this.containers.map((c) => {
      const s = this.states.get(c.name) ?? { kind: 'running' };
      const last = this.last.get(c.name);
      const status: V1ContainerStatus = {
        name: c.name,
        image: c.image ?? '',
        imageID: '',
        ready: s.kind === 'running',
        restartCount: last ? 1 : 0,
        state:
          s.kind === 'terminated'
            ? { terminated: { exitCode: s.exitCode, finishedAt: iso(s.at) as unknown as Date, reason: s.exitCode === 0 ? 'Completed' : 'Error' } }
            : s.kind === 'waiting'
              ? { waiting: { reason: 'CrashLoopBackOff' } }
              : { running: { startedAt: iso(T0 - 60_000) as unknown as Date } },
      };
      if (last) status.lastState = { terminated: { exitCode: last.exitCode, finishedAt: iso(last.at) as unknown as Date } };
      return status;
    });
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: this.name,
        namespace: 'default',
        uid: 'uid-1',
        ...(Object.keys(this.annotations).length > 0 ? { annotations: { ...this.annotations } } : {}),
        ...(this.deletion ? { deletionTimestamp: iso(T0) as unknown as Date } : {}),
      },
      spec: {
        containers: this.containers.map((c) => ({ ...c })),
        ...(this.inits.length > 0 ? { initContainers: this.inits.map((c) => ({ ...c })) } : {}),
        ...(this.ephemerals.length > 0 ? { ephemeralContainers: this.ephemerals.map((c) => ({ ...c })) } : {}),
        ...(this.restart !== undefined ? { restartPolicy: this.restart } : {}),
        ...(this.graceSeconds !== undefined ? { terminationGracePeriodSeconds: this.graceSeconds } : {}),
        ...(this.share ? { shareProcessNamespace: true } : {}),
        ...(this.hostPid ? { hostPID: true } : {}),
      },
      status: { phase: this.podPhase, containerStatuses: statuses, conditions: [...this.conditions] },
    };
  }
}

export const pod = (name?: string): PodBuilder => new PodBuilder(name);

/**
 * A conditions status patch applied as the API server merges it: each condition replaces the one
 * of its type in place, or is appended. Returns a copy of `stored` with the patch applied.
 */
export function withConditionsPatch(stored: V1Pod, conditions: readonly V1PodCondition[]): V1Pod {
  const next = structuredClone(stored);
  const merged = next.status!.conditions ?? [];
  for (const c of conditions) {
    const i = merged.findIndex((x) => x.type === c.type);
    if (i >= 0) merged[i] = c;
    else merged.push(c);
  }
  next.status!.conditions = merged;
  return next;
}
