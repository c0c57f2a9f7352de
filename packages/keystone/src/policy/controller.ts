/**
 * Lifecycle policies in a controller process (ADR 0269): the caches the webhook applies policies
 * from, and a controller that keeps each policy's status.
 *
 * Guarantees:
 * - the webhook's view (`source`) serves on every replica from the informers alone, recomputed
 *   only when a policy or a namespace changes; it holds exactly the policies `judgePolicies`
 *   finds in force, so status and admission never disagree;
 * - the status controller (leader only) writes counts and the `Accepted` and `Overlapping`
 *   conditions, only when they changed; a policy that stops being accepted gets a Warning Event
 *   `InvalidLifecyclePolicy`, one that starts overlapping another `LifecyclePoliciesOverlap`
 *   naming both; it never writes a policy's spec.
 */
import type { V1Namespace } from '@kubernetes/client-node';
import { ContentType, Controller, setCondition, type ConditionLike, type KubeObject, type Logger, type Manager, type ReconcileResult } from '@podlife/core';
import type { LifecycleOptions } from '../annotations.js';
import type { PolicySource } from './mutator.js';
import { POLICY_PATH, PolicyGroup, PolicyKind, PolicyVersion } from './names.js';
import type { CompiledPolicy, LifecyclePolicy } from './policy.js';
import { judgePolicies, overlapMessage, policiesInForce, type NamespaceView, type PolicyJudgement } from './status.js';

/** The conditions of a policy's status. */
export const PolicyCondition = { Accepted: 'Accepted', Overlapping: 'Overlapping' } as const;
/** The reasons of the Warning Events posted on policies. */
export const PolicyEventReason = { Invalid: 'InvalidLifecyclePolicy', Overlap: 'LifecyclePoliciesOverlap' } as const;

/** The named commands policies may use, logging and the status resync. */
export interface LifecyclePolicyControllerOptions {
  /** The controller configuration's named commands (a policy's `exec:` stop must name one). */
  execCommands?: LifecycleOptions['execCommands'];
  logger?: Logger;
  /** Recount every this often even without changes; default 60 s. */
  resyncMs?: number;
}

/** What `lifecyclePolicyController` adds to a Manager: the webhook's source and the status controller. */
export interface LifecyclePolicies {
  /** What the webhook applies: the policies in force, in name order, and namespace labels. */
  readonly source: PolicySource;
  readonly controller: Controller;
}

/** Keeps a namespace's name and labels only. */
export function slimNamespace(ns: V1Namespace): V1Namespace {
  return { metadata: { name: ns.metadata?.name, uid: ns.metadata?.uid, resourceVersion: ns.metadata?.resourceVersion, ...(ns.metadata?.labels ? { labels: ns.metadata.labels } : {}) } };
}

interface PolicyStatus {
  observedGeneration?: number;
  matchedNamespaces: number;
  unlabelledNamespaces: number;
  conditions: ConditionLike[];
}

/** The policy informer, the namespace informer, the webhook's source and the status controller on `manager`. */
export function lifecyclePolicyController(manager: Manager, options: LifecyclePolicyControllerOptions = {}): LifecyclePolicies {
  const policyInformer = manager.informer<LifecyclePolicy & KubeObject>({ path: POLICY_PATH, name: 'lifecyclepolicies' });
  const namespaceInformer = manager.informer<V1Namespace>({ path: '/api/v1/namespaces', transform: slimNamespace, name: 'namespaces' });
  const lifecycle: LifecycleOptions = options.execCommands ? { execCommands: options.execCommands } : {};
  let judged: PolicyJudgement[] | undefined;
  let inForce: CompiledPolicy[] | undefined;
  const judge = (): PolicyJudgement[] =>
    (judged ??= judgePolicies(
      policyInformer.store.list(),
      namespaceInformer.store.list().map((ns): NamespaceView => ({ name: ns.metadata?.name ?? '', labels: ns.metadata?.labels ?? {} })),
      lifecycle,
    ));
  const source: PolicySource = {
    policies: () => (inForce ??= policiesInForce(judge())),
    namespaceLabels: (name) => namespaceInformer.store.get(name)?.metadata?.labels ?? (namespaceInformer.store.get(name) ? {} : undefined),
  };
  const reconciler = new PolicyStatusReconciler(manager, () => judge(), (name) => policyInformer.store.get(name), options.resyncMs ?? 60_000, options.logger);
  const controller = new Controller({ name: 'lifecycle-policies', reconciler, ...(options.logger ? { logger: options.logger } : {}) });
  const everyPolicy = (): void => {
    for (const key of policyInformer.store.keys()) controller.enqueue(key);
  };
  const stale = (): void => {
    judged = undefined;
    inForce = undefined;
  };
  for (const event of ['add', 'update', 'delete'] as const) {
    policyInformer.on(event, () => {
      stale();
      // Another policy's change can start or end an overlap: every policy is looked at again.
      everyPolicy();
    });
    namespaceInformer.on(event, () => {
      stale();
      everyPolicy();
    });
  }
  controller.watch(policyInformer, () => []).watch(namespaceInformer, () => []);
  manager.add(controller);
  return { source, controller };
}

class PolicyStatusReconciler {
  constructor(
    private readonly manager: Manager,
    private readonly judge: () => PolicyJudgement[],
    private readonly get: (name: string) => (LifecyclePolicy & KubeObject) | undefined,
    private readonly resyncMs: number,
    private readonly log: Logger | undefined,
  ) {}

  async reconcile(name: string): Promise<ReconcileResult> {
    const policy = this.get(name);
    const j = this.judge().find((x) => x.name === name);
    if (!policy || !j) return {};
    const now = Date.now();
    const old = (policy.status ?? {}) as Partial<PolicyStatus>;
    const accepted = setCondition(old.conditions, { type: PolicyCondition.Accepted, ...j.accepted }, now);
    const overlapping = setCondition(
      accepted.conditions,
      j.overlaps.length > 0
        ? { type: PolicyCondition.Overlapping, status: 'True', reason: 'SharesContainers', message: j.overlaps.map((o) => overlapMessage(name, o)).join('; ').slice(0, 2000) }
        : { type: PolicyCondition.Overlapping, status: 'False', reason: 'NoOverlap', message: 'no other policy matches the same containers in the same namespaces' },
      now,
    );
    const status: PolicyStatus = {
      ...(policy.metadata?.generation !== undefined ? { observedGeneration: policy.metadata.generation } : {}),
      matchedNamespaces: j.matchedNamespaces,
      unlabelledNamespaces: j.unlabelledNamespaces,
      conditions: overlapping.conditions,
    };
    const counts = old.matchedNamespaces === status.matchedNamespaces && old.unlabelledNamespaces === status.unlabelledNamespaces && old.observedGeneration === status.observedGeneration;
    if (!counts || accepted.changed || overlapping.changed) {
      await this.manager.client.patch(`${POLICY_PATH}/${encodeURIComponent(name)}/status`, { status }, ContentType.MergePatch);
      this.log?.debug({ policy: name, accepted: j.accepted.status, overlaps: j.overlaps.length }, 'lifecycle policy status written');
    }
    // Objects from a list carry no apiVersion and kind; the Event's reference needs both.
    const regarding = { ...policy, apiVersion: `${PolicyGroup}/${PolicyVersion}`, kind: PolicyKind } as KubeObject;
    if (accepted.changed && j.accepted.status === 'False') void this.manager.events.event(regarding, 'Warning', PolicyEventReason.Invalid, j.accepted.message.slice(0, 1000));
    if (overlapping.changed && j.overlaps.length > 0) {
      for (const o of j.overlaps) void this.manager.events.event(regarding, 'Warning', PolicyEventReason.Overlap, overlapMessage(name, o).slice(0, 1000));
    }
    return { requeueAfterMs: this.resyncMs };
  }
}
