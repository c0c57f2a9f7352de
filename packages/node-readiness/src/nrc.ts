/**
 * Rules of kubernetes-sigs/node-readiness-controller (NRC, `readiness.node.x-k8s.io/v1alpha1`)
 * read as podlife rules, and the plan `podlife migrate nrc` carries out (docs/adr/0272).
 *
 * Guarantees (pure):
 * - a rule is converted whole or not at all: a field podlife does not know (a newer NRC), a value
 *   it does not accept, or a rule podlife would reject (a selector every node satisfies, an
 *   overlap) makes it "not migrated" with every reason named by field — never a podlife rule that
 *   does part of what the NRC rule said;
 * - a migrated rule keeps NRC's name and records NRC's rule (`<name>/<uid>`) in an annotation, so
 *   the controller honours the completion annotations NRC wrote for it (by uid, and by name as
 *   older NRC releases wrote them) and a second plan recognises it: planning against the outcome of
 *   a plan proposes nothing;
 * - NRC's finalizer is removed only from a rule whose podlife rule exists (or is created in the
 *   same plan, before it): the taints NRC put on are then podlife's to clean up, never orphaned.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { MigratedFromAnnotation, RuleApiVersion, RuleKind } from './names.js';
import { NrcFinalizer } from './nrc-names.js';
import type { NodeReadinessRule, NodeReadinessRuleSpec, RuleCondition, RuleProblem } from './rule.js';
import { resolveRules } from './ruleset.js';

/** An NRC NodeReadinessRule as read from the API server: its spec is checked, not trusted. */
export interface NrcRule {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
  spec?: unknown;
  status?: unknown;
}

const known: Record<string, readonly string[]> = {
  spec: ['conditions', 'conditionPolicy', 'enforcementMode', 'taint', 'nodeSelector', 'dryRun'],
  condition: ['type', 'requiredStatus', 'defaultStatus'],
  taint: ['key', 'value', 'effect', 'timeAdded'],
  nodeSelector: ['matchLabels', 'matchExpressions'],
  expression: ['key', 'operator', 'values'],
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function unknownFields(obj: unknown, allowed: readonly string[], field: string, problems: RuleProblem[]): void {
  if (!isObject(obj)) return;
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) problems.push({ field: `${field}.${key}`, message: 'podlife does not know this field, so it cannot honour the rule exactly' });
  }
}

/** The podlife rule an NRC rule means, or every reason it cannot be honoured exactly. */
export function fromNrcRule(nrc: NrcRule): { rule: NodeReadinessRule; problems?: undefined } | { rule?: undefined; problems: RuleProblem[] } {
  const problems: RuleProblem[] = [];
  const name = nrc.metadata?.name ?? '';
  const spec = nrc.spec;
  if (!isObject(spec)) return { problems: [{ field: 'spec', message: 'an NRC rule needs a spec' }] };
  unknownFields(spec, known.spec ?? [], 'spec', problems);
  const conditions = Array.isArray(spec.conditions) ? (spec.conditions as unknown[]) : [];
  conditions.forEach((c, i) => unknownFields(c, known.condition ?? [], `spec.conditions[${i}]`, problems));
  unknownFields(spec.taint, known.taint ?? [], 'spec.taint', problems);
  unknownFields(spec.nodeSelector, known.nodeSelector ?? [], 'spec.nodeSelector', problems);
  const expressions = isObject(spec.nodeSelector) && Array.isArray(spec.nodeSelector.matchExpressions) ? (spec.nodeSelector.matchExpressions as unknown[]) : [];
  expressions.forEach((e, i) => unknownFields(e, known.expression ?? [], `spec.nodeSelector.matchExpressions[${i}]`, problems));
  if (spec.enforcementMode === undefined) problems.push({ field: 'spec.enforcementMode', message: 'NRC rules without an enforcementMode have no meaning podlife can repeat exactly' });
  if (problems.length > 0) return { problems };

  const taint = (isObject(spec.taint) ? spec.taint : {}) as { key?: string; value?: string; effect?: string };
  const converted: NodeReadinessRuleSpec = {
    conditions: conditions.map((c) => {
      const { type, requiredStatus, defaultStatus } = (isObject(c) ? c : {}) as unknown as RuleCondition;
      return { type, ...(requiredStatus !== undefined ? { requiredStatus } : {}), ...(defaultStatus !== undefined ? { defaultStatus } : {}) };
    }),
    ...(spec.conditionPolicy !== undefined ? { match: spec.conditionPolicy as NodeReadinessRuleSpec['match'] } : {}),
    enforcementMode: spec.enforcementMode as NodeReadinessRuleSpec['enforcementMode'],
    taint: { key: taint.key ?? '', effect: taint.effect as NodeReadinessRuleSpec['taint']['effect'], ...(taint.value ? { value: taint.value } : {}) },
    // The NRC rule author chose NoExecute: podlife's opt-in is that choice, written down.
    ...(taint.effect === 'NoExecute' ? { allowNoExecute: true } : {}),
    nodeSelector: (spec.nodeSelector ?? {}) as NodeReadinessRuleSpec['nodeSelector'],
    ...(spec.dryRun === true ? { dryRun: true } : {}),
  };
  const rule: NodeReadinessRule = {
    apiVersion: RuleApiVersion,
    kind: RuleKind,
    metadata: { name, annotations: { [MigratedFromAnnotation]: migratedFrom(nrc) } },
    spec: converted,
  };
  const rejection = resolveRules([rule]).rejected.get(name);
  if (rejection) return { problems: rejection.problems ?? [{ field: 'spec', message: rejection.message }] };
  return { rule };
}

/** `<name>/<uid>` of an NRC rule: what a migrated rule records and the controller reads. */
export function migratedFrom(nrc: NrcRule): string {
  return `${nrc.metadata?.name ?? ''}/${nrc.metadata?.uid ?? ''}`;
}

/** One thing `podlife migrate nrc` does, or would do, for one NRC rule. */
export type MigrationStep =
  | { op: 'create-rule'; nrcRule: string; rule: NodeReadinessRule; message: string }
  | { op: 'remove-finalizer'; nrcRule: string; resourceVersion: string; finalizers: string[]; message: string }
  | { op: 'not-migrated'; nrcRule: string; problems: RuleProblem[]; message: string }
  | { op: 'up-to-date'; nrcRule: string; message: string };

/** What a migration changes, in the order it must be done. */
export interface MigrationPlan {
  steps: MigrationStep[];
  /** Steps that write (create-rule, remove-finalizer): none means there is nothing to do. */
  changes: number;
}

/** What `podlife migrate nrc` would change, given NRC's rules and podlife's (see the guarantees above). */
export function planNrcMigration(nrcRules: readonly NrcRule[], podlifeRules: readonly NodeReadinessRule[]): MigrationPlan {
  const steps: MigrationStep[] = [];
  const existing = new Map(podlifeRules.map((r) => [r.metadata?.name ?? '', r]));
  const planned: NodeReadinessRule[] = [];
  const sorted = [...nrcRules].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  for (const nrc of sorted) {
    const name = nrc.metadata?.name ?? '';
    const mine = existing.get(name);
    let ready = false;
    if (mine) {
      if (mine.metadata?.annotations?.[MigratedFromAnnotation] === migratedFrom(nrc)) {
        ready = true;
      } else {
        steps.push({ op: 'not-migrated', nrcRule: name, problems: [{ field: 'metadata.name', message: `a podlife NodeReadinessRule "${name}" already exists and was not migrated from this NRC rule; rename or delete one of them` }], message: 'name taken' });
        continue;
      }
    } else if (nrc.metadata?.deletionTimestamp) {
      steps.push({ op: 'up-to-date', nrcRule: name, message: 'being deleted: NRC is cleaning it up, nothing to migrate' });
      continue;
    } else {
      const converted = fromNrcRule(nrc);
      if (converted.problems) {
        steps.push({ op: 'not-migrated', nrcRule: name, problems: converted.problems, message: problemText(converted.problems) });
        continue;
      }
      const clash = overlap(converted.rule, [...podlifeRules, ...planned]);
      if (clash) {
        steps.push({ op: 'not-migrated', nrcRule: name, problems: [{ field: 'spec.taint', message: clash }], message: clash });
        continue;
      }
      planned.push(converted.rule);
      steps.push({ op: 'create-rule', nrcRule: name, rule: converted.rule, message: `create NodeReadinessRule ${name} (${RuleApiVersion}) with taint ${converted.rule.spec?.taint.key}:${converted.rule.spec?.taint.effect}` });
      ready = true;
    }
    const finalizers = nrc.metadata?.finalizers ?? [];
    if (ready && finalizers.includes(NrcFinalizer)) {
      steps.push({
        op: 'remove-finalizer',
        nrcRule: name,
        resourceVersion: nrc.metadata?.resourceVersion ?? '',
        finalizers: finalizers.filter((f) => f !== NrcFinalizer),
        message: `remove finalizer ${NrcFinalizer}: podlife rule ${name} now owns the taints NRC put on`,
      });
    } else if (ready && mine) {
      steps.push({ op: 'up-to-date', nrcRule: name, message: `already migrated to podlife rule ${name}` });
    }
  }
  return { steps, changes: steps.filter((s) => s.op === 'create-rule' || s.op === 'remove-finalizer').length };
}

/** Why `rule` would be rejected as overlapping a rule in `others`, or undefined. */
function overlap(rule: NodeReadinessRule, others: readonly NodeReadinessRule[]): string | undefined {
  // The new rule is the youngest: of two overlapping rules, it is the one podlife would reject.
  const young = { ...rule, metadata: { ...rule.metadata, creationTimestamp: new Date(8.64e15) } };
  const set = resolveRules([...others.filter((o) => !o.metadata?.deletionTimestamp), young]);
  const r = set.rejected.get(rule.metadata?.name ?? '');
  return r?.reason === 'Overlapping' ? r.message : undefined;
}

function problemText(problems: readonly RuleProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}
