/**
 * The LifecyclePolicy CustomResourceDefinition, as an object: rendered to
 * deploy/crds/lifecyclepolicies.yaml and the chart by the controller's deploy generator (a unit
 * test keeps the file identical).
 *
 * Guarantees (ADR 0269): the API server itself refuses, naming the field, a policy with an
 * unknown preset, a bad image glob, an image, command or args field, a malformed stop spec, a
 * match that names both or neither of a container name and an image, and a namespace selector
 * that selects every namespace or names one of the cluster's own. What only the controller can
 * judge (an `exec:` name its configuration lacks, a selector that selects kube-system by a label
 * an admin put there) is reported on the policy's status, and the policy is ignored.
 */
import { clusterCrd, conditionsSchema, labelSelectorSchema } from '@podlife/core';
import { COMPLETION_MODES, NATIVE_SIDECARS_MODES, ON_KEYSTONE_EXIT, STOP_PRESETS, STOP_SIGNALS, CONTAINER_ROLES } from '../annotations.js';
import { IMAGE_GLOB_MAX, POLICY_LIMITS } from './policy.js';
import { POLICY_FORBIDDEN_NAMESPACES, PolicyGroup, PolicyKind, PolicyResource, PolicyVersion } from './names.js';
import { SIDECAR_PRESET_NAMES, WELL_KNOWN } from './presets.js';

const DNS_LABEL = '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$';
const NAME_LABEL = 'kubernetes.io/metadata.name';
const forbidden = `[${POLICY_FORBIDDEN_NAMESPACES.map((n) => `'${n}'`).join(', ')}]`;
const presetSpecs = Object.keys(STOP_PRESETS).map((p) => `preset:${p}`);
const STOP_PATTERN = `^(signal:(${STOP_SIGNALS.join('|')})|preset:[a-z0-9-]{1,63}|http:[0-9]{1,5}(/[A-Za-z0-9._~/%?=&+,:@-]{0,255})?|exec:[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)$`;

const count = { type: 'integer', format: 'int32', minimum: 0 };

const namespaceSelector = labelSelectorSchema(
  'The namespaces the policy covers (they must also carry the label podlife.dev/policies: enabled, which sends their pods to the webhook).',
  [
    {
      rule: `(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && self.matchExpressions.exists(e, e.operator == 'In' || (e.operator == 'Exists' && e.key != '${NAME_LABEL}')))`,
      message: `namespaceSelector must require a label (matchLabels, In, or Exists on a label other than ${NAME_LABEL}): this one selects every namespace, kube-system included`,
    },
    {
      rule: `!(has(self.matchLabels) && '${NAME_LABEL}' in self.matchLabels && self.matchLabels['${NAME_LABEL}'] in ${forbidden}) && !(has(self.matchExpressions) && self.matchExpressions.exists(e, e.key == '${NAME_LABEL}' && e.operator == 'In' && has(e.values) && e.values.exists(v, v in ${forbidden})))`,
      message: `namespaceSelector must not name ${POLICY_FORBIDDEN_NAMESPACES.join(', ')}: a policy never covers the cluster's own namespaces`,
    },
  ],
);

const containerMatch = {
  type: 'object',
  required: ['name', 'role'],
  properties: {
    name: { type: 'string', maxLength: 63, pattern: DNS_LABEL, description: "The match's own name, in records and `podlife explain`." },
    containerName: { type: 'string', maxLength: 63, pattern: DNS_LABEL, description: 'Matches the container of this name.' },
    imageRepository: {
      type: 'string',
      maxLength: IMAGE_GLOB_MAX,
      pattern: '^[a-z0-9._/:@*-]+$',
      description: 'Matches containers whose image repository (without tag or digest) fits this glob; `*` is any run of characters.',
      'x-kubernetes-validations': [{ rule: "self.matches('[^*]')", message: 'imageRepository must name something besides "*": a glob of every image would make every container a sidecar' }],
    },
    role: { type: 'string', enum: [...CONTAINER_ROLES] },
    stop: {
      type: 'string',
      maxLength: 300,
      pattern: STOP_PATTERN,
      description: 'How the container is stopped, as stop.podlife.dev/<container> takes it: signal:<SIG>, preset:<name>, http:<port><path> or exec:<name> (a command the controller configuration names). Default signal:TERM.',
      'x-kubernetes-validations': [{ rule: `!self.startsWith('preset:') || self in [${presetSpecs.map((p) => `'${p}'`).join(', ')}]`, message: `unknown stop preset: one of ${presetSpecs.join(', ')}` }],
    },
    nativeConversion: { type: 'boolean', description: 'May the webhook make this sidecar native (default true); false turns conversion off for the pod.' },
    // Declared only to be refused by name: without them the API server would drop the fields silently.
    image: { type: 'string', maxLength: 1024, description: 'Refused: a policy never chooses an image.' },
    command: { type: 'array', maxItems: 1, items: { type: 'string', maxLength: 1024 }, description: 'Refused: a policy never chooses a command.' },
    args: { type: 'array', maxItems: 1, items: { type: 'string', maxLength: 1024 }, description: 'Refused: a policy never chooses a command.' },
  },
  'x-kubernetes-validations': [
    { rule: 'has(self.containerName) != has(self.imageRepository)', message: 'give exactly one of containerName and imageRepository' },
    { rule: '!has(self.image)', message: 'a policy never chooses an image: match by imageRepository, stop with a preset or a configured exec: name', fieldPath: '.image' },
    { rule: '!has(self.command)', message: 'a policy never chooses a command: stop with a preset or a configured exec: name', fieldPath: '.command' },
    { rule: '!has(self.args)', message: 'a policy never chooses a command: stop with a preset or a configured exec: name', fieldPath: '.args' },
  ],
};

const spec = {
  type: 'object',
  required: ['namespaceSelector'],
  properties: {
    namespaceSelector,
    podSelector: labelSelectorSchema('Only pods with these labels (default: every pod of the namespaces).'),
    ownerKinds: {
      type: 'array',
      maxItems: POLICY_LIMITS.ownerKinds,
      'x-kubernetes-list-type': 'set',
      items: { type: 'string', maxLength: 63, pattern: '^[A-Z][A-Za-z0-9]*$' },
      description: "Only pods whose controlling owner is of one of these kinds (a CronJob's pods are owned by its Jobs: say Job).",
    },
    presets: {
      type: 'array',
      maxItems: POLICY_LIMITS.presets,
      'x-kubernetes-list-type': 'set',
      items: { type: 'string', enum: [WELL_KNOWN, ...SIDECAR_PRESET_NAMES] },
      description: `Sidecars recognised by name and image, each with its stop; ${WELL_KNOWN} names them all.`,
    },
    containers: {
      type: 'array',
      maxItems: POLICY_LIMITS.containers,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: containerMatch,
      description: 'Container matches, tried before the presets; the first that claims a container decides it.',
    },
    completion: { type: 'string', enum: [...COMPLETION_MODES] },
    onKeystoneExit: { type: 'string', enum: [...ON_KEYSTONE_EXIT] },
    nativeSidecars: { type: 'string', enum: [...NATIVE_SIDECARS_MODES] },
    enforce: { type: 'boolean', default: false, description: "Write the policy's keys over a pod's own annotations (default: the pod's own win)." },
  },
  'x-kubernetes-validations': [
    { rule: '(has(self.presets) && size(self.presets) > 0) || (has(self.containers) && size(self.containers) > 0)', message: 'the policy names no container: give presets or containers' },
  ],
};

const statusSchema = {
  type: 'object',
  description: 'Counts only; `podlife explain` names a pod\'s policy.',
  properties: {
    observedGeneration: { type: 'integer', format: 'int64' },
    matchedNamespaces: { ...count, description: 'Namespaces the selector selects.' },
    unlabelledNamespaces: { ...count, description: 'Of those, namespaces without podlife.dev/policies: enabled, whose pods the webhook never sees.' },
    conditions: conditionsSchema({ observedGeneration: true }),
  },
};

/** The LifecyclePolicy CustomResourceDefinition. */
export const lifecyclePolicyCrd = clusterCrd({
  group: PolicyGroup,
  version: PolicyVersion,
  kind: PolicyKind,
  plural: PolicyResource,
  singular: 'lifecyclepolicy',
  shortNames: ['lcp'],
  printerColumns: [
    { name: 'Presets', type: 'string', jsonPath: '.spec.presets' },
    { name: 'Enforce', type: 'boolean', jsonPath: '.spec.enforce' },
    { name: 'Namespaces', type: 'integer', jsonPath: '.status.matchedNamespaces' },
    { name: 'Unlabelled', type: 'integer', priority: 1, jsonPath: '.status.unlabelledNamespaces' },
    { name: 'Accepted', type: 'string', jsonPath: '.status.conditions[?(@.type=="Accepted")].status' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
  description: 'Lifecycle annotations for pods nobody can annotate: in the namespaces and pods it selects, containers it matches become sidecars (or keystones) that stop as it says. Admin-only.',
  spec,
  status: statusSchema,
});
