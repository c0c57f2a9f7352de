/**
 * The names of the LifecyclePolicy API (ADR 0268): its group, kind and resource, the
 * annotations the webhook writes when a policy applies, and the namespace label that sends a
 * namespace's pods to the webhook.
 */

/** The API group of LifecyclePolicy. */
export const PolicyGroup = 'podlife.dev';
/** The version of the LifecyclePolicy API. */
export const PolicyVersion = 'v1alpha1';
/** The kind of the LifecyclePolicy API. */
export const PolicyKind = 'LifecyclePolicy';
/** The plural resource name of the LifecyclePolicy API. */
export const PolicyResource = 'lifecyclepolicies';
/** The collection's path on the API server. */
export const POLICY_PATH = `/apis/${PolicyGroup}/${PolicyVersion}/${PolicyResource}`;

/** The annotations podlife's webhook writes when a policy applies (ADR 0268). */
export const PolicyAnnotation = {
  /** The policies that applied to the pod, comma-separated in the order they were applied. */
  Policies: 'podlife.dev/policies',
  /**
   * One key per container a policy's match claimed: `<policy>/<match>` when the policy's keys were
   * written, `<policy>/<match>:pod` when the pod's own annotations for that container were kept.
   */
  ContainerPrefix: 'policy.podlife.dev/',
} as const;

/**
 * The namespace label that sends every pod of a namespace to podlife's webhook (its second
 * entry), so a policy reaches pods that carry no podlife label. A policy applies only in
 * namespaces that carry it and that its namespaceSelector selects.
 */
export const PolicyNamespaceLabel = {
  key: 'podlife.dev/policies',
  value: 'enabled',
} as const;

/** Namespaces no policy may select, whatever their labels (the cluster's own). */
export const POLICY_FORBIDDEN_NAMESPACES: readonly string[] = ['kube-system', 'kube-node-lease', 'kube-public'];
