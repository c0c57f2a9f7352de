/**
 * Guardrails against the cluster-wide outage a bad rule can cause by tainting every node.
 *
 * Guarantees:
 * - the circuit breaker opens when more than `maxTaintedPercent` of a rule's selected nodes carry
 *   or would be given its taint; while open, the rule adds no taint (removals go on);
 * - additions per rule go through a token bucket (`additionsPerMinute`, `additionBurst`), so even
 *   below the breaker threshold a rule cannot taint a large fleet in one burst;
 * - time is injected: both are testable without waiting.
 */
import type { ResolvedRule } from './rule.js';
import type { RuleSummary } from './summary.js';

export interface BreakerVerdict {
  open: boolean;
  percent: number;
  message: string;
}

export function circuitBreaker(rule: ResolvedRule, summary: RuleSummary | undefined): BreakerVerdict {
  const matched = summary?.matched ?? 0;
  const share = matched === 0 ? 0 : (100 * (summary?.wouldBeTainted ?? 0)) / matched;
  const percent = Math.round(share * 10) / 10;
  const open = rule.mode === 'continuous' && share > rule.maxTaintedPercent;
  const message = open
    ? `${summary?.wouldBeTainted}/${matched} selected nodes (${percent}%) carry or would get taint ${rule.taint.key}, above maxTaintedPercent ${rule.maxTaintedPercent}%: no taint is added until fewer nodes fail`
    : `${summary?.wouldBeTainted ?? 0}/${matched} selected nodes (${percent}%) carry or would get the taint; limit ${rule.maxTaintedPercent}%`;
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
