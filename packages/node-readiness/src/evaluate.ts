/**
 * evaluateNode: what every readiness gate says about one node, and the taint changes that follow.
 *
 * Guarantees (pure: no I/O, time is `nowMs`):
 * - only taints a gate manages are ever in `changes`: a rule's own key+effect on nodes it selects
 *   or that the node's managed-taints annotation says it owns, and unclaimed `readiness.k8s.io/`
 *   taints in zero-config mode — any other taint is invisible here, and every taint added or
 *   removed is under `readiness.k8s.io/`, whatever the node's annotations claim;
 * - bootstrap-only never adds a taint; a passed gate (completion annotation) is never acted on again;
 * - continuous adds a taint only after an explicit failing status has lasted `debounce`, measured
 *   from the condition's lastTransitionTime, so a flapping condition restarts the clock;
 * - a taint already on the node is adopted (ownership recorded), never added a second time;
 * - dry-run rules put their would-be changes in `dryRun`, never in `changes`;
 * - a taint owned by a rule that is being deleted, no longer exists, or no longer selects the node
 *   is removed. That is only safe once the caller's rule cache is complete: do not call before
 *   the rule informer has synced.
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import { describeObservation, observeCondition } from './condition-state.js';
import type { ConditionObservation } from './condition-state.js';
import { ReadinessTaintPrefix } from './names.js';
import { readCompletions, readManagedTaints } from './ownership.js';
import { taintId } from './rule.js';
import type { ConditionMatch, EnforcementMode, NodeReadinessRule, ResolvedRule } from './rule.js';
import { resolveRules } from './ruleset.js';
import type { RuleSet } from './ruleset.js';
import { selectorMatches } from './selector.js';

export type GateSource = 'rule' | 'zero-config';
/** Per node and gate, for status counts and the nodes-by-state metric. */
export type GateState = 'satisfied' | 'failing' | 'unknown' | 'missing' | 'completed' | 'not-selected' | 'foreign';

export interface GateEvaluation {
  /** The rule name, or the taint key for a zero-config gate. */
  gate: string;
  source: GateSource;
  taint: V1Taint;
  mode: EnforcementMode;
  dryRun: boolean;
  selected: boolean;
  conditions: ConditionObservation[];
  satisfied: boolean;
  failing: boolean;
  state: GateState;
  /** The taint is on the node now. */
  tainted: boolean;
  /** The taint is (or, after `changes`, will be) on the node because of this gate. */
  holding: boolean;
  /** continuous: the taint returns at this time unless the condition recovers first. */
  addDueAtMs?: number;
  message: string;
}

export type TaintOp = 'add' | 'remove' | 'adopt' | 'release';

export interface TaintChange {
  /** add/remove change the taint list; adopt/release change only the ownership record. */
  op: TaintOp;
  taint: V1Taint;
  /** Rule name, or taint key for zero-config. */
  gate: string;
  source: GateSource | 'cleanup';
  /** Record the gate as passed in the completion annotation (same patch). */
  complete: boolean;
  /** When the conditions that released the taint became satisfied (removal latency). */
  satisfiedSinceMs?: number;
  reason: string;
}

export interface NodeDecision {
  node: string;
  gates: GateEvaluation[];
  changes: TaintChange[];
  /** What dry-run rules would do. */
  dryRun: TaintChange[];
  /** Evaluate again at this time even if nothing changes (a debounce expires). */
  nextEvaluationAtMs?: number;
}

export interface EvaluateOptions {
  /** Remove unclaimed `readiness.k8s.io/<Type>` taints once condition <Type> is True; default true. */
  zeroConfig?: boolean;
  /** Staleness bound for zero-config conditions; default none. */
  zeroConfigMaxConditionAgeMs?: number;
}

function combine(observations: ConditionObservation[], match: ConditionMatch): { satisfied: boolean; failing: boolean } {
  if (match === 'anyOf') {
    return { satisfied: observations.some((o) => o.satisfied), failing: observations.every((o) => o.failing) };
  }
  return { satisfied: observations.every((o) => o.satisfied), failing: observations.some((o) => o.failing) };
}

function stateOf(observations: ConditionObservation[], satisfied: boolean): GateState {
  if (satisfied) return 'satisfied';
  if (observations.some((o) => o.failing)) return 'failing';
  if (observations.some((o) => o.state === 'Unknown' || (o.state !== 'Missing' && !o.satisfied))) return 'unknown';
  return 'missing';
}

/** When the gate's conditions last became what releases the taint; undefined when unknowable. */
function satisfiedSince(observations: ConditionObservation[], match: ConditionMatch): number | undefined {
  const times = observations.filter((o) => o.satisfied).map((o) => o.transitionMs);
  if (times.length === 0 || times.some((t) => t === undefined)) return undefined;
  const ts = times as number[];
  return match === 'anyOf' ? Math.min(...ts) : Math.max(...ts);
}

/** When the gate started failing; -Infinity (due now) when the agent gave no transition time. */
function failingSince(observations: ConditionObservation[], match: ConditionMatch): number {
  const ts = observations.filter((o) => o.failing).map((o) => o.transitionMs ?? o.heartbeatMs ?? -Infinity);
  return match === 'anyOf' ? Math.max(...ts) : Math.min(...ts);
}

function ruleTaint(rule: ResolvedRule, nowMs: number): V1Taint {
  const t: V1Taint = { key: rule.taint.key, effect: rule.taint.effect };
  if (rule.taint.value) t.value = rule.taint.value;
  // The API server only stamps timeAdded for NoExecute taints it adds itself; eviction timing needs it.
  if (rule.taint.effect === 'NoExecute') t.timeAdded = new Date(Math.floor(nowMs / 1000) * 1000);
  return t;
}

export function evaluateNode(
  node: V1Node,
  rules: readonly NodeReadinessRule[] | RuleSet,
  nowMs: number,
  options: EvaluateOptions = {},
): NodeDecision {
  const set = Array.isArray(rules) ? resolveRules(rules as readonly NodeReadinessRule[]) : (rules as RuleSet);
  const decision: NodeDecision = { node: node.metadata?.name ?? '', gates: [], changes: [], dryRun: [] };
  const taints = node.spec?.taints ?? [];
  const present = new Map(taints.map((t) => [taintId(t), t]));
  const owned = readManagedTaints(node);
  const completed = readCompletions(node);
  const labels = node.metadata?.labels;
  const nodeConditions = node.status?.conditions;
  const activeByName = new Map(set.active.map((r) => [r.name, r]));
  const deletingNames = new Set(set.deleting.map((r) => r.name));
  /** An ownership entry still in force: its owner exists, is not being deleted, and still manages this key+effect. */
  const liveOwner = (id: string): string | undefined => {
    const owner = owned.get(id);
    if (owner === undefined) return undefined;
    if (set.rejected.has(owner)) return owner;
    const active = activeByName.get(owner);
    return active && taintId(active.taint) === id ? owner : undefined;
  };
  const handled = new Set<string>();
  const later = (ms: number): void => {
    decision.nextEvaluationAtMs = Math.min(decision.nextEvaluationAtMs ?? Infinity, ms);
  };

  for (const rule of set.active) {
    const id = taintId(rule.taint);
    const tainted = present.has(id);
    const ownedByMe = owned.get(id) === rule.name;
    const selected = selectorMatches(rule.selector, labels);
    const base = { gate: rule.name, source: 'rule' as const, taint: present.get(id) ?? ruleTaint(rule, nowMs), mode: rule.mode, dryRun: rule.dryRun, selected, tainted };

    if (!selected) {
      let message = 'node is not selected by this rule';
      if (ownedByMe) {
        handled.add(id);
        message = `node left the selector: releasing the taint rule "${rule.name}" put here`;
        decision.changes.push({ op: tainted ? 'remove' : 'release', taint: base.taint, gate: rule.name, source: 'cleanup', complete: false, reason: message });
      }
      decision.gates.push({ ...base, conditions: [], satisfied: false, failing: false, state: 'not-selected', holding: false, message });
      continue;
    }
    handled.add(id);

    const owner = liveOwner(id);
    if (owner !== undefined && owner !== rule.name) {
      decision.gates.push({ ...base, conditions: [], satisfied: false, failing: false, state: 'foreign', holding: false, message: `taint is owned by rule "${owner}"; left alone` });
      continue;
    }

    if (rule.mode === 'bootstrap-only' && completed.has(rule.name)) {
      if (ownedByMe && !rule.dryRun) {
        decision.changes.push({ op: 'release', taint: base.taint, gate: rule.name, source: 'rule', complete: false, reason: 'gate already passed' });
      }
      decision.gates.push({ ...base, conditions: [], satisfied: true, failing: false, state: 'completed', holding: false, message: `passed at ${completed.get(rule.name)}; bootstrap-only gates are never re-applied` });
      continue;
    }

    const conditions = rule.conditions.map((c) => observeCondition(nodeConditions, c, rule.maxConditionAgeMs, nowMs));
    const { satisfied, failing } = combine(conditions, rule.match);
    const state = stateOf(conditions, satisfied);
    const why = conditions.map((o) => describeObservation(o, nowMs, rule.maxConditionAgeMs)).join('; ');
    const target = rule.dryRun ? decision.dryRun : decision.changes;
    const gate: GateEvaluation = { ...base, conditions, satisfied, failing, state, holding: false, message: why };

    if (tainted) {
      if (satisfied) {
        const since = satisfiedSince(conditions, rule.match);
        target.push({
          op: 'remove',
          taint: base.taint,
          gate: rule.name,
          source: 'rule',
          complete: rule.mode === 'bootstrap-only',
          ...(since !== undefined ? { satisfiedSinceMs: since } : {}),
          reason: `${rule.match === 'anyOf' ? 'a condition' : 'every condition'} is satisfied: ${why}`,
        });
        gate.message = `released: ${why}`;
      } else {
        gate.holding = true;
        gate.message = `holding: ${why}`;
        if (!ownedByMe && !rule.dryRun) {
          decision.changes.push({ op: 'adopt', taint: base.taint, gate: rule.name, source: 'rule', complete: false, reason: 'taint was already on the node' });
        }
      }
    } else if (rule.mode === 'continuous' && failing) {
      const dueAt = failingSince(conditions, rule.match) + rule.debounceMs;
      if (dueAt <= nowMs) {
        target.push({ op: 'add', taint: base.taint, gate: rule.name, source: 'rule', complete: false, reason: `explicitly failing for at least ${rule.debounceMs / 1000}s: ${why}` });
        gate.holding = !rule.dryRun;
        gate.message = `tainting: ${why}`;
      } else {
        gate.addDueAtMs = dueAt;
        gate.message = `failing; taint returns in ${Math.ceil((dueAt - nowMs) / 1000)}s unless it recovers: ${why}`;
        later(dueAt);
        if (ownedByMe && !rule.dryRun) decision.changes.push({ op: 'release', taint: base.taint, gate: rule.name, source: 'rule', complete: false, reason: 'taint was removed by someone else' });
      }
    } else {
      gate.message = `${satisfied ? 'ready' : rule.mode === 'bootstrap-only' ? 'not gated (bootstrap-only never adds its taint)' : 'not tainted (only an explicit failing status adds it)'}: ${why}`;
      if (ownedByMe && !rule.dryRun) decision.changes.push({ op: 'release', taint: base.taint, gate: rule.name, source: 'rule', complete: false, reason: 'taint was removed by someone else' });
    }
    decision.gates.push(gate);
  }

  // Ownership entries nobody in force claims any more: the owner was deleted, is being deleted, or changed taint.
  for (const [id, owner] of owned) {
    if (handled.has(id) || liveOwner(id) !== undefined) continue;
    handled.add(id);
    const taint = present.get(id) ?? taintFromId(id);
    const reason = deletingNames.has(owner) ? `rule "${owner}" is being deleted` : `rule "${owner}" no longer manages this taint`;
    decision.changes.push({ op: present.has(id) ? 'remove' : 'release', taint, gate: owner, source: 'cleanup', complete: false, reason });
  }

  if (options.zeroConfig !== false) {
    for (const t of taints) {
      const id = taintId(t);
      if (!t.key.startsWith(ReadinessTaintPrefix) || handled.has(id) || owned.has(id) || set.claimedKeys.has(t.key)) continue;
      const type = t.key.slice(ReadinessTaintPrefix.length);
      const base = { gate: t.key, source: 'zero-config' as const, taint: t, mode: 'bootstrap-only' as const, dryRun: false, selected: true, tainted: true };
      if (completed.has(t.key)) {
        decision.gates.push({ ...base, conditions: [], satisfied: true, failing: false, state: 'completed', holding: false, message: `passed at ${completed.get(t.key)}; the taint was put back by someone else and is left alone` });
        continue;
      }
      const o = observeCondition(nodeConditions, { type, requiredStatus: 'True' }, options.zeroConfigMaxConditionAgeMs, nowMs);
      const why = describeObservation(o, nowMs, options.zeroConfigMaxConditionAgeMs);
      if (o.satisfied) {
        decision.changes.push({ op: 'remove', taint: t, gate: t.key, source: 'zero-config', complete: true, ...(o.transitionMs !== undefined ? { satisfiedSinceMs: o.transitionMs } : {}), reason: `zero-config: ${why}` });
      }
      decision.gates.push({ ...base, conditions: [o], satisfied: o.satisfied, failing: o.failing, state: stateOf([o], o.satisfied), holding: !o.satisfied, message: `${o.satisfied ? 'released' : 'holding'} (zero-config): ${why}` });
    }
  }
  return decision;
}

function taintFromId(id: string): V1Taint {
  const i = id.lastIndexOf(':');
  return { key: id.slice(0, i), effect: id.slice(i + 1) };
}
