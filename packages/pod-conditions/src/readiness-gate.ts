/**
 * ReadinessGate: the building block of a readiness-gate controller.
 *
 * Declare the gate's condition type and a function that computes it; the gate keeps that
 * condition on every pod listing the type in `spec.readinessGates` (the kubelet then holds `Ready`
 * False until it is True). Runs on the core runtime: the manager's shared pods informer, a work
 * queue with per-key backoff, and setPodConditions for the writes.
 *
 *     const manager = new Manager({ client });
 *     new ReadinessGate({ conditionType: 'example.com/warm', evaluate: (pod) => isWarm(pod) }).register(manager);
 *     await manager.start();
 *
 * Guarantees: the condition type is checked at construction — a qualified name with a domain
 * prefix (`example.com/warm`), never a built-in type (`Ready`, ...) nor one podlife writes
 * (`podlife.dev/...`): a gate writing those would fight the kubelet or podlife; `register` adds
 * the gate's controller to the manager (once: a second add is refused, docs/adr/0192), and refuses
 * a second gate that would write the same condition type under another name.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { qualifiedNameProblem, type Controller, type Manager } from '@podlife/core';
import { PodConditionType, readinessGateTypes } from './model.js';
import { podConditionsController, syncPodConditions } from './pod-controller.js';
import type { Computed, PodConditionsSpec } from './pod-controller.js';
import type { PodStatusClient } from './set-condition.js';
import type { TriState } from './sandbox.js';

/** What `evaluate` returns: a boolean, a status, or a status with reason, message and a re-check time. */
export type GateVerdict =
  | boolean
  | TriState
  | { status: TriState | boolean; reason?: string; message?: string; requeueAfterMs?: number };

/** The condition type of a gate and the function that computes it. */
export interface ReadinessGateOptions {
  /** The condition type pods list in `spec.readinessGates`, e.g. `example.com/lb-registered`. */
  conditionType: string;
  evaluate(pod: V1Pod, signal: AbortSignal): GateVerdict | Promise<GateVerdict>;
  /** Watch one namespace only; default all. */
  namespace?: string;
  /** Pods evaluated at once; default 4. */
  concurrency?: number;
  /** Evaluate each gated pod again this often even without pod changes (outside state); default never. */
  resyncMs?: number;
  /** Controller name in logs and metrics; default `readiness-gate/<conditionType>`. */
  name?: string;
  now?: () => number;
}

/** Keeps one readiness-gate condition on every pod that lists it (see above). */
export class ReadinessGate {
  readonly conditionType: string;
  private readonly spec: PodConditionsSpec;

  constructor(opts: ReadinessGateOptions) {
    const problem = readinessGateTypeProblem(opts?.conditionType);
    if (problem) throw new TypeError(`ReadinessGate: conditionType ${JSON.stringify(opts?.conditionType)} ${problem}`);
    if (typeof opts.evaluate !== 'function') throw new TypeError('ReadinessGate: evaluate must be a function (pod, signal) => verdict');
    this.conditionType = opts.conditionType;
    const type = opts.conditionType;
    this.spec = {
      name: opts.name ?? `readiness-gate/${type}`,
      select: (pod) => readinessGateTypes(pod).includes(type),
      compute: async (pod, signal): Promise<Computed> => {
        const v = normalize(await opts.evaluate(pod, signal));
        const condition = { type, status: v.status, ...(v.reason ? { reason: v.reason } : {}), ...(v.message ? { message: v.message } : {}) };
        const again = v.requeueAfterMs ?? opts.resyncMs;
        return { conditions: [condition], ...(again !== undefined ? { requeueAfterMs: again } : {}) };
      },
      ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    };
  }

  /** Whether this gate applies to the pod. */
  gates(pod: V1Pod): boolean {
    return this.spec.select(pod);
  }

  /**
   * Adds the gate's controller to a manager; it runs when the manager starts. Throws when another
   * gate on the manager already keeps this condition type under another name: the two would
   * overwrite each other's condition on every pod.
   */
  register(manager: Manager): Controller {
    let kept = gatesByManager.get(manager);
    const other = kept?.get(this.conditionType);
    if (other !== undefined && other !== this.spec.name) {
      throw new Error(
        `ReadinessGate ${this.spec.name}: condition type ${this.conditionType} is already kept by ReadinessGate ${other} on this manager; two gates writing one condition overwrite each other, so compute it in one gate`,
      );
    }
    const controller = podConditionsController(manager, this.spec);
    if (!kept) gatesByManager.set(manager, (kept = new Map()));
    kept.set(this.conditionType, this.spec.name);
    return controller;
  }

  /** Evaluates one pod and writes its condition (what a reconcile does); undefined when the pod is not gated. */
  async sync(client: PodStatusClient, pod: V1Pod, signal: AbortSignal = new AbortController().signal): Promise<Computed | undefined> {
    return syncPodConditions(client, this.spec, pod, signal);
  }
}

/** The condition types the gates registered on each manager keep, and the name of the gate keeping each. */
const gatesByManager = new WeakMap<Manager, Map<string, string>>();

const BUILT_IN: ReadonlySet<string> = new Set(Object.values(PodConditionType));
const PODLIFE_DOMAIN = /(^|\.)podlife\.dev$/;

/**
 * Why `type` cannot be a readiness gate's condition type, or undefined when it can: it must be
 * a qualified name with a domain prefix, and not a type Kubernetes or podlife itself writes.
 */
export function readinessGateTypeProblem(type: unknown): string | undefined {
  if (typeof type !== 'string' || type.length === 0) return 'must be a non-empty string such as "example.com/warmed-up"';
  if (BUILT_IN.has(type)) return 'is a built-in pod condition the kubelet or the control plane writes: use a type of your own domain, such as "example.com/warmed-up"';
  const problem = qualifiedNameProblem(type);
  if (problem) return `is not a qualified name: ${problem}`;
  const slash = type.indexOf('/');
  if (slash < 0) return 'has no domain prefix: name it in a domain you own, such as "example.com/' + type + '"';
  if (PODLIFE_DOMAIN.test(type.slice(0, slash))) return 'is in the podlife.dev domain, whose conditions podlife itself writes';
  return undefined;
}

function normalize(v: GateVerdict): { status: TriState; reason?: string; message?: string; requeueAfterMs?: number } {
  if (typeof v === 'boolean') return { status: v ? 'True' : 'False' };
  if (typeof v === 'string') return { status: v };
  const status = typeof v.status === 'boolean' ? (v.status ? 'True' : 'False') : v.status;
  return { ...v, status };
}
