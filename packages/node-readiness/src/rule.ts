/**
 * The NodeReadinessRule resource and its normalised form.
 *
 * Guarantees:
 * - `resolveRule` never throws: a rule is either a `ResolvedRule` with every default applied, or
 *   a list of problems each naming the offending field (the same checks the CRD's CEL rules make,
 *   so a rule admitted under an older CRD cannot slip past the controller);
 * - durations accept Go's notation (`90s`, `1m30s`, `250ms`), as kubectl users expect, and are
 *   bounded (`MaxDurationMs`), so no duration in a rule arms a timer for years;
 * - a selector every node satisfies (no terms, or only `Exists` on labels the kubelet sets on
 *   every node) is refused as the empty selector is: it would gate every node in the cluster.
 */
import type { V1LabelSelector, V1ObjectMeta, V1Taint } from '@kubernetes/client-node';
import { dns1123LabelProblem, qualifiedNameProblem, timeMs } from '@podlife/core';
import type { ConditionStatus, ConditionLike } from '@podlife/core';
import { ReadinessTaintPrefix, RuleApiVersion, RuleKind } from './names.js';
import { nrcCompletionKeys } from './nrc-names.js';

/** Whether a rule only removes its taint once (bootstrap-only) or also re-adds it (continuous). */
export type EnforcementMode = 'bootstrap-only' | 'continuous';
/** Whether every condition of a rule must hold (allOf) or one is enough (anyOf). */
export type ConditionMatch = 'allOf' | 'anyOf';
/** The effect of a readiness taint. */
export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

/**
 * A pod on the node whose Ready condition stands in for a node condition: the pod of a DaemonSet,
 * or one matching a label selector, in `namespace`. Components that already run as pods (CNI
 * agent, CSI node plugin, device plugin) then need no agent writing a node condition.
 */
export interface PodConditionSource {
  namespace: string;
  /** The DaemonSet whose pod on the node must be Ready. */
  daemonSet?: string;
  /** Or: labels of the pod on the node that must be Ready. */
  selector?: V1LabelSelector;
}

/** One node condition (or, with `pod`, one pod's readiness) a rule waits for. */
export interface RuleCondition {
  /** The node condition's type; with `pod`, the name the gate shows for that pod's readiness. */
  type: string;
  /** Satisfied by this pod on the node being Ready (status True) instead of by a node condition. */
  pod?: PodConditionSource;
  /** The status that satisfies this condition; default True. */
  requiredStatus?: ConditionStatus;
  /** Assumed when the node does not report the condition at all (continuous rules only). */
  defaultStatus?: ConditionStatus;
}

/** Limits on how many nodes a rule may taint, and how fast. */
export interface RuleGuardrails {
  /** Stop adding taints when more than this share of matched nodes would carry it; default 50. */
  maxTaintedPercent?: number;
  /** Token-bucket refill rate for taint additions; default 60 per minute. */
  additionsPerMinute?: number;
  /** Token-bucket size; default 10. */
  additionBurst?: number;
}

/** What a rule waits for, which taint it manages, on which nodes, and its guardrails. */
export interface NodeReadinessRuleSpec {
  conditions: RuleCondition[];
  match?: ConditionMatch;
  enforcementMode: EnforcementMode;
  taint: { key: string; effect: TaintEffect; value?: string };
  /** NoExecute evicts running pods; a rule may use it only by saying so. */
  allowNoExecute?: boolean;
  nodeSelector: V1LabelSelector;
  dryRun?: boolean;
  /** A condition whose lastHeartbeatTime is older than this counts as Unknown; at most 24h. */
  maxConditionAge?: string;
  /** continuous: how long a condition must stay explicitly failing before the taint returns; default 30s, at most 24h. */
  debounce?: string;
  guardrails?: RuleGuardrails;
  /** Stop adding and removing this rule's taint until unset; status and explain still report. */
  suspend?: boolean;
  /** Rules whose taint must be gone from a node before this rule releases it there. */
  after?: string[];
}

/** What the controller publishes on a rule: counts and conditions. */
export interface NodeReadinessRuleStatus {
  observedGeneration?: number;
  matchedNodes?: number;
  satisfiedNodes?: number;
  taintedNodes?: number;
  failingNodes?: number;
  unknownNodes?: number;
  missingNodes?: number;
  completedNodes?: number;
  /** Dry run only: nodes the rule would taint, and nodes it would untaint, if it were enforced. */
  wouldTaintNodes?: number;
  wouldUntaintNodes?: number;
  conditions?: ConditionLike[];
}

/** The NodeReadinessRule resource (readiness.podlife.dev). */
export interface NodeReadinessRule {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: NodeReadinessRuleSpec;
  status?: NodeReadinessRuleStatus;
}

/** A rule condition with its defaults applied. */
export interface ResolvedCondition {
  type: string;
  requiredStatus: ConditionStatus;
  defaultStatus?: ConditionStatus;
  pod?: PodConditionSource;
}

/** A rule with every default applied, ready for `evaluateNode`. */
export interface ResolvedRule {
  name: string;
  generation: number;
  createdMs: number;
  deleting: boolean;
  taint: V1Taint & { effect: TaintEffect };
  conditions: ResolvedCondition[];
  match: ConditionMatch;
  mode: EnforcementMode;
  selector: V1LabelSelector;
  dryRun: boolean;
  maxConditionAgeMs?: number;
  debounceMs: number;
  maxTaintedPercent: number;
  additionsPerMinute: number;
  additionBurst: number;
  /** Node annotations that also mark this gate as passed (a rule migrated from node-readiness-controller). */
  completionKeys: string[];
  suspended: boolean;
  /** Rules this one waits for on each node (`spec.after`). */
  after: string[];
}

/** One reason a rule is invalid, naming its field. */
export interface RuleProblem {
  field: string;
  message: string;
}

export const RuleDefaults = {
  match: 'allOf' as ConditionMatch,
  requiredStatus: 'True' as ConditionStatus,
  debounceMs: 30_000,
  maxTaintedPercent: 50,
  additionsPerMinute: 60,
  additionBurst: 10,
};

const statuses: readonly string[] = ['True', 'False', 'Unknown'];
const effects: readonly string[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const modes: readonly string[] = ['bootstrap-only', 'continuous'];
const matches: readonly string[] = ['allOf', 'anyOf'];

/** The pattern the CRD also uses: Go duration notation, positive units only. */
export const DurationPattern = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';
/** The longest duration a rule may set (24h), in the CRD's notation and in milliseconds. */
export const MaxDuration = '24h';
export const MaxDurationMs = 24 * 3_600_000;

/**
 * Labels the kubelet sets on every node it registers: `Exists` on one of them selects every node.
 * (The beta names are still set by kubelets of every supported release.)
 */
export const EveryNodeLabels: readonly string[] = ['kubernetes.io/hostname', 'kubernetes.io/os', 'kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/arch'];
const durationUnitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds in a Go-style duration (`1m30s`), or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (!new RegExp(DurationPattern).test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)) {
    total += Number(m[1]) * (durationUnitMs[m[2] ?? 's'] ?? 0);
  }
  return total;
}

/** No terms, or only `Exists` on labels every node carries: the selector selects every node. */
export function selectsEveryNode(sel: V1LabelSelector | undefined): boolean {
  if (Object.keys(sel?.matchLabels ?? {}).length > 0) return false;
  return (sel?.matchExpressions ?? []).every((e) => e.operator === 'Exists' && EveryNodeLabels.includes(e.key));
}

function optionalDuration(value: string | undefined, field: string, problems: RuleProblem[]): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    problems.push({ field, message: `must be a duration such as 30s or 1m30s, got ${typeof value}` });
    return undefined;
  }
  const ms = parseDuration(value);
  if (ms === undefined) problems.push({ field, message: `"${value.slice(0, 64)}" is not a duration such as 30s or 1m30s` });
  else if (ms > MaxDurationMs) problems.push({ field, message: `must be at most ${MaxDuration}, got ${value.slice(0, 64)}` });
  return ms;
}

function integerIn(value: number | undefined, min: number, max: number, field: string, problems: RuleProblem[]): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || value < min || value > max) {
    problems.push({ field, message: `must be an integer between ${min} and ${max}, got ${value}` });
  }
}

/** What is wrong with a pod condition source: one namespace, and exactly one of a DaemonSet name or a non-empty selector. */
function podSourceProblems(pod: PodConditionSource, field: string, problems: RuleProblem[]): void {
  const ns = typeof pod?.namespace === 'string' ? dns1123LabelProblem(pod.namespace) : 'namespace is required';
  if (ns) problems.push({ field: `${field}.namespace`, message: ns });
  const hasDs = pod?.daemonSet !== undefined;
  const hasSelector = pod?.selector !== undefined;
  if (hasDs === hasSelector) problems.push({ field, message: 'name either a daemonSet or a selector (exactly one)' });
  if (hasDs && (typeof pod.daemonSet !== 'string' || pod.daemonSet.length === 0 || pod.daemonSet.length > 253)) {
    problems.push({ field: `${field}.daemonSet`, message: 'must be the name of a DaemonSet' });
  }
  if (hasSelector && Object.keys(pod.selector?.matchLabels ?? {}).length === 0 && (pod.selector?.matchExpressions ?? []).length === 0) {
    problems.push({ field: `${field}.selector`, message: 'must select something: an empty selector takes any pod in the namespace' });
  }
}

/** Validates a rule and applies defaults. */
export function resolveRule(rule: NodeReadinessRule): { rule: ResolvedRule; problems?: undefined } | { rule?: undefined; problems: RuleProblem[] } {
  const problems: RuleProblem[] = [];
  const name = rule.metadata?.name ?? '';
  if (!name) problems.push({ field: 'metadata.name', message: 'a rule needs a name' });
  const spec = rule.spec;
  if (!spec) return { problems: [...problems, { field: 'spec', message: 'a rule needs a spec' }] };

  const conditions: ResolvedCondition[] = [];
  const seen = new Set<string>();
  if (!Array.isArray(spec.conditions) || spec.conditions.length === 0) {
    problems.push({ field: 'spec.conditions', message: 'list at least one node condition' });
  }
  (spec.conditions ?? []).forEach((c, i) => {
    const field = `spec.conditions[${i}]`;
    const typeProblem = typeof c?.type === 'string' ? qualifiedNameProblem(c.type) : 'type is required';
    if (typeProblem) problems.push({ field: `${field}.type`, message: typeProblem });
    if (seen.has(c?.type)) problems.push({ field: `${field}.type`, message: `condition "${c.type}" is listed twice` });
    seen.add(c?.type);
    const requiredStatus = c?.requiredStatus ?? RuleDefaults.requiredStatus;
    if (!statuses.includes(requiredStatus)) problems.push({ field: `${field}.requiredStatus`, message: `must be one of ${statuses.join(', ')}` });
    if (c?.defaultStatus !== undefined && !statuses.includes(c.defaultStatus)) {
      problems.push({ field: `${field}.defaultStatus`, message: `must be one of ${statuses.join(', ')}` });
    }
    if (c?.pod !== undefined) podSourceProblems(c.pod, `${field}.pod`, problems);
    conditions.push({ type: c?.type, requiredStatus, ...(c?.defaultStatus !== undefined ? { defaultStatus: c.defaultStatus } : {}), ...(c?.pod ? { pod: c.pod } : {}) });
  });

  const match = spec.match ?? RuleDefaults.match;
  if (!matches.includes(match)) problems.push({ field: 'spec.match', message: `must be allOf or anyOf, got "${match}"` });
  const mode = spec.enforcementMode;
  if (!modes.includes(mode)) problems.push({ field: 'spec.enforcementMode', message: `must be bootstrap-only or continuous, got "${String(mode)}"` });
  if (mode === 'bootstrap-only') {
    if (match === 'anyOf') problems.push({ field: 'spec.match', message: 'bootstrap-only rules must use allOf: a node is released once, so every condition must hold' });
    if (conditions.some((c) => c.defaultStatus !== undefined)) {
      problems.push({ field: 'spec.conditions', message: 'bootstrap-only rules cannot set defaultStatus: a missing agent must never release a node' });
    }
  }

  const taint = spec.taint;
  const key = taint?.key ?? '';
  if (!key.startsWith(ReadinessTaintPrefix)) {
    problems.push({ field: 'spec.taint.key', message: `must start with ${ReadinessTaintPrefix}, got "${key}"` });
  } else {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) problems.push({ field: 'spec.taint.key', message: keyProblem });
  }
  if (!effects.includes(taint?.effect)) problems.push({ field: 'spec.taint.effect', message: `must be one of ${effects.join(', ')}` });
  if (taint?.effect === 'NoExecute' && spec.allowNoExecute !== true) {
    problems.push({ field: 'spec.allowNoExecute', message: 'NoExecute evicts running pods; set allowNoExecute: true to opt in' });
  }

  if (selectsEveryNode(spec.nodeSelector)) {
    problems.push({
      field: 'spec.nodeSelector',
      message: `must select something: an empty selector, or one that only asks for a label every node carries (Exists on ${EveryNodeLabels.join(', ')}), would gate every node in the cluster`,
    });
  }

  const maxConditionAgeMs = optionalDuration(spec.maxConditionAge, 'spec.maxConditionAge', problems);
  const debounceMs = optionalDuration(spec.debounce, 'spec.debounce', problems) ?? RuleDefaults.debounceMs;
  const after = spec.after ?? [];
  if (!Array.isArray(after) || after.some((a) => typeof a !== 'string' || a.length === 0)) problems.push({ field: 'spec.after', message: 'must be a list of rule names' });
  else if (after.includes(name)) problems.push({ field: 'spec.after', message: 'a rule cannot wait for itself' });
  const g = spec.guardrails ?? {};
  integerIn(g.maxTaintedPercent, 0, 100, 'spec.guardrails.maxTaintedPercent', problems);
  integerIn(g.additionsPerMinute, 1, 60_000, 'spec.guardrails.additionsPerMinute', problems);
  integerIn(g.additionBurst, 1, 10_000, 'spec.guardrails.additionBurst', problems);

  if (problems.length > 0) return { problems };
  return {
    rule: {
      name,
      generation: rule.metadata?.generation ?? 0,
      createdMs: timeMs(rule.metadata?.creationTimestamp) ?? 0,
      deleting: rule.metadata?.deletionTimestamp != null,
      taint: { key, effect: taint.effect, ...(taint.value ? { value: taint.value } : {}) },
      conditions,
      match,
      mode,
      selector: spec.nodeSelector,
      dryRun: spec.dryRun === true,
      ...(maxConditionAgeMs !== undefined ? { maxConditionAgeMs } : {}),
      debounceMs,
      maxTaintedPercent: g.maxTaintedPercent ?? RuleDefaults.maxTaintedPercent,
      additionsPerMinute: g.additionsPerMinute ?? RuleDefaults.additionsPerMinute,
      additionBurst: g.additionBurst ?? RuleDefaults.additionBurst,
      completionKeys: nrcCompletionKeys(rule),
      suspended: spec.suspend === true,
      after: [...after],
    },
  };
}

/** "key:effect", the identity of a taint on a node (the API server allows one per pair). */
export function taintId(taint: { key: string; effect?: string }): string {
  return `${taint.key}:${taint.effect ?? ''}`;
}

/** A NodeReadinessRule object, for tests, examples and the CLI. */
export function nodeReadinessRule(name: string, spec: NodeReadinessRuleSpec): NodeReadinessRule {
  return { apiVersion: RuleApiVersion, kind: RuleKind, metadata: { name }, spec };
}
