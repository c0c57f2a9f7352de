/**
 * Which rules are in force: valid, not overlapping an older rule, not being deleted.
 *
 * Guarantees:
 * - at most one rule in force per taint key+effect on any node: of two rules whose selectors may
 *   select the same node, the older (then the alphabetically first) wins and the other is rejected
 *   with a reason naming the winner;
 * - rules that wait for each other in a circle (`after`) are rejected, naming the circle;
 * - the outcome depends only on the rules, never on their order in the input, so every
 *   reconcile (of any node, by any replica) reaches the same verdict.
 */
import { resolveRule } from './rule.js';
import type { NodeReadinessRule, ResolvedRule, RuleProblem } from './rule.js';
import { selectorsMayOverlap } from './selector.js';

/** Why a rule is not in force. */
export interface RuleRejection {
  reason: 'Invalid' | 'Overlapping';
  message: string;
  problems?: RuleProblem[];
  overlapsWith?: string;
}

/** The rules in force, those being deleted, and those rejected. */
export interface RuleSet {
  /** Accepted rules, oldest first. */
  active: ResolvedRule[];
  /** Valid rules with a deletionTimestamp: their taints are being cleaned up. */
  deleting: ResolvedRule[];
  rejected: Map<string, RuleRejection>;
  /** Names of every rule that exists, whatever its state: a taint owned by one of them is not an orphan. */
  known: Set<string>;
  /** Taint keys any existing rule names (valid or not): zero-config mode keeps its hands off them. */
  claimedKeys: Set<string>;
}

function byAge(a: ResolvedRule, b: ResolvedRule): number {
  return a.createdMs - b.createdMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** Rules that wait for each other in a circle (`after`) would hold their nodes for good: each is rejected, the circle named. */
function rejectCycles(rules: readonly ResolvedRule[], set: RuleSet): void {
  const byName = new Map(rules.map((r) => [r.name, r]));
  for (const start of rules) {
    const path: string[] = [];
    const walk = (name: string): boolean => {
      if (name === start.name && path.length > 0) return true;
      if (path.includes(name)) return false;
      path.push(name);
      const found = (byName.get(name)?.after ?? []).some(walk);
      if (!found) path.pop();
      return found;
    };
    if (walk(start.name)) {
      const circle = [...path, start.name].join(' -> ');
      set.rejected.set(start.name, { reason: 'Invalid', message: `spec.after: the rules wait for each other in a circle (${circle}), so none would ever release a node`, problems: [{ field: 'spec.after', message: `circle ${circle}` }] });
    }
  }
}

/** Which rules are in force, and why the others are not (see the guarantees above). */
export function resolveRules(rules: readonly NodeReadinessRule[]): RuleSet {
  const set: RuleSet = { active: [], deleting: [], rejected: new Map(), known: new Set(), claimedKeys: new Set() };
  const candidates: ResolvedRule[] = [];
  for (const raw of rules) {
    const name = raw.metadata?.name;
    if (name) set.known.add(name);
    const key = raw.spec?.taint?.key;
    if (typeof key === 'string') set.claimedKeys.add(key);
    const r = resolveRule(raw);
    if (r.problems) {
      if (name) {
        const message = r.problems.map((p) => `${p.field}: ${p.message}`).join('; ');
        set.rejected.set(name, { reason: 'Invalid', message, problems: r.problems });
      }
      continue;
    }
    if (r.rule.deleting) set.deleting.push(r.rule);
    else candidates.push(r.rule);
  }
  rejectCycles(candidates, set);
  candidates.sort(byAge);
  set.deleting.sort(byAge);
  for (const rule of candidates) {
    const winner = set.active.find(
      (other) =>
        other.taint.key === rule.taint.key &&
        other.taint.effect === rule.taint.effect &&
        selectorsMayOverlap(other.selector, rule.selector),
    );
    if (set.rejected.has(rule.name)) continue;
    if (winner) {
      set.rejected.set(rule.name, {
        reason: 'Overlapping',
        overlapsWith: winner.name,
        message: `taint ${rule.taint.key}:${rule.taint.effect} is already managed by rule "${winner.name}" for nodes this selector may also select; make the selectors disjoint or use another taint key`,
      });
    } else {
      set.active.push(rule);
    }
  }
  return set;
}
