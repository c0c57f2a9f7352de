/**
 * The names node-readiness-controller (NRC) writes that podlife reads when it takes over a cluster:
 * its rule API, its finalizer, and its bootstrap completion annotations (docs/adr/0272).
 *
 * Guarantees: these strings are NRC's, checked against its API types and controller; nothing else
 * in the package spells them out.
 */
import type { NodeReadinessRule } from './rule.js';
import { MigratedFromAnnotation } from './names.js';

/** NRC's API group. */
export const NrcGroup = 'readiness.node.x-k8s.io';
/** The version of NRC's rule API podlife reads. */
export const NrcVersion = 'v1alpha1';
/** The plural resource name of NRC's rules. */
export const NrcResource = 'nodereadinessrules';
/** The finalizer NRC holds on its rules until it has removed their taints. */
export const NrcFinalizer = 'readiness.node.x-k8s.io/cleanup-taints';
/** NRC marks a node's bootstrap-only rule as passed with `<prefix><rule uid>` (older releases: `<prefix><rule name>`). */
export const NrcCompletedPrefix = 'readiness.k8s.io/bootstrap-completed-';

/**
 * The node annotations that say NRC released a node for the rule a podlife rule was migrated
 * from: NRC's by uid, and by name as its older releases wrote it. None for a rule not migrated.
 */
export function nrcCompletionKeys(rule: NodeReadinessRule): string[] {
  const from = rule.metadata?.annotations?.[MigratedFromAnnotation];
  if (!from) return [];
  const slash = from.lastIndexOf('/');
  const name = slash < 0 ? from : from.slice(0, slash);
  const uid = slash < 0 ? '' : from.slice(slash + 1);
  return [...(uid ? [`${NrcCompletedPrefix}${uid}`] : []), ...(name ? [`${NrcCompletedPrefix}${name}`] : [])];
}

