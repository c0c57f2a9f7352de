/**
 * The names node-readiness writes and reads: the rule API group, the taint prefix it may manage,
 * and the node annotations that carry its state across controller restarts.
 *
 * Guarantees: these strings are the public contract; nothing else in the
 * package spells them out.
 */
export const RuleGroup = 'readiness.podlife.dev';
/** The served version of the NodeReadinessRule API. */
export const RuleVersion = 'v1alpha1';
/** kind of NodeReadinessRule objects. */
export const RuleKind = 'NodeReadinessRule';
/** The plural resource name of NodeReadinessRules. */
export const RuleResource = 'nodereadinessrules';
/** apiVersion of NodeReadinessRule objects. */
export const RuleApiVersion = `${RuleGroup}/${RuleVersion}`;

/** Every taint a rule (or zero-config mode) manages starts with this prefix. */
export const ReadinessTaintPrefix = 'readiness.k8s.io/';

/**
 * Which rule owns which taint on this node: JSON `{"<taint key>:<effect>": "<rule name>"}`.
 * Cleanup reads it, not the selector, so a node relabelled out of a selector is still found.
 */
export const ManagedTaintsAnnotation = 'readiness.podlife.dev/managed-taints';

/**
 * Gates this node has passed once and for all: JSON `{"<rule name or zero-config taint key>": "<RFC 3339>"}`.
 * Written in the same patch that removes the taint; a gate recorded here is never acted on again.
 */
export const CompletedAnnotation = 'readiness.podlife.dev/completed';

/** Held on every rule until the taints it owns are gone from every node. */
export const CleanupFinalizer = 'readiness.podlife.dev/cleanup';

/** The pseudo rule name metrics and Events use for zero-config gates. */
export const ZeroConfigSource = 'zero-config';

/**
 * On a rule `podlife migrate nrc` created: `<name>/<uid>` of the node-readiness-controller rule it
 * replaces. NRC's bootstrap completion annotations for that rule then count as this rule's.
 */
export const MigratedFromAnnotation = 'readiness.podlife.dev/migrated-from';
