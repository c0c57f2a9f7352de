/**
 * What `podlife explain node <name>` and `podlife nodes` show: which readiness gates hold a node
 * and why, in words that name the condition, its state and what it needs.
 *
 * Guarantees: pure (the CLI fetches the node and rules, passes the clock); rules that are not in
 * force (invalid, overlapping) are listed with the reason, since they explain why a taint stays.
 */
import type { V1Node } from '@kubernetes/client-node';
import { evaluateNode } from './evaluate.js';
import type { EvaluateOptions, GateEvaluation, TaintChange } from './evaluate.js';
import type { NodeReadinessRule } from './rule.js';
import { resolveRules } from './ruleset.js';
import type { RuleRejection } from './ruleset.js';

/** What `podlife explain node` shows, as data. */
export interface NodeExplanation {
  node: string;
  /** Gates whose taint is on the node and stays. */
  holding: GateEvaluation[];
  /** Every gate that looked at the node, holding or not. */
  gates: GateEvaluation[];
  /** What the controller would write next (after guardrails allow it). */
  pending: TaintChange[];
  dryRun: TaintChange[];
  /** Rules not in force, by name. */
  rejected: Map<string, RuleRejection>;
  /** readiness.k8s.io/ taints on the node no gate accounts for (zero-config off, or a rule not in force). */
  unexplainedTaints: string[];
}

/** Which gates hold `node` and why, in words (see above). */
export function explainNode(node: V1Node, rules: readonly NodeReadinessRule[], nowMs: number, options: EvaluateOptions = {}): NodeExplanation {
  const set = resolveRules(rules);
  const d = evaluateNode(node, set, nowMs, options);
  const accounted = new Set(d.gates.filter((g) => g.tainted).map((g) => `${g.taint.key}:${g.taint.effect}`));
  const unexplainedTaints = (node.spec?.taints ?? [])
    .filter((t) => t.key.startsWith('readiness.k8s.io/') && !accounted.has(`${t.key}:${t.effect}`))
    .map((t) => `${t.key}:${t.effect}`);
  return {
    node: d.node,
    holding: d.gates.filter((g) => g.holding),
    gates: d.gates.filter((g) => g.selected || g.tainted),
    pending: d.changes,
    dryRun: d.dryRun,
    rejected: set.rejected,
    unexplainedTaints,
  };
}

function gateName(g: GateEvaluation): string {
  return g.source === 'zero-config' ? `zero-config ${g.gate}` : `rule ${g.gate}${g.dryRun ? ' (dry run)' : ''}`;
}

/** Multi-line text for `podlife explain node <name>`. */
export function renderNodeExplanation(e: NodeExplanation): string {
  const lines: string[] = [];
  lines.push(`Node ${e.node}: ${e.holding.length === 0 ? 'no readiness gate holds it' : `held by ${e.holding.length} readiness gate(s)`}`);
  for (const g of e.gates) {
    lines.push(`  ${g.holding ? 'HOLDING ' : 'open    '} ${gateName(g)}  taint ${g.taint.key}:${g.taint.effect}  [${g.mode}, ${g.state}]`);
    lines.push(`           ${g.message}`);
  }
  for (const c of e.pending) lines.push(`  next write: ${c.op} ${c.taint.key}:${c.taint.effect} (${c.reason})`);
  for (const c of e.dryRun) lines.push(`  dry run would: ${c.op} ${c.taint.key}:${c.taint.effect} for rule ${c.gate}`);
  for (const t of e.unexplainedTaints) lines.push(`  taint ${t} is not managed by any rule in force (zero-config off, or its rule is rejected)`);
  for (const [name, r] of e.rejected) lines.push(`  rule ${name} is not in force (${r.reason}): ${r.message}`);
  return lines.join('\n');
}

/** One row per node for `podlife nodes`: NAME, HELD BY, TAINTS. */
export function renderNodesTable(nodes: readonly V1Node[], rules: readonly NodeReadinessRule[], nowMs: number, options: EvaluateOptions = {}): string {
  const set = resolveRules(rules);
  const rows = [['NAME', 'HELD BY', 'READINESS TAINTS']];
  for (const node of [...nodes].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1))) {
    const d = evaluateNode(node, set, nowMs, options);
    const held = d.gates.filter((g) => g.holding).map((g) => `${g.gate} (${g.state})`);
    const taints = (node.spec?.taints ?? []).filter((t) => t.key.startsWith('readiness.k8s.io/')).map((t) => `${t.key}:${t.effect}`);
    rows.push([node.metadata?.name ?? '', held.join(', ') || '-', taints.join(', ') || '-']);
  }
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 2))).join('')).join('\n');
}
