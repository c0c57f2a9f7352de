/**
 * The NodeReadinessRule CustomResourceDefinition, as an object: installed by tests and the
 * controller's tooling, and rendered to deploy/crds/nodereadinessrules.yaml (a unit test keeps
 * the two identical).
 *
 * Guarantees: the API server itself refuses the rules the controller would reject — wrong taint
 * prefix or name, unknown effect, NoExecute without opt-in, a selector every node satisfies (empty,
 * or only `Exists` on a label the kubelet sets on every node), a duration over 24h, bootstrap-only
 * with anyOf or defaultStatus — and refuses changing the taint, which would orphan taints on nodes.
 */
import { clusterCrd, conditionsSchema, labelSelectorSchema } from '@podlife/core';
import { DurationPattern, EveryNodeLabels, MaxDuration } from './rule.js';
import { ReadinessTaintPrefix, RuleGroup, RuleKind, RuleResource, RuleVersion } from './names.js';

const status3 = { type: 'string', enum: ['True', 'False', 'Unknown'] };
const count = { type: 'integer', format: 'int32', minimum: 0 };
const escapedPrefix = ReadinessTaintPrefix.replaceAll('.', '\\.');
const everyNodeLabels = `[${EveryNodeLabels.map((l) => `'${l}'`).join(', ')}]`;

/** A bounded Go-style duration (CEL's duration() reads Go's notation). */
function duration(name: string, description: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'string',
    maxLength: 32,
    pattern: DurationPattern,
    ...extra,
    description: `${description} At most ${MaxDuration}.`,
    'x-kubernetes-validations': [{ rule: `duration(self) <= duration('${MaxDuration}')`, message: `${name} must be at most ${MaxDuration}` }],
  };
}

const labelSelector = labelSelectorSchema(
  'Which nodes the rule gates. Must not select every node (empty, or only Exists on a label every node carries): a rule for every node is a cluster-wide outage waiting to happen.',
  [
    {
      rule: `(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && self.matchExpressions.exists(e, e.operator != 'Exists' || !(e.key in ${everyNodeLabels})))`,
      message: `nodeSelector must select something: an empty selector, or one that only asks for a label every node carries (Exists on ${EveryNodeLabels.join(', ')}), would gate every node in the cluster`,
    },
  ],
);

/** Which pods a pod condition reads: labels, not every pod of a namespace. */
const podSelector = labelSelectorSchema(undefined, [
  {
    rule: '(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)',
    message: 'selector must select something: an empty selector takes any pod in the namespace',
  },
]);

const spec = {
  type: 'object',
  required: ['conditions', 'enforcementMode', 'taint', 'nodeSelector'],
  properties: {
    conditions: {
      type: 'array',
      description: 'Node conditions (or pods on the node, with pod) the gate waits for.',
      minItems: 1,
      maxItems: 16,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', minLength: 1, maxLength: 316, pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$' },
          requiredStatus: { ...status3, default: 'True', description: 'The status that satisfies the condition.' },
          defaultStatus: { ...status3, description: 'Assumed when the node does not report the condition (continuous rules only).' },
          pod: {
            type: 'object',
            description: 'Satisfied by a pod on the node being Ready instead of by a node condition: the pod of daemonSet, or one matching selector, in namespace.',
            required: ['namespace'],
            properties: {
              namespace: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
              daemonSet: { type: 'string', minLength: 1, maxLength: 253 },
              selector: podSelector,
            },
            'x-kubernetes-validations': [{ rule: 'has(self.daemonSet) != has(self.selector)', message: 'name either a daemonSet or a selector (exactly one)' }],
          },
        },
      },
    },
    match: { type: 'string', enum: ['allOf', 'anyOf'], default: 'allOf', description: 'Whether every condition or any one must be satisfied.' },
    enforcementMode: {
      type: 'string',
      enum: ['bootstrap-only', 'continuous'],
      description: 'bootstrap-only removes the taint once and never adds it; continuous re-adds it when a condition explicitly fails for longer than debounce.',
    },
    taint: {
      type: 'object',
      required: ['key', 'effect'],
      properties: {
        key: { type: 'string', maxLength: 80, pattern: `^${escapedPrefix}[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$` },
        value: { type: 'string', maxLength: 63 },
        effect: { type: 'string', enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
      },
      'x-kubernetes-validations': [
        { rule: `self.key.startsWith('${ReadinessTaintPrefix}')`, message: `taint key must start with ${ReadinessTaintPrefix}` },
        { rule: 'self == oldSelf', message: 'taint is immutable: changing it would orphan the taints already on nodes; create a new rule instead' },
      ],
    },
    allowNoExecute: { type: 'boolean', default: false, description: 'Opt in to a NoExecute taint, which evicts running pods.' },
    nodeSelector: labelSelector,
    dryRun: { type: 'boolean', default: false, description: 'Report what would change in status and Events; write nothing to nodes.' },
    maxConditionAge: duration('maxConditionAge', 'A condition whose lastHeartbeatTime is older than this counts as Unknown.'),
    debounce: duration('debounce', 'continuous: how long a condition must fail before the taint returns.', { default: '30s' }),
    suspend: { type: 'boolean', default: false, description: 'Stop adding and removing the taint until unset; status and Events still report.' },
    after: {
      type: 'array',
      maxItems: 8,
      'x-kubernetes-list-type': 'set',
      description: 'Rules whose taint must be gone from a node before this rule releases it there.',
      items: { type: 'string', minLength: 1, maxLength: 253 },
    },
    guardrails: {
      type: 'object',
      default: {},
      properties: {
        maxTaintedPercent: { type: 'integer', minimum: 0, maximum: 100, default: 50, description: 'Circuit breaker: add no taint while more than this share of selected nodes would carry it.' },
        additionsPerMinute: { type: 'integer', minimum: 1, maximum: 60000, default: 60 },
        additionBurst: { type: 'integer', minimum: 1, maximum: 10000, default: 10 },
      },
    },
  },
  'x-kubernetes-validations': [
    {
      rule: "self.taint.effect != 'NoExecute' || self.allowNoExecute == true",
      message: 'NoExecute evicts running pods: set allowNoExecute: true to opt in',
      fieldPath: '.taint.effect',
    },
    {
      rule: "self.enforcementMode != 'bootstrap-only' || self.match == 'allOf'",
      message: 'bootstrap-only rules must use match: allOf (a node is released once, so every condition must hold)',
      fieldPath: '.match',
    },
    {
      rule: "self.enforcementMode != 'bootstrap-only' || self.conditions.all(c, !has(c.defaultStatus))",
      message: 'bootstrap-only rules cannot set defaultStatus: a missing agent must never release a node',
      fieldPath: '.conditions',
    },
  ],
};

const statusSchema = {
  type: 'object',
  description: 'Counts only: per-node lists do not scale to large fleets (use `podlife explain node`).',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64' },
    matchedNodes: count,
    satisfiedNodes: count,
    taintedNodes: count,
    failingNodes: count,
    unknownNodes: count,
    missingNodes: count,
    completedNodes: count,
    wouldTaintNodes: count,
    wouldUntaintNodes: count,
    conditions: conditionsSchema(),
  },
};

/** The NodeReadinessRule CustomResourceDefinition. */
export const nodeReadinessRuleCrd = clusterCrd({
  group: RuleGroup,
  version: RuleVersion,
  kind: RuleKind,
  plural: RuleResource,
  singular: 'nodereadinessrule',
  shortNames: ['nrr'],
  printerColumns: [
    { name: 'Taint', type: 'string', jsonPath: '.spec.taint.key' },
    { name: 'Effect', type: 'string', jsonPath: '.spec.taint.effect' },
    { name: 'Mode', type: 'string', jsonPath: '.spec.enforcementMode' },
    { name: 'DryRun', type: 'boolean', jsonPath: '.spec.dryRun' },
    { name: 'Suspended', type: 'boolean', priority: 1, jsonPath: '.spec.suspend' },
    { name: 'Matched', type: 'integer', jsonPath: '.status.matchedNodes' },
    { name: 'Tainted', type: 'integer', jsonPath: '.status.taintedNodes' },
    { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
    { name: 'Breaker', type: 'string', priority: 1, jsonPath: '.status.conditions[?(@.type=="CircuitBreakerOpen")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  description: 'A readiness gate: nodes it selects keep its taint until the node conditions it names are satisfied.',
  spec,
  status: statusSchema,
});
