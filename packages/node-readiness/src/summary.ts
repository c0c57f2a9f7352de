/**
 * Per-rule counts over every node in the cache: what rule status, the nodes-by-state metric and
 * the circuit breaker read.
 *
 * Guarantees: pure; counts only (no per-node lists, which do not scale to thousands of nodes);
 * zero-config gates are counted together under the name `zero-config`.
 */
import type { V1Node } from '@kubernetes/client-node';
import { evaluateNode } from './evaluate.js';
import type { EvaluateOptions, GateState } from './evaluate.js';
import { ZeroConfigSource } from './names.js';
import type { RuleSet } from './ruleset.js';

export interface RuleSummary {
  /** Nodes the rule's selector selects. */
  matched: number;
  /** Selected nodes by gate state. */
  states: Record<Exclude<GateState, 'not-selected'>, number>;
  /** Selected nodes the rule's taint holds now. */
  tainted: number;
  /** Selected nodes that carry, or are about to be given, the taint: what the circuit breaker weighs. */
  wouldBeTainted: number;
  /** Dry run: nodes the rule would taint / untaint if enforced. */
  wouldTaint: number;
  wouldUntaint: number;
}

export function emptySummary(): RuleSummary {
  return {
    matched: 0,
    states: { satisfied: 0, failing: 0, unknown: 0, missing: 0, completed: 0, foreign: 0 },
    tainted: 0,
    wouldBeTainted: 0,
    wouldTaint: 0,
    wouldUntaint: 0,
  };
}

export function summarizeRules(
  nodes: Iterable<V1Node>,
  set: RuleSet,
  nowMs: number,
  options: EvaluateOptions = {},
): Map<string, RuleSummary> {
  const counter = new SummaryCounter(set, nowMs, options);
  for (const node of nodes) counter.add(node);
  return counter.counts;
}

/** Counts one node at a time, so a caller can spread a fleet-wide count over several turns. */
export class SummaryCounter {
  readonly counts = new Map<string, RuleSummary>();

  constructor(
    private readonly set: RuleSet,
    private readonly nowMs: number,
    private readonly options: EvaluateOptions = {},
  ) {
    for (const r of set.active) this.counts.set(r.name, emptySummary());
  }

  add(node: V1Node): void {
    const d = evaluateNode(node, this.set, this.nowMs, this.options);
    for (const g of d.gates) {
      if (!g.selected) continue;
      const s = this.at(g.source === 'zero-config' ? ZeroConfigSource : g.gate);
      s.matched++;
      if (g.state !== 'not-selected') s.states[g.state]++;
      if (g.tainted && g.state !== 'completed' && g.state !== 'foreign') s.tainted++;
      if ((g.tainted && !g.satisfied) || (!g.tainted && g.mode === 'continuous' && g.failing)) s.wouldBeTainted++;
    }
    for (const c of d.dryRun) {
      const s = this.at(c.gate);
      if (c.op === 'add') s.wouldTaint++;
      if (c.op === 'remove') s.wouldUntaint++;
    }
  }

  private at(name: string): RuleSummary {
    let s = this.counts.get(name);
    if (!s) this.counts.set(name, (s = emptySummary()));
    return s;
  }
}
