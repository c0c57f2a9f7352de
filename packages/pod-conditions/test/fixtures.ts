/** Pod and Event fixtures as wire JSON (RFC 3339 strings), built by a small fluent builder. */
import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { PodEvent } from '../src/index.js';

export const T0 = Date.parse('2025-03-01T10:00:00Z');
/** Wire timestamp `s` seconds after T0. */
export const at = (s: number): string => new Date(T0 + s * 1000).toISOString().replace('.000Z', 'Z');
export const ms = (s: number): number => T0 + s * 1000;

type Wire<T> = T; // documents intent: objects hold strings where types say Date

export class PodBuilder {
  private readonly p: Wire<V1Pod>;

  constructor(name: string, namespace = 'default') {
    this.p = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, uid: `uid-${name}`, creationTimestamp: at(0) as unknown as Date },
      spec: { containers: [] },
      status: { phase: 'Pending', conditions: [] },
    };
  }

  private get spec() {
    return this.p.spec!;
  }
  private get status() {
    return this.p.status!;
  }

  container(name: string, opts: { image?: string; readinessProbe?: boolean } = {}): this {
    this.spec.containers.push({
      name,
      image: opts.image ?? `example.com/${name}:1`,
      ...(opts.readinessProbe ? { readinessProbe: { httpGet: { path: '/ready', port: 8080 } } } : {}),
    });
    (this.status.containerStatuses ??= []).push(blankStatus(name, opts.image ?? `example.com/${name}:1`));
    return this;
  }

  initContainer(name: string, opts: { sidecar?: boolean } = {}): this {
    (this.spec.initContainers ??= []).push({
      name,
      image: `example.com/${name}:1`,
      ...(opts.sidecar ? { restartPolicy: 'Always' } : {}),
    });
    (this.status.initContainerStatuses ??= []).push(blankStatus(name, `example.com/${name}:1`));
    return this;
  }

  node(name = 'node-a'): this {
    this.spec.nodeName = name;
    return this;
  }

  hostNetwork(): this {
    this.spec.hostNetwork = true;
    return this;
  }

  ips(...ips: string[]): this {
    this.status.podIP = ips[0];
    this.status.podIPs = ips.map((ip) => ({ ip }));
    return this;
  }

  condition(type: string, status: string, atSec: number, reason?: string, message?: string): this {
    const c: V1PodCondition = { type, status, lastTransitionTime: at(atSec) as unknown as Date };
    if (reason !== undefined) c.reason = reason;
    if (message !== undefined) c.message = message;
    const list = this.status.conditions!;
    const i = list.findIndex((x) => x.type === type);
    if (i >= 0) list[i] = c;
    else list.push(c);
    return this;
  }

  /** Scheduled on `node` at `atSec`. */
  scheduled(atSec: number, node = 'node-a'): this {
    return this.node(node).condition('PodScheduled', 'True', atSec);
  }

  gate(type: string): this {
    (this.spec.readinessGates ??= []).push({ conditionType: type });
    return this;
  }

  phase(phase: string): this {
    this.status.phase = phase;
    return this;
  }

  private cs(name: string): V1ContainerStatus {
    const s = [...(this.status.initContainerStatuses ?? []), ...(this.status.containerStatuses ?? [])].find((c) => c.name === name);
    if (!s) throw new Error(`fixture: no container ${name}`);
    return s;
  }

  running(name: string, startedSec: number, ready = false): this {
    const s = this.cs(name);
    s.state = { running: { startedAt: at(startedSec) as unknown as Date } };
    s.started = true;
    s.ready = ready;
    return this;
  }

  waiting(name: string, reason: string, message?: string): this {
    const s = this.cs(name);
    s.state = { waiting: { reason, ...(message ? { message } : {}) } };
    return this;
  }

  terminated(name: string, exitCode: number, startedSec: number, finishedSec: number, reason?: string): this {
    const s = this.cs(name);
    s.state = {
      terminated: { exitCode, startedAt: at(startedSec) as unknown as Date, finishedAt: at(finishedSec) as unknown as Date, ...(reason ? { reason } : {}) },
    };
    s.started = false;
    return this;
  }

  lastTerminated(name: string, exitCode: number, reason = 'Error', restarts = 3): this {
    const s = this.cs(name);
    s.lastState = { terminated: { exitCode, reason, startedAt: at(5) as unknown as Date, finishedAt: at(6) as unknown as Date } };
    s.restartCount = restarts;
    return this;
  }

  deleting(atSec: number): this {
    this.p.metadata!.deletionTimestamp = at(atSec) as unknown as Date;
    this.p.metadata!.deletionGracePeriodSeconds = 30;
    return this;
  }

  build(): V1Pod {
    return structuredClone(this.p);
  }
}

function blankStatus(name: string, image: string): V1ContainerStatus {
  return { name, image, imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } };
}

export const pod = (name = 'web', namespace = 'default'): PodBuilder => new PodBuilder(name, namespace);

/** A pod on a 1.29+ cluster that started normally: created 0, scheduled 1, sandbox 3, ready 6. */
export function startedPod(): PodBuilder {
  return pod()
    .container('app', { readinessProbe: true })
    .scheduled(1)
    .ips('10.1.0.7')
    .condition('Initialized', 'True', 1)
    .condition('PodReadyToStartContainers', 'True', 3)
    .running('app', 4, true)
    .condition('ContainersReady', 'True', 6)
    .condition('Ready', 'True', 6)
    .phase('Running');
}

export function event(
  reason: string,
  message: string,
  atSec: number,
  opts: { type?: 'Normal' | 'Warning'; container?: string; uid?: string; firstSec?: number } = {},
): PodEvent {
  return {
    type: opts.type ?? 'Warning',
    reason,
    message,
    firstTimestamp: at(opts.firstSec ?? atSec),
    lastTimestamp: at(atSec),
    involvedObject: {
      uid: opts.uid ?? 'uid-web',
      ...(opts.container ? { fieldPath: `spec.containers{${opts.container}}` } : {}),
    },
  };
}
