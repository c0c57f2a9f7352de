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
import type { V1Node, V1NodeCondition, V1Taint } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import { describeObservation, observeCondition } from './condition-state.js';
import type { ConditionObservation } from './condition-state.js';
import { ReadinessTaintPrefix } from './names.js';
import { observePodCondition } from './pod-conditions.js';
import type { PodLookup } from './pod-conditions.js';
import { readCompletions, readManagedTaints } from './ownership.js';
import { taintId } from './rule.js';
import type { ConditionMatch, EnforcementMode, NodeReadinessRule, ResolvedRule } from './rule.js';
import { resolveRules } from './ruleset.js';
import type { RuleSet } from './ruleset.js';
import { selectorMatches } from './selector.js';

/** Where a gate comes from: a rule, or zero-config mode. */
export type GateSource = 'rule' | 'zero-config';
/** Per node and gate, for status counts and the nodes-by-state metric. */
export type GateState = 'satisfied' | 'failing' | 'unknown' | 'missing' | 'completed' | 'not-selected' | 'foreign';

/** One gate on one node: its state, its conditions, and what it wants done. */
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

/** The kinds of taint change. */
export type TaintOp = 'add' | 'remove' | 'adopt' | 'release';

/** One change to a node's readiness taints or their ownership record. */
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

/** The outcome of `evaluateNode`: every gate, the changes due, and when to look again. */
export interface NodeDecision {
  node: string;
  gates: GateEvaluation[];
  changes: TaintChange[];
  /** What dry-run rules would do. */
  dryRun: TaintChange[];
  /** Evaluate again at this time even if nothing changes (a debounce expires). */
  nextEvaluationAtMs?: number;
}

/** Zero-config mode, and how old a condition heartbeat may be in it. */
export interface EvaluateOptions {
  /** Remove unclaimed `readiness.k8s.io/<Type>` taints once condition <Type> is True; default true. */
  zeroConfig?: boolean;
  /** Staleness bound for zero-config conditions; default none. */
  zeroConfigMaxConditionAgeMs?: number;
  /** Where pod conditions read pods; without it they are Missing ("pods are not read here"). */
  pods?: PodLookup;
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

/** What one evaluation reads from the node and its rules, and the decision it fills in. */
interface NodeView {
  readonly set: RuleSet;
  readonly nowMs: number;
  readonly taints: V1Taint[];
  /** The node's taints by key:effect. */
  readonly present: Map<string, V1Taint>;
  /** The managed-taints annotation: taint id -> the rule that put (or adopted) it. */
  readonly owned: Map<string, string>;
  /** The completion annotation: gate -> when it passed. */
  readonly completed: Map<string, string>;
  readonly labels: Record<string, string> | undefined;
  readonly annotations: Record<string, string> | undefined;
  readonly conditions: V1NodeCondition[] | undefined;
  readonly activeByName: Map<string, ResolvedRule>;
  readonly pods: PodLookup | undefined;
  /** The kubelet's last Ready heartbeat: how fresh the node's pod statuses are. */
  readonly heartbeatMs: number | undefined;
  /** Taint ids a gate has already decided on; later passes leave them alone. */
  readonly handled: Set<string>;
  readonly decision: NodeDecision;
}

/** The fields every gate evaluation of a rule shares. */
type GateBase = Pick<GateEvaluation, 'gate' | 'source' | 'taint' | 'mode' | 'dryRun' | 'selected' | 'tainted'>;

/** What every gate says about `node` now, and the taint changes that follow (see above). */
export function evaluateNode(
  node: V1Node,
  rules: readonly NodeReadinessRule[] | RuleSet,
  nowMs: number,
  options: EvaluateOptions = {},
): NodeDecision {
  const set = Array.isArray(rules) ? resolveRules(rules as readonly NodeReadinessRule[]) : (rules as RuleSet);
  const view = readNode(node, set, nowMs, options.pods);
  for (const rule of set.active) {
    const before = { changes: view.decision.changes.length, dryRun: view.decision.dryRun.length };
    evaluateRule(view, rule);
    if (rule.suspended) suspend(view, rule, before);
  }
  // A rule held back may hold back the rules waiting for it: repeat until nothing more is held.
  const waiting = set.active.filter((r) => r.after.length > 0 && !r.suspended);
  for (let held = waiting.length > 0; held; ) held = waiting.map((r) => waitForOthers(view, r)).some(Boolean);
  releaseOrphans(view);
  if (options.zeroConfig !== false) evaluateZeroConfig(view, options);
  return view.decision;
}

function readNode(node: V1Node, set: RuleSet, nowMs: number, pods: PodLookup | undefined): NodeView {
  const taints = node.spec?.taints ?? [];
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    set,
    nowMs,
    taints,
    present: new Map(taints.map((t) => [taintId(t), t])),
    owned: readManagedTaints(node),
    completed: readCompletions(node),
    labels: node.metadata?.labels,
    annotations: node.metadata?.annotations,
    conditions: node.status?.conditions,
    activeByName: new Map(set.active.map((r) => [r.name, r])),
    pods,
    heartbeatMs: timeMs(ready?.lastHeartbeatTime ?? ready?.lastTransitionTime),
    handled: new Set(),
    decision: { node: node.metadata?.name ?? '', gates: [], changes: [], dryRun: [] },
  };
}

/** The owner of an ownership entry still in force: it exists, is not being deleted, and still manages this key+effect. */
function liveOwner(view: NodeView, id: string): string | undefined {
  const owner = view.owned.get(id);
  if (owner === undefined) return undefined;
  if (view.set.rejected.has(owner)) return owner;
  const active = view.activeByName.get(owner);
  return active && taintId(active.taint) === id ? owner : undefined;
}

function evaluateAgainLater(decision: NodeDecision, ms: number): void {
  decision.nextEvaluationAtMs = Math.min(decision.nextEvaluationAtMs ?? Infinity, ms);
}

/** One rule in force: not selected, owned by another rule, already passed, or judged on its conditions. */
function evaluateRule(view: NodeView, rule: ResolvedRule): void {
  const id = taintId(rule.taint);
  const tainted = view.present.has(id);
  const ownedByMe = view.owned.get(id) === rule.name;
  const selected = selectorMatches(rule.selector, view.labels);
  const base: GateBase = { gate: rule.name, source: 'rule', taint: view.present.get(id) ?? ruleTaint(rule, view.nowMs), mode: rule.mode, dryRun: rule.dryRun, selected, tainted };
  if (!selected) return notSelected(view, rule, base, id, ownedByMe);
  view.handled.add(id);
  const owner = liveOwner(view, id);
  const { decision } = view;
  if (owner !== undefined && owner !== rule.name) {
    decision.gates.push({ ...base, conditions: [], satisfied: false, failing: false, state: 'foreign', holding: false, message: `taint is owned by rule "${owner}"; left alone` });
    return;
  }
  const passed = rule.mode === 'bootstrap-only' ? passedAt(view, rule) : undefined;
  if (passed !== undefined) {
    if (ownedByMe && !rule.dryRun) decision.changes.push(change('release', base, 'rule', 'gate already passed'));
    decision.gates.push({ ...base, conditions: [], satisfied: true, failing: false, state: 'completed', holding: false, message: `${passed}; bootstrap-only gates are never re-applied` });
    return;
  }
  decision.gates.push(judgeGate(view, rule, base, ownedByMe));
}

/** A suspended rule changes nothing: what its evaluation wanted is dropped, and said. */
function suspend(view: NodeView, rule: ResolvedRule, before: { changes: number; dryRun: number }): void {
  view.decision.changes.length = before.changes;
  view.decision.dryRun.length = before.dryRun;
  const gate = view.decision.gates.find((g) => g.source === 'rule' && g.gate === rule.name);
  if (!gate) return;
  gate.holding = gate.tainted;
  delete gate.addDueAtMs;
  gate.message = `suspended (spec.suspend): no taint is added or removed; ${gate.message}`;
}

/**
 * A rule with `after` never releases a node while a rule it names still holds it (or is not in
 * force): its removal is dropped from this decision and the gate says which rule it waits for.
 * Both may go in the same patch, so it is never released before them. A taint held this way is
 * adopted like any other it holds, so deleting the rule while it waits still strips it.
 */
function waitForOthers(view: NodeView, rule: ResolvedRule): boolean {
  const { decision } = view;
  const gate = decision.gates.find((g) => g.source === 'rule' && g.gate === rule.name);
  const isMine = (c: TaintChange): boolean => c.op === 'remove' && c.source === 'rule' && c.gate === rule.name;
  if (!gate || !(decision.changes.some(isMine) || decision.dryRun.some(isMine))) return false;
  const blocking = rule.after.flatMap((dep) => {
    const other = decision.gates.find((g) => g.source === 'rule' && g.gate === dep);
    if (!other) return [`rule "${dep}" is not in force`];
    return other.holding ? [`rule "${dep}" still holds the node (${other.state})`] : [];
  });
  if (blocking.length === 0) return false;
  const removal = decision.changes.find(isMine);
  decision.changes = decision.changes.filter((c) => !isMine(c));
  if (removal !== undefined && view.owned.get(taintId(removal.taint)) !== rule.name) {
    decision.changes.push(change('adopt', gate, 'rule', 'taint was already on the node'));
  }
  decision.dryRun = decision.dryRun.filter((c) => !isMine(c));
  gate.holding = !gate.dryRun;
  gate.message = `waiting (spec.after): ${blocking.join('; ')}; then: ${gate.message.replace(/^released: /, '')}`;
  return true;
}

/** Why the node has passed the rule's gate for good, or undefined: podlife's record, or NRC's for a migrated rule. */
function passedAt(view: NodeView, rule: ResolvedRule): string | undefined {
  const at = view.completed.get(rule.name);
  if (at !== undefined) return `passed at ${at}`;
  const nrcKey = rule.completionKeys.find((k) => view.annotations?.[k] !== undefined);
  return nrcKey === undefined ? undefined : `passed under node-readiness-controller (annotation ${nrcKey})`;
}

/** A rule that does not select the node releases the taint it put there, and otherwise says so. */
function notSelected(view: NodeView, rule: ResolvedRule, base: GateBase, id: string, ownedByMe: boolean): void {
  let message = 'node is not selected by this rule';
  if (ownedByMe) {
    view.handled.add(id);
    message = `node left the selector: releasing the taint rule "${rule.name}" put here`;
    view.decision.changes.push(change(base.tainted ? 'remove' : 'release', base, 'cleanup', message));
  }
  view.decision.gates.push({ ...base, conditions: [], satisfied: false, failing: false, state: 'not-selected', holding: false, message });
}

/** The gate's conditions decide: release or hold a taint that is there; add a failing gate's taint once debounced. */
function judgeGate(view: NodeView, rule: ResolvedRule, base: GateBase, ownedByMe: boolean): GateEvaluation {
  const conditions = rule.conditions.map((c) =>
    c.pod
      ? observePodCondition(view.pods, view.decision.node, { ...c, pod: c.pod }, view.heartbeatMs, rule.maxConditionAgeMs, view.nowMs)
      : observeCondition(view.conditions, c, rule.maxConditionAgeMs, view.nowMs),
  );
  const { satisfied, failing } = combine(conditions, rule.match);
  const why = conditions.map((o) => describeObservation(o, view.nowMs, rule.maxConditionAgeMs)).join('; ');
  const gate: GateEvaluation = { ...base, conditions, satisfied, failing, state: stateOf(conditions, satisfied), holding: false, message: why };
  if (base.tainted) releaseOrHold(view, rule, gate, ownedByMe, why);
  else addOrWait(view, rule, gate, ownedByMe, why);
  return gate;
}

/** The taint is on the node: removed once the conditions are satisfied, else held (and adopted if nobody recorded it). */
function releaseOrHold(view: NodeView, rule: ResolvedRule, gate: GateEvaluation, ownedByMe: boolean, why: string): void {
  const { decision } = view;
  if (gate.satisfied) {
    const since = satisfiedSince(gate.conditions, rule.match);
    (rule.dryRun ? decision.dryRun : decision.changes).push({
      ...change('remove', gate, 'rule', `${rule.match === 'anyOf' ? 'a condition' : 'every condition'} is satisfied: ${why}`),
      complete: rule.mode === 'bootstrap-only',
      ...(since !== undefined ? { satisfiedSinceMs: since } : {}),
    });
    gate.message = `released: ${why}`;
    return;
  }
  gate.holding = true;
  gate.message = `holding: ${why}`;
  if (!ownedByMe && !rule.dryRun) decision.changes.push(change('adopt', gate, 'rule', 'taint was already on the node'));
}

/**
 * The taint is not on the node: a continuous gate adds it once an explicit failure has lasted the
 * debounce (until then, it asks to be evaluated again when that expires); otherwise nothing is
 * added, and an ownership record of a taint someone else removed is dropped.
 */
function addOrWait(view: NodeView, rule: ResolvedRule, gate: GateEvaluation, ownedByMe: boolean, why: string): void {
  const { decision, nowMs } = view;
  const forgetRemovedTaint = (): void => {
    if (ownedByMe && !rule.dryRun) decision.changes.push(change('release', gate, 'rule', 'taint was removed by someone else'));
  };
  if (rule.mode !== 'continuous' || !gate.failing) {
    gate.message = `${gate.satisfied ? 'ready' : rule.mode === 'bootstrap-only' ? 'not gated (bootstrap-only never adds its taint)' : 'not tainted (only an explicit failing status adds it)'}: ${why}`;
    return forgetRemovedTaint();
  }
  const dueAt = failingSince(gate.conditions, rule.match) + rule.debounceMs;
  if (dueAt <= nowMs) {
    (rule.dryRun ? decision.dryRun : decision.changes).push(change('add', gate, 'rule', `explicitly failing for at least ${rule.debounceMs / 1000}s: ${why}`));
    gate.holding = !rule.dryRun;
    gate.message = `tainting: ${why}`;
    return;
  }
  gate.addDueAtMs = dueAt;
  gate.message = `failing; taint returns in ${Math.ceil((dueAt - nowMs) / 1000)}s unless it recovers: ${why}`;
  evaluateAgainLater(decision, dueAt);
  forgetRemovedTaint();
}

function change(op: TaintOp, base: GateBase, source: TaintChange['source'], reason: string): TaintChange {
  return { op, taint: base.taint, gate: base.gate, source, complete: false, reason };
}

/** Ownership entries nobody in force claims any more: the owner was deleted, is being deleted, or changed taint. */
function releaseOrphans(view: NodeView): void {
  const deleting = new Set(view.set.deleting.map((r) => r.name));
  for (const [id, owner] of view.owned) {
    if (view.handled.has(id) || liveOwner(view, id) !== undefined) continue;
    view.handled.add(id);
    const taint = view.present.get(id) ?? taintFromId(id);
    const reason = deleting.has(owner) ? `rule "${owner}" is being deleted` : `rule "${owner}" no longer manages this taint`;
    view.decision.changes.push({ op: view.present.has(id) ? 'remove' : 'release', taint, gate: owner, source: 'cleanup', complete: false, reason });
  }
}

/** Unclaimed `readiness.k8s.io/<Type>` taints: removed (once, recorded as passed) when condition <Type> is True. */
function evaluateZeroConfig(view: NodeView, options: EvaluateOptions): void {
  const { decision, nowMs } = view;
  for (const t of view.taints) {
    const id = taintId(t);
    if (!t.key.startsWith(ReadinessTaintPrefix) || view.handled.has(id) || view.owned.has(id) || view.set.claimedKeys.has(t.key)) continue;
    const type = t.key.slice(ReadinessTaintPrefix.length);
    const base = { gate: t.key, source: 'zero-config' as const, taint: t, mode: 'bootstrap-only' as const, dryRun: false, selected: true, tainted: true };
    if (view.completed.has(t.key)) {
      decision.gates.push({ ...base, conditions: [], satisfied: true, failing: false, state: 'completed', holding: false, message: `passed at ${view.completed.get(t.key)}; the taint was put back by someone else and is left alone` });
      continue;
    }
    const o = observeCondition(view.conditions, { type, requiredStatus: 'True' }, options.zeroConfigMaxConditionAgeMs, nowMs);
    const why = describeObservation(o, nowMs, options.zeroConfigMaxConditionAgeMs);
    if (o.satisfied) {
      decision.changes.push({ op: 'remove', taint: t, gate: t.key, source: 'zero-config', complete: true, ...(o.transitionMs !== undefined ? { satisfiedSinceMs: o.transitionMs } : {}), reason: `zero-config: ${why}` });
    }
    decision.gates.push({ ...base, conditions: [o], satisfied: o.satisfied, failing: o.failing, state: stateOf([o], o.satisfied), holding: !o.satisfied, message: `${o.satisfied ? 'released' : 'holding'} (zero-config): ${why}` });
  }
}

function taintFromId(id: string): V1Taint {
  const i = id.lastIndexOf(':');
  return { key: id.slice(0, i), effect: id.slice(i + 1) };
}
