/**
 * Applying lifecycle policies to a pod at admission (ADR 0268): the annotations a user would
 * write, plus the records naming the policy and match that wrote them.
 *
 * Guarantees:
 * - pure and deterministic: policies apply in name order; the first policy whose match claims a
 *   container decides it, and a later one that would decide it differently is reported as a
 *   conflict naming both (never applied);
 * - the pod's own annotations win, container by container and key by key, unless the policy
 *   enforces; keys a policy wrote on an earlier pass (its record says so) count as the policy's,
 *   so a second pass (reinvocation) writes nothing new;
 * - a policy never leaves a pod without a main container: marks that would are dropped, with a
 *   warning;
 * - work is linear in the pod's containers times the policies' matches.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { labelSelectorMatches } from '@podlife/core';
import { Annotation } from '../annotations.js';
import type { CompiledMatch, CompiledPolicy } from './policy.js';
import { globMatches, imageRepository } from './policy.js';
import { PolicyAnnotation } from './names.js';

/** What the webhook knows besides the pod: the labels of its namespace. */
export interface PolicyContext {
  /**
   * The pod's namespace's labels; undefined when the namespace is not known (then no policy
   * applies). Read as immutable: which policies take them is kept per labels object.
   */
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
}

/** Two policies that wanted the same container differently: the first (by name) won. */
export interface PolicyConflict {
  readonly container: string;
  readonly winner: string;
  readonly loser: string;
}

/** The outcome: annotations to set (key -> value), which policies applied, conflicts and warnings. */
export interface PolicyApplication {
  readonly annotations: Readonly<Record<string, string>>;
  readonly applied: readonly string[];
  readonly conflicts: readonly PolicyConflict[];
  readonly warnings: readonly string[];
}

const NOTHING: PolicyApplication = Object.freeze({ annotations: {}, applied: [], conflicts: [], warnings: [] });

/** Does `policy` select this pod (namespace labels, pod labels, controlling owner's kind)? */
export function policySelects(policy: CompiledPolicy, pod: V1Pod, ctx: PolicyContext): boolean {
  if (ctx.namespaceLabels === undefined || !labelSelectorMatches(policy.namespaceSelector, ctx.namespaceLabels)) return false;
  return selectsPod(policy, pod);
}

/** The record value for a claim: `<policy>/<match>`, with `:pod` when the pod's own keys were kept. */
export function recordOf(policy: string, match: string, podWon: boolean): string {
  return `${policy}/${match}${podWon ? ':pod' : ''}`;
}

/** A record read back: the policy, the match and whether the pod's own annotations won. */
export function parseRecord(value: string | undefined): { policy: string; match: string; podWon: boolean } | undefined {
  if (typeof value !== 'string') return undefined;
  const podWon = value.endsWith(':pod');
  const body = podWon ? value.slice(0, -4) : value;
  const slash = body.lastIndexOf('/');
  if (slash <= 0 || slash === body.length - 1) return undefined;
  return { policy: body.slice(0, slash), match: body.slice(slash + 1), podWon };
}

interface Claim {
  /** The policy's index in the list. */
  readonly p: number;
  readonly policy: CompiledPolicy;
  readonly match: CompiledMatch;
}

/**
 * What a list of policies answers about the namespaces and containers it meets, worked out once
 * per list (the caches hand out the same array until a policy changes): the policies whose
 * namespace selector takes a namespace's labels (kept per labels object, which the namespace cache
 * hands out until the namespace changes), and for a container's name and image, each policy's
 * first match that claims it. Every match is found by name or by each distinct image glob tried
 * once, however many policies share the presets.
 */
interface PolicyIndex {
  readonly byName: ReadonlyMap<string, readonly MatchRef[]>;
  readonly globs: readonly { readonly glob: string; readonly refs: readonly MatchRef[] }[];
  readonly byNamespace: WeakMap<object, readonly number[]>;
  /** A container's name, then its image (or '') -> each policy's first claiming match, in policy order. */
  readonly byContainer: Map<string, Map<string, readonly MatchRef[]>>;
  /** Answers kept in byContainer. */
  kept: number;
}

/** Match `m` of policy `p` (indices into the list and into its matches). */
interface MatchRef {
  readonly p: number;
  readonly m: number;
}

const INDEXES = new WeakMap<readonly CompiledPolicy[], PolicyIndex>();
/** Distinct container names and images answered per list; past it the answers start over. */
const CONTAINERS_KEPT = 1024;
const NO_REFS: readonly MatchRef[] = Object.freeze([]);

function indexOf(policies: readonly CompiledPolicy[]): PolicyIndex {
  let index = INDEXES.get(policies);
  if (index) return index;
  const byName = new Map<string, MatchRef[]>();
  const globs = new Map<string, MatchRef[]>();
  policies.forEach((policy, p) =>
    policy.matches.forEach((match, m) => {
      for (const n of match.names) byName.set(n, [...(byName.get(n) ?? []), { p, m }]);
      for (const g of match.images) globs.set(g, [...(globs.get(g) ?? []), { p, m }]);
    }),
  );
  index = { byName, globs: [...globs].map(([glob, refs]) => ({ glob, refs })), byNamespace: new WeakMap(), byContainer: new Map(), kept: 0 };
  INDEXES.set(policies, index);
  return index;
}

/** The indices of the policies whose namespace selector takes `labels`, in order. */
function inNamespace(index: PolicyIndex, policies: readonly CompiledPolicy[], labels: Readonly<Record<string, string>>): readonly number[] {
  const known = index.byNamespace.get(labels);
  if (known) return known;
  const selected: number[] = [];
  for (let p = 0; p < policies.length; p++) if (labelSelectorMatches((policies[p] as CompiledPolicy).namespaceSelector, labels)) selected.push(p);
  index.byNamespace.set(labels, selected);
  return selected;
}

/** For each policy, in order, the first of its matches that claims container `c`. */
function firstMatches(index: PolicyIndex, c: V1Container): readonly MatchRef[] {
  // A container's fields come from the wire: anything but a string names nothing.
  const name = typeof c.name === 'string' ? c.name : '';
  const image = typeof c.image === 'string' && index.globs.length > 0 ? c.image : '';
  let refs = index.byContainer.get(name)?.get(image);
  if (refs) return refs;
  const first = new Map<number, number>();
  const take = (list: readonly MatchRef[]) => {
    for (const { p, m } of list) if ((first.get(p) ?? Infinity) > m) first.set(p, m);
  };
  const named = index.byName.get(name);
  if (named) take(named);
  if (image !== '') {
    const repo = imageRepository(image);
    for (const g of index.globs) if (globMatches(g.glob, repo)) take(g.refs);
  }
  refs = first.size === 0 ? NO_REFS : [...first].sort(([a], [b]) => a - b).map(([p, m]) => ({ p, m }));
  if (index.kept >= CONTAINERS_KEPT) {
    index.byContainer.clear();
    index.kept = 0;
  }
  let images = index.byContainer.get(name);
  if (!images) index.byContainer.set(name, (images = new Map()));
  images.set(image, refs);
  index.kept++;
  return refs;
}

/** The first claim of each container, and the conflicts of later ones; `selecting`: the indices of the policies that select the pod, ascending. */
function claims(containers: readonly V1Container[], all: readonly CompiledPolicy[], index: PolicyIndex, selecting: readonly number[]): { byContainer: Map<string, Claim>; conflicts: PolicyConflict[] } {
  const byContainer = new Map<string, Claim>();
  const conflicts: PolicyConflict[] = [];
  for (const c of containers) {
    // Both lists ascend: one walk finds the claiming policies that select the pod.
    let j = 0;
    for (const { p, m } of firstMatches(index, c)) {
      while (j < selecting.length && (selecting[j] as number) < p) j++;
      if (selecting[j] !== p) continue;
      const policy = all[p] as CompiledPolicy;
      const match = policy.matches[m] as CompiledMatch;
      const first = byContainer.get(c.name);
      if (!first) byContainer.set(c.name, { p, policy, match });
      else if (first.policy !== policy && (first.match.role !== match.role || first.match.stop !== match.stop)) {
        conflicts.push({ container: c.name, winner: first.policy.name, loser: policy.name });
      }
    }
  }
  return { byContainer, conflicts };
}

/** Does `policy` select this pod beyond its namespace (pod labels, controlling owner's kind)? */
function selectsPod(policy: CompiledPolicy, pod: V1Pod): boolean {
  if (policy.podSelector && !labelSelectorMatches(policy.podSelector, pod.metadata?.labels)) return false;
  if (policy.ownerKinds) {
    const owner = (pod.metadata?.ownerReferences ?? []).find((o) => o.controller === true) ?? pod.metadata?.ownerReferences?.[0];
    if (!owner || !policy.ownerKinds.includes(owner.kind)) return false;
  }
  return true;
}

/**
 * The annotations the policies that select `pod` write, in name order. `policies` must already
 * be sorted by name (see byPolicyName) and compiled.
 */
export function applyPolicies(pod: V1Pod, policies: readonly CompiledPolicy[], ctx: PolicyContext): PolicyApplication {
  if (policies.length === 0 || ctx.namespaceLabels === undefined) return NOTHING;
  const index = indexOf(policies);
  const candidates = inNamespace(index, policies, ctx.namespaceLabels);
  // Most policies select by namespace alone: the list of those that take it is then the answer.
  const selecting = candidates.every((p) => selectsPod(policies[p] as CompiledPolicy, pod)) ? candidates : candidates.filter((p) => selectsPod(policies[p] as CompiledPolicy, pod));
  if (selecting.length === 0) return NOTHING;
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  const { byContainer, conflicts } = claims(containers, policies, index, selecting);
  if (byContainer.size === 0) return conflicts.length === 0 ? NOTHING : { ...NOTHING, conflicts };
  const own = pod.metadata?.annotations ?? {};
  // A sidecar for every container leaves the pod no main container: drop those marks.
  let mains = 0;
  for (const c of containers) {
    const claim = byContainer.get(c.name);
    const role = claim && (claim.policy.enforce || !ownsContainer(own, c.name, claim)) ? claim.match.role : roleOf(own, c.name);
    if (role !== 'sidecar') mains++;
  }
  if (mains === 0) {
    return { ...NOTHING, conflicts, warnings: [`podlife: policy ${[...byContainer.values()][0]?.policy.name} would leave no main container (every container matched a sidecar); not applied`] };
  }
  // Only what changes: a second pass over a pod the policies already annotated writes nothing.
  const out: Record<string, string> = {};
  const put = (key: string, value: string): void => {
    if (own[key] !== value) out[key] = value;
    else if (key in out) delete out[key];
  };
  const applied: number[] = [];
  let nativeOff = false;
  for (const c of containers) {
    const claim = byContainer.get(c.name);
    if (!claim) continue;
    const { policy, match } = claim;
    if (!applied.includes(claim.p)) applied.push(claim.p);
    const podWon = !policy.enforce && ownsContainer(own, c.name, claim);
    put(PolicyAnnotation.ContainerPrefix + c.name, recordOf(policy.name, match.name, podWon));
    if (podWon) continue;
    put(Annotation.RolePrefix + c.name, match.role);
    put(Annotation.StopPrefix + c.name, match.stop);
    if (match.role === 'sidecar' && !match.nativeConversion) nativeOff = true;
  }
  const order = applied.sort((a, b) => a - b).map((p) => policies[p] as CompiledPolicy);
  podLevel(put, own, order, Annotation.Completion, 'completion');
  podLevel(put, own, order, Annotation.OnKeystoneExit, 'onKeystoneExit');
  if (nativeOff) put(Annotation.NativeSidecars, 'false');
  else podLevel(put, own, order, Annotation.NativeSidecars, 'nativeSidecars');
  const names = order.map((p) => p.name);
  put(PolicyAnnotation.Policies, names.join(','));
  return { annotations: out, applied: names, conflicts, warnings: NO_WARNINGS };
}

const NO_WARNINGS: readonly string[] = Object.freeze([]);

/** The role the pod's own annotations give a container, if any. */
function roleOf(own: Readonly<Record<string, string>>, name: string): string | undefined {
  return own[Annotation.RolePrefix + name] ?? own[Annotation.AliasPrefix + name];
}

/**
 * True when the pod carries its own role or stop key for the container: one the claiming
 * policy's record does not account for (a key it wrote on an earlier pass is the policy's).
 */
function ownsContainer(own: Readonly<Record<string, string>>, name: string, claim: Claim): boolean {
  const hasKeys = roleOf(own, name) !== undefined || own[Annotation.StopPrefix + name] !== undefined;
  if (!hasKeys) return false;
  const record = parseRecord(own[PolicyAnnotation.ContainerPrefix + name]);
  if (record && !record.podWon && record.policy === claim.policy.name && record.match === claim.match.name) return false;
  return true;
}

/** A pod-level key: the first policy (in order) that sets it, unless the pod set its own and none enforces. */
function podLevel(
  put: (key: string, value: string) => void,
  own: Readonly<Record<string, string>>,
  order: readonly CompiledPolicy[],
  key: string,
  field: 'completion' | 'onKeystoneExit' | 'nativeSidecars',
): void {
  for (const p of order) {
    const value = p[field];
    if (value === undefined) continue;
    // A value that differs from the policy's is the pod's own (the policy's would be equal).
    if (own[key] === undefined || p.enforce) put(key, value);
    return;
  }
}
