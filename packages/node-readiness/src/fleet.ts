/**
 * What the node and rule reconcilers share: the rule set in force, per-rule counts over the node
 * cache, each rule's addition token bucket, and the cluster-wide one every addition also takes from.
 *
 * Guarantees: the rule set is recomputed only when a rule's resourceVersion changes; counts are at
 * most `maxAgeMs` old when asked for; the circuit breaker counts afresh before every addition it
 * allows (additions are rare and rate limited, so the scan is paid rarely); the periodic count
 * for rule status (`countInSlices`) never holds the event loop for more than one slice of nodes,
 * and callers asking while one runs share it.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { KubeObject } from '@podlife/core';
import type { EvaluateOptions } from './evaluate.js';
import { ClusterGuardrailDefaults, TokenBucket, circuitBreaker } from './guardrails.js';
import type { BreakerVerdict, ClusterGuardrails } from './guardrails.js';
import type { NodeReadinessRule, ResolvedRule } from './rule.js';
import { resolveRules } from './ruleset.js';
import type { RuleSet } from './ruleset.js';
import { SummaryCounter, summarizeRules } from './summary.js';
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

/** The rule set, counts and token buckets the node and rule reconcilers share. */
export class Fleet {
  private ruleSetKey = '';
  private cachedSet: RuleSet | undefined;
  private summaryAt = -Infinity;
  private cachedSummaries = new Map<string, RuleSummary>();
  private counting: Promise<Map<string, RuleSummary>> | undefined;
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly openSince = new Map<string, { at: number; verdict: BreakerVerdict }>();
  /** Every addition, whatever its rule, takes a token here too. */
  readonly clusterBucket: TokenBucket;
  private readonly clusterMaxPercent: number;

  constructor(
    readonly nodes: CacheView<V1Node>,
    readonly rules: CacheView<NodeReadinessRule>,
    readonly evaluateOptions: EvaluateOptions = {},
    private readonly now: () => number = Date.now,
    guardrails: ClusterGuardrails = {},
  ) {
    this.clusterBucket = new TokenBucket(
      guardrails.additionsPerMinute ?? ClusterGuardrailDefaults.additionsPerMinute,
      guardrails.additionBurst ?? ClusterGuardrailDefaults.additionBurst,
      now,
    );
    this.clusterMaxPercent = guardrails.maxTaintedPercent ?? ClusterGuardrailDefaults.maxTaintedPercent;
  }

  synced(): boolean {
    return this.nodes.hasSynced() && this.rules.hasSynced() && (this.evaluateOptions.pods?.synced?.() ?? true);
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
   * Counts at most `maxAgeMs` old, counted `sliceSize` nodes per turn of the event loop: a
   * fleet-wide count at 5,000 nodes takes a few hundred milliseconds of CPU, which in one piece
   * would stall every watch event and node reconcile behind it.
   */
  async countInSlices(maxAgeMs: number, sliceSize = 250): Promise<Map<string, RuleSummary>> {
    if (this.now() - this.summaryAt <= maxAgeMs) return this.cachedSummaries;
    if (!this.counting) {
      const counting = this.count(sliceSize);
      this.counting = counting;
      // Cleared only after assignment: a count with nothing to slice settles before it returns.
      void counting.finally(() => {
        if (this.counting === counting) this.counting = undefined;
      }).catch(() => undefined);
    }
    return this.counting;
  }

  private async count(sliceSize: number): Promise<Map<string, RuleSummary>> {
    const now = this.now();
    const counter = new SummaryCounter(this.ruleSet(), now, this.evaluateOptions);
    const nodes = this.nodes.list();
    for (let i = 0; i < nodes.length; i += sliceSize) {
      if (i > 0) await new Promise((resolve) => setImmediate(resolve));
      for (let j = i; j < Math.min(i + sliceSize, nodes.length); j++) counter.add(nodes[j] as V1Node);
    }
    this.cachedSummaries = counter.counts;
    this.summaryAt = now;
    return counter.counts;
  }

  /**
   * The breaker verdict from fresh counts (or from `counts` just taken by the caller). An open
   * verdict is trusted for `openHoldMs`, so a fleet-wide failure (thousands of refused
   * additions) does not rescan the fleet per node.
   */
  breaker(rule: ResolvedRule, openHoldMs = 1000, counts?: Map<string, RuleSummary>): BreakerVerdict {
    const held = this.openSince.get(rule.name);
    if (held && this.now() - held.at < openHoldMs) return held.verdict;
    const verdict = circuitBreaker(rule, (counts ?? this.summaries(0)).get(rule.name), this.nodes.list().length, this.clusterMaxPercent);
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
