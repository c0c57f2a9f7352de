/**
 * What the nodes that may run a pod support, as they declare it (DESIGN 3.8).
 *
 * Guarantees:
 * - the candidate nodes of a pod are the node it is bound to (`spec.nodeName`), else every node
 *   whose labels match its `nodeSelector`; affinity and taints are not read, so the set is never
 *   smaller than the scheduler's (a mechanism is used only when the whole set supports it);
 * - a feature counts as supported only when there is at least one candidate and every candidate
 *   lists it in `status.declaredFeatures` (KEP-5328; kubelets before 1.35, or with the
 *   NodeDeclaredFeatures gate off, declare nothing and so support nothing declared);
 * - pure; nothing a node reports makes these throw.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';

/** The name a kubelet declares (and the scheduler requires) for `RestartAllContainers` restart rules (KEP-5532). */
export const RESTART_ALL_CONTAINERS_FEATURE = 'RestartAllContainersOnContainerExits';

/** The nodes that may run `pod`: the one it is bound to, else those its nodeSelector matches. */
export function candidateNodes(pod: V1Pod, nodes: readonly V1Node[]): V1Node[] {
  const bound = pod.spec?.nodeName;
  if (typeof bound === 'string' && bound.length > 0) return nodes.filter((n) => n.metadata?.name === bound);
  const selector = pod.spec?.nodeSelector;
  if (!selector || typeof selector !== 'object') return [...nodes];
  const wanted = Object.entries(selector);
  return nodes.filter((n) => wanted.every(([k, v]) => n.metadata?.labels?.[k] === v));
}

/** True when `node` lists `feature` in `status.declaredFeatures`. */
export function nodeDeclares(node: V1Node, feature: string): boolean {
  const declared = node.status?.declaredFeatures;
  return Array.isArray(declared) && declared.includes(feature);
}

/** The candidate nodes that do not declare `feature` (names), or undefined when every one does and there is one. */
export function nodesLacking(pod: V1Pod, nodes: readonly V1Node[], feature: string): string[] | undefined {
  const candidates = candidateNodes(pod, nodes);
  if (candidates.length === 0) return [];
  const lacking = candidates.filter((n) => !nodeDeclares(n, feature)).map((n) => n.metadata?.name ?? '<unnamed>');
  return lacking.length > 0 ? lacking : undefined;
}
