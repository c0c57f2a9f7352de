/**
 * The rule reconciler: keeps the cleanup finalizer on every rule, publishes counts and conditions
 * in the rule's status, raises Events when a rule is rejected, when its circuit breaker opens or
 * closes, and what a dry-run rule would do; releases a deleted rule once no node holds its taints.
 *
 * Guarantees:
 * - a rule's finalizer is removed only when no cached node records a taint owned by it; nodes
 *   found still owning one (wherever their labels now put them) are handed to the node reconciler;
 * - a dry-run rule never owns a taint, so deleting it removes nothing from any node;
 * - status carries counts only, and is written only when it changed.
 */
import { ContentType, isConflict, isNotFound, resourcePath, setCondition } from '@podlife/core';
import type { ConditionLike, EventRecorderLike, KubeClient, Logger, ReconcileResult } from '@podlife/core';
import { Reasons, emit } from './events.js';
import type { Fleet } from './fleet.js';
import type { NodeReadinessMetrics } from './metrics.js';
import { CleanupFinalizer, RuleGroup, RuleResource, RuleVersion } from './names.js';
import { isStaleWrite } from './node-reconciler.js';
import { readManagedTaints } from './ownership.js';
import type { NodeReadinessRule, NodeReadinessRuleStatus } from './rule.js';
import { emptySummary } from './summary.js';

export interface RuleReconcilerOptions {
  client: KubeClient;
  fleet: Fleet;
  events?: EventRecorderLike;
  metrics?: NodeReadinessMetrics;
  logger?: Logger;
  now?: () => number;
  /** Asks the node reconciler to look at a node again. */
  enqueueNode?: (name: string) => void;
  /** How often counts are refreshed while nothing else happens; default 10 s. */
  statusResyncMs?: number;
}

/** The rule status condition saying whether the rule is in force. */
export const AcceptedCondition = 'Accepted';
/** The rule status condition saying whether the rule's circuit breaker is open. */
export const CircuitBreakerCondition = 'CircuitBreakerOpen';
const gaugeStates = ['satisfied', 'failing', 'unknown', 'missing', 'completed'] as const;
const statusCountMaxAgeMs = 1_000;

/** The REST path of the NodeReadinessRule collection, or of one rule (and subresource). */
export function rulePath(name?: string, subresource?: string): string {
  return resourcePath({ group: RuleGroup, version: RuleVersion, resource: RuleResource, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) });
}

export class RuleReconciler {
  private readonly now: () => number;
  private readonly dryRunSeen = new Map<string, string>();

  constructor(private readonly opts: RuleReconcilerOptions) {
    this.now = opts.now ?? Date.now;
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const { fleet } = this.opts;
    if (!fleet.synced()) return { requeueAfterMs: 250 };
    const rule = fleet.rules.get(name);
    if (!rule) {
      this.forget(name);
      return {};
    }
    const finalizers = rule.metadata?.finalizers ?? [];
    if (rule.metadata?.deletionTimestamp) return this.cleanUp(rule, finalizers);
    try {
      if (!finalizers.includes(CleanupFinalizer)) await this.addFinalizer(rule, finalizers);
      await this.publishStatus(rule);
    } catch (err) {
      if (isNotFound(err)) return {};
      if (isConflict(err) || isStaleWrite(err)) return { requeueAfterMs: 200 };
      emit(this.opts.events, rule, 'Warning', Reasons.WriteFailed, `could not update rule "${name}": ${(err as Error).message}`, 'Update');
      this.opts.metrics?.failures.inc({ rule: name, reason: 'WriteFailed' });
      throw err;
    }
    return { requeueAfterMs: this.opts.statusResyncMs ?? 10_000 };
  }

  private async cleanUp(rule: NodeReadinessRule, finalizers: string[]): Promise<ReconcileResult> {
    const name = rule.metadata?.name ?? '';
    if (!finalizers.includes(CleanupFinalizer)) return {};
    const holding = this.opts.fleet.nodes.list().filter((n) => [...readManagedTaints(n).values()].includes(name));
    if (holding.length > 0) {
      for (const n of holding) this.opts.enqueueNode?.(n.metadata?.name ?? '');
      return { requeueAfterMs: 1_000 };
    }
    const rest = finalizers.filter((f) => f !== CleanupFinalizer);
    try {
      await this.opts.client.patch(
        rulePath(name),
        [
          { op: 'test', path: '/metadata/resourceVersion', value: rule.metadata?.resourceVersion },
          { op: 'replace', path: '/metadata/finalizers', value: rest },
        ],
        ContentType.JsonPatch,
      );
    } catch (err) {
      if (isNotFound(err)) return {};
      if (isConflict(err) || isStaleWrite(err)) return { requeueAfterMs: 200 };
      throw err;
    }
    this.opts.logger?.info({ rule: name }, 'rule deleted: no node holds its taints any more');
    this.forget(name);
    return {};
  }

  private async addFinalizer(rule: NodeReadinessRule, finalizers: string[]): Promise<void> {
    await this.opts.client.patch(
      rulePath(rule.metadata?.name),
      [
        { op: 'test', path: '/metadata/resourceVersion', value: rule.metadata?.resourceVersion },
        rule.metadata?.finalizers
          ? { op: 'replace', path: '/metadata/finalizers', value: [...finalizers, CleanupFinalizer] }
          : { op: 'add', path: '/metadata/finalizers', value: [CleanupFinalizer] },
      ],
      ContentType.JsonPatch,
    );
  }

  private async publishStatus(rule: NodeReadinessRule): Promise<void> {
    const { fleet, metrics, events } = this.opts;
    const name = rule.metadata?.name ?? '';
    const now = this.now();
    const set = fleet.ruleSet();
    // One count serves every rule reconciled within statusCountMaxAgeMs, and the breaker verdict too.
    const counts = await fleet.countInSlices(statusCountMaxAgeMs);
    const summary = counts.get(name) ?? emptySummary();
    const resolved = set.active.find((r) => r.name === name);
    const rejection = set.rejected.get(name);
    const breaker = resolved ? fleet.breaker(resolved, 0, counts) : undefined;

    let conditions: ConditionLike[] = rule.status?.conditions ?? [];
    const accepted = setCondition(
      conditions,
      rejection
        ? { type: AcceptedCondition, status: 'False', reason: rejection.reason, message: rejection.message }
        : { type: AcceptedCondition, status: 'True', reason: 'Accepted', message: resolved?.suspended ? 'suspended (spec.suspend): no taint is added or removed until it is unset' : resolved?.dryRun ? 'dry run: changes are reported, never written' : 'the rule is in force' },
      now,
    );
    conditions = accepted.conditions;
    const tripped = setCondition(
      conditions,
      breaker?.open
        ? { type: CircuitBreakerCondition, status: 'True', reason: 'TooManyNodesTainted', message: breaker.message }
        : { type: CircuitBreakerCondition, status: 'False', reason: 'WithinLimit', message: breaker?.message ?? 'the rule is not in force' },
      now,
    );
    conditions = tripped.conditions;

    const status: NodeReadinessRuleStatus = {
      observedGeneration: rule.metadata?.generation ?? 0,
      matchedNodes: summary.matched,
      satisfiedNodes: summary.states.satisfied,
      taintedNodes: summary.tainted,
      failingNodes: summary.states.failing,
      unknownNodes: summary.states.unknown,
      missingNodes: summary.states.missing,
      completedNodes: summary.states.completed,
      ...(resolved?.dryRun ? { wouldTaintNodes: summary.wouldTaint, wouldUntaintNodes: summary.wouldUntaint } : {}),
      conditions,
    };

    if (accepted.changed && rejection) {
      emit(events, rule, 'Warning', rejection.reason === 'Overlapping' ? Reasons.OverlappingRule : Reasons.InvalidRule, `rule rejected, it changes no node: ${rejection.message}`, 'Validate');
    }
    if (tripped.changed && breaker?.open) emit(events, rule, 'Warning', Reasons.CircuitBreakerOpen, breaker.message, 'Taint');
    if (tripped.changed && breaker && !breaker.open && rule.status?.conditions?.some((c) => c.type === CircuitBreakerCondition && c.status === 'True')) {
      emit(events, rule, 'Normal', Reasons.CircuitBreakerClosed, breaker.message, 'Taint');
    }
    if (resolved?.dryRun) {
      const note = `dry run: would taint ${summary.wouldTaint} and untaint ${summary.wouldUntaint} of ${summary.matched} selected nodes`;
      if (this.dryRunSeen.get(name) !== note) emit(events, rule, 'Normal', Reasons.DryRun, note, 'Evaluate');
      this.dryRunSeen.set(name, note);
    }

    for (const state of gaugeStates) metrics?.nodes.set({ rule: name, state }, summary.states[state]);
    metrics?.breakerOpen.set({ rule: name }, breaker?.open ? 1 : 0);

    if (JSON.stringify(stripTimes(rule.status)) === JSON.stringify(stripTimes(status)) && !accepted.changed && !tripped.changed) return;
    await this.opts.client.patch(rulePath(name, 'status'), { status }, ContentType.MergePatch);
  }

  private forget(name: string): void {
    this.dryRunSeen.delete(name);
    this.opts.fleet.forget(name);
    const { metrics } = this.opts;
    for (const state of gaugeStates) metrics?.nodes.remove({ rule: name, state });
    metrics?.breakerOpen.remove({ rule: name });
  }
}

/** Status without transition times, for a change check that survives round-tripping through the API. */
function stripTimes(status: NodeReadinessRuleStatus | undefined): unknown {
  if (!status) return undefined;
  const { conditions, ...counts } = status;
  const sorted = Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));
  return { ...sorted, conditions: (conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]) };
}
