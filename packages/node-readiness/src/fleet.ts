/**
 * What the node and rule reconcilers share: the rule set in force, per-rule counts over the node
 * cache, and each rule's addition token bucket.
 *
 * Guarantees: the rule set is recomputed only when a rule's resourceVersion changes; counts are at
 * most `maxAgeMs` old when asked for; the circuit breaker counts afresh before every addition it
 * allows (additions are rare and rate limited, so the scan is paid rarely).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeObject } from '@podlife/core';
import type { EvaluateOptions } from './evaluate.js';
import { TokenBucket, circuitBreaker } from './guardrails.js';
import type { BreakerVerdict } from './guardrails.js';
import type { NodeReadinessRule, ResolvedRule } from './rule.js';
import { resolveRules } from './ruleset.js';
import type { RuleSet } from './ruleset.js';
import { summarizeRules } from './summary.js';
import type { RuleSummary } from './summary.js';

/** A read-only view of an informer's cache. core's Informer (`informer.store` + `hasSynced`) fits. */
export interface CacheView<T extends KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  hasSynced(): boolean;
}

/** Adapts an informer (`store` + `hasSynced()`) to a CacheView. */
export function cacheView<T extends KubeObject>(informer: { store: { get(key: string): T | undefined; list(): T[] }; hasSynced(): boolean }): CacheView<T> {
  return { get: (k) => informer.store.get(k), list: () => informer.store.list(), hasSynced: () => informer.hasSynced() };
}

export class Fleet {
  private ruleSetKey = '';
  private cachedSet: RuleSet | undefined;
  private summaryAt = -Infinity;
  private cachedSummaries = new Map<string, RuleSummary>();
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly openSince = new Map<string, { at: number; verdict: BreakerVerdict }>();

  constructor(
    readonly nodes: CacheView<V1Node>,
    readonly rules: CacheView<NodeReadinessRule>,
    readonly evaluateOptions: EvaluateOptions = {},
    private readonly now: () => number = Date.now,
  ) {}

  synced(): boolean {
    return this.nodes.hasSynced() && this.rules.hasSynced();
  }

  ruleSet(): RuleSet {
    const rules = this.rules.list();
    const key = rules.map((r) => `${r.metadata?.name}@${r.metadata?.resourceVersion}`).sort().join(',');
    if (!this.cachedSet || key !== this.ruleSetKey) {
      this.cachedSet = resolveRules(rules);
      this.ruleSetKey = key;
    }
    return this.cachedSet;
  }

  summaries(maxAgeMs: number): Map<string, RuleSummary> {
    const now = this.now();
    if (now - this.summaryAt > maxAgeMs) {
      this.cachedSummaries = summarizeRules(this.nodes.list(), this.ruleSet(), now, this.evaluateOptions);
      this.summaryAt = now;
    }
    return this.cachedSummaries;
  }

  /**
   * The breaker verdict from fresh counts. An open verdict is trusted for `openHoldMs`, so a
   * fleet-wide failure (thousands of refused additions) does not rescan the fleet per node.
   */
  breaker(rule: ResolvedRule, openHoldMs = 1000): BreakerVerdict {
    const held = this.openSince.get(rule.name);
    if (held && this.now() - held.at < openHoldMs) return held.verdict;
    const verdict = circuitBreaker(rule, this.summaries(0).get(rule.name));
    if (verdict.open) this.openSince.set(rule.name, { at: this.now(), verdict });
    else this.openSince.delete(rule.name);
    return verdict;
  }

  bucket(rule: ResolvedRule): TokenBucket {
    let b = this.buckets.get(rule.name);
    if (!b) this.buckets.set(rule.name, (b = new TokenBucket(rule.additionsPerMinute, rule.additionBurst, this.now)));
    else b.configure(rule.additionsPerMinute, rule.additionBurst);
    return b;
  }

  forget(ruleName: string): void {
    this.buckets.delete(ruleName);
    this.openSince.delete(ruleName);
  }
}
