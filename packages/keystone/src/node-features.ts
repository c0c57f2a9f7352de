/**
 * What the nodes that may run a pod support, as they declare it.
 *
 * Guarantees:
 * - the candidate nodes of a pod are the node it is bound to (`spec.nodeName`), else every node
 *   whose labels match its `nodeSelector`; affinity and taints are not read, so the set is never
 *   smaller than the scheduler's (a mechanism is used only when the whole set supports it);
 * - a feature counts as supported only when there is at least one candidate and every candidate
 *   lists it in `status.declaredFeatures` (KEP-5328; kubelets before 1.35, or with the
 *   NodeDeclaredFeatures gate off, declare nothing and so support nothing declared);
 * - pure; nothing a node reports makes these throw;
 * - a node list is read once: what it says (nodes by name, the nodes a selector picks, the answer
 *   for the whole list) is kept for as long as the list object lives, so an admission costs the
 *   same with 15,000 nodes as with 10. The list is taken as immutable: a caller whose nodes change
 *   passes a new array (the controller does, docs/adr/0182).
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';

/** The name a kubelet declares (and the scheduler requires) for `RestartAllContainers` restart rules (KEP-5532). */
export const RESTART_ALL_CONTAINERS_FEATURE = 'RestartAllContainersOnContainerExits';

/** What one node list says, read once per list object. */
interface ListIndex {
  /** Nodes by name (built on the first bound pod). */
  byName?: Map<string, V1Node[]>;
  /** The nodes each selector (canonical form) picks. */
  readonly bySelector: Map<string, readonly V1Node[]>;
  /** Answers about this very list, by question. */
  readonly answers: Map<string, unknown>;
}

const listIndexes = new WeakMap<readonly V1Node[], ListIndex>();
/** Distinct selectors kept per list; past it the oldest go (a list lives until its nodes change). */
const SELECTORS_KEPT = 256;

function indexOf(nodes: readonly V1Node[]): ListIndex {
  let index = listIndexes.get(nodes);
  if (!index) {
    index = { bySelector: new Map(), answers: new Map() };
    listIndexes.set(nodes, index);
  }
  return index;
}

/** `compute(nodes)`, worked out once per list object and question. */
export function perNodeList<T>(nodes: readonly V1Node[], question: string, compute: (nodes: readonly V1Node[]) => T): T {
  const answers = indexOf(nodes).answers;
  if (answers.has(question)) return answers.get(question) as T;
  const answer = compute(nodes);
  answers.set(question, answer);
  return answer;
}

function nodesNamed(nodes: readonly V1Node[], name: string): readonly V1Node[] {
  const index = indexOf(nodes);
  if (!index.byName) {
    index.byName = new Map();
    for (const n of nodes) {
      const key = n.metadata?.name;
      if (typeof key !== 'string') continue;
      const same = index.byName.get(key);
      if (same) same.push(n);
      else index.byName.set(key, [n]);
    }
  }
  return index.byName.get(name) ?? [];
}

function nodesSelected(nodes: readonly V1Node[], selector: Readonly<Record<string, string>>): readonly V1Node[] {
  const wanted = Object.entries(selector).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const key = JSON.stringify(wanted);
  const { bySelector } = indexOf(nodes);
  const known = bySelector.get(key);
  if (known) return known;
  const picked = nodes.filter((n) => wanted.every(([k, v]) => n.metadata?.labels?.[k] === v));
  if (bySelector.size >= SELECTORS_KEPT) bySelector.delete(bySelector.keys().next().value as string);
  bySelector.set(key, picked);
  return picked;
}

/**
 * The nodes that may run `pod`: the one it is bound to, else those its nodeSelector matches, else
 * `nodes` itself (the same array, so answers about the whole list are reused). Read-only.
 */
export function candidateNodes(pod: V1Pod, nodes: readonly V1Node[]): readonly V1Node[] {
  const bound = pod.spec?.nodeName;
  if (typeof bound === 'string' && bound.length > 0) return nodesNamed(nodes, bound);
  const selector = pod.spec?.nodeSelector;
  if (!selector || typeof selector !== 'object') return nodes;
  return nodesSelected(nodes, selector);
}

/** True when `node` lists `feature` in `status.declaredFeatures`. */
export function nodeDeclares(node: V1Node, feature: string): boolean {
  const declared = node.status?.declaredFeatures;
  return Array.isArray(declared) && declared.includes(feature);
}

/** The candidate nodes that do not declare `feature` (names), or undefined when every one does and there is one. */
export function nodesLacking(pod: V1Pod, nodes: readonly V1Node[], feature: string): readonly string[] | undefined {
  return perNodeList(candidateNodes(pod, nodes), `lacking ${feature}`, (candidates) => {
    if (candidates.length === 0) return [];
    const lacking = candidates.filter((n) => !nodeDeclares(n, feature)).map((n) => n.metadata?.name ?? '<unnamed>');
    return lacking.length > 0 ? Object.freeze(lacking) : undefined;
  });
}
