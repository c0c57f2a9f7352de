/**
 * Guardrails against the cluster-wide outage a bad rule can cause by tainting every node.
 *
 * Guarantees:
 * - the circuit breaker opens when more than `maxTaintedPercent` of a rule's selected nodes carry
 *   or would be given its taint; while open, the rule adds no taint (removals go on);
 * - a rule whose selector in fact selects every node of a cluster of more than one node is the
 *   select-all rule the CRD refuses in its obvious forms: its limit is then at most the cluster's
 *   `maxTaintedPercent` (default 50), whatever the rule says, so no rule taints a whole cluster;
 * - additions per rule go through a token bucket (`additionsPerMinute`, `additionBurst`), so even
 *   below the breaker threshold a rule cannot taint a large fleet in one burst; every addition,
 *   whatever its rule, also takes a token from one cluster-wide bucket (`ClusterGuardrails`), so
 *   many rules together cannot either;
 * - time is injected: both are testable without waiting.
 */
import type { ResolvedRule } from './rule.js';
import type { RuleSummary } from './summary.js';

/** Whether a rule may add taints now, with the counts that decided it. */
export interface BreakerVerdict {
  open: boolean;
  percent: number;
  message: string;
}

/** Limits on taint additions by every rule together: the controller's to set, never a rule's. */
export interface ClusterGuardrails {
  /** Token-bucket refill rate for additions by all rules together; default 120 per minute. */
  additionsPerMinute?: number;
  /** Token-bucket size; default 20. */
  additionBurst?: number;
  /** The most a rule that selects every node of the cluster may taint, in percent of it; default 50. */
  maxTaintedPercent?: number;
}

/** Twice the per-rule rate limit's defaults (60 per minute, burst 10); the breaker's default share. */
export const ClusterGuardrailDefaults = { additionsPerMinute: 120, additionBurst: 20, maxTaintedPercent: 50 };

/** The integers each cluster guardrail accepts, bounds included: what a configuration file checks too. */
export const ClusterGuardrailBounds: Readonly<Record<keyof ClusterGuardrails, { min: number; max: number }>> = {
  additionsPerMinute: { min: 1, max: 600_000 },
  additionBurst: { min: 1, max: 100_000 },
  maxTaintedPercent: { min: 0, max: 100 },
};

/** What is wrong with `g`, naming the option, or undefined when it is valid. */
export function clusterGuardrailsProblem(g: ClusterGuardrails, prefix = 'clusterGuardrails'): string | undefined {
  const check = (name: keyof ClusterGuardrails): string | undefined => {
    const value = g[name];
    const { min, max } = ClusterGuardrailBounds[name];
    return value === undefined || (Number.isInteger(value) && value >= min && value <= max) ? undefined : `${prefix}.${name} must be an integer between ${min} and ${max}, got ${String(value)}`;
  };
  return check('additionsPerMinute') ?? check('additionBurst') ?? check('maxTaintedPercent');
}

/**
 * The breaker verdict for `rule` from its counts. `clusterNodes` (the nodes in the cluster) lets
 * it see a selector that takes every node; `clusterMaxPercent` is then the rule's ceiling.
 */
export function circuitBreaker(
  rule: ResolvedRule,
  summary: RuleSummary | undefined,
  clusterNodes?: number,
  clusterMaxPercent = ClusterGuardrailDefaults.maxTaintedPercent,
): BreakerVerdict {
  const matched = summary?.matched ?? 0;
  const share = matched === 0 ? 0 : (100 * (summary?.wouldBeTainted ?? 0)) / matched;
  const percent = Math.round(share * 10) / 10;
  const everyNode = clusterNodes !== undefined && clusterNodes > 1 && matched === clusterNodes;
  const limit = everyNode ? Math.min(rule.maxTaintedPercent, clusterMaxPercent) : rule.maxTaintedPercent;
  const why = everyNode && limit < rule.maxTaintedPercent ? `the cluster's limit ${limit}% (the selector takes every node of the cluster)` : `maxTaintedPercent ${limit}%`;
  const open = rule.mode === 'continuous' && share > limit;
  const message = open
    ? `${summary?.wouldBeTainted}/${matched} selected nodes (${percent}%) carry or would get taint ${rule.taint.key}, above ${why}: no taint is added until fewer nodes fail`
    : `${summary?.wouldBeTainted ?? 0}/${matched} selected nodes (${percent}%) carry or would get the taint; limit ${limit}%${everyNode && limit < rule.maxTaintedPercent ? ' (the selector takes every node of the cluster)' : ''}`;
  return { open, percent, message };
}

/** A token bucket: `take()` succeeds while tokens last; they refill continuously at `perMinute`. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private perMinute: number,
    private burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Follows a rule's edited limits without resetting what has been spent. */
  configure(perMinute: number, burst: number): void {
    this.refill();
    this.perMinute = perMinute;
    this.burst = burst;
    this.tokens = Math.min(this.tokens, burst);
  }

  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until the next token. */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 60_000) / this.perMinute);
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.perMinute) / 60_000);
    this.last = t;
  }
}
