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
  /** The pod's namespace's labels; undefined when the namespace is not known (then no policy applies). */
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
  if (policy.podSelector && !labelSelectorMatches(policy.podSelector, pod.metadata?.labels)) return false;
  if (policy.ownerKinds) {
    const owner = (pod.metadata?.ownerReferences ?? []).find((o) => o.controller === true) ?? pod.metadata?.ownerReferences?.[0];
    if (!owner || !policy.ownerKinds.includes(owner.kind)) return false;
  }
  return true;
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
  readonly policy: CompiledPolicy;
  readonly match: CompiledMatch;
}

/**
 * Every match of a list of policies by container name, and each distinct image glob once with the
 * matches that use it: a container is looked up by its name and its repository is tried against
 * each glob once, however many policies share the presets. Built once per list (the caches hand
 * out the same array until a policy changes).
 */
interface PolicyIndex {
  readonly byName: ReadonlyMap<string, readonly MatchRef[]>;
  readonly globs: readonly { readonly glob: string; readonly refs: readonly MatchRef[] }[];
}

/** Match `m` of policy `p` (indices into the list and into its matches). */
interface MatchRef {
  readonly p: number;
  readonly m: number;
}

const INDEXES = new WeakMap<readonly CompiledPolicy[], PolicyIndex>();

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
  index = { byName, globs: [...globs].map(([glob, refs]) => ({ glob, refs })) };
  INDEXES.set(policies, index);
  return index;
}

/** For each policy (by index), the first of its matches that claims container `c`. */
function firstMatches(index: PolicyIndex, c: V1Container): Map<number, number> {
  const first = new Map<number, number>();
  const take = (refs: readonly MatchRef[]) => {
    for (const { p, m } of refs) if ((first.get(p) ?? Infinity) > m) first.set(p, m);
  };
  const named = index.byName.get(c.name);
  if (named) take(named);
  if (typeof c.image === 'string' && index.globs.length > 0) {
    const repo = imageRepository(c.image);
    for (const g of index.globs) if (globMatches(g.glob, repo)) take(g.refs);
  }
  return first;
}

/** The first claim of each container, and the conflicts of later ones. */
function claims(containers: readonly V1Container[], all: readonly CompiledPolicy[], selecting: readonly boolean[]): { byContainer: Map<string, Claim>; conflicts: PolicyConflict[] } {
  const byContainer = new Map<string, Claim>();
  const conflicts: PolicyConflict[] = [];
  const index = indexOf(all);
  for (const c of containers) {
    const candidates = firstMatches(index, c);
    if (candidates.size === 0) continue;
    for (let p = 0; p < all.length; p++) {
      const m = candidates.get(p);
      if (m === undefined || !selecting[p]) continue;
      const policy = all[p] as CompiledPolicy;
      const match = policy.matches[m] as CompiledMatch;
      const first = byContainer.get(c.name);
      if (!first) byContainer.set(c.name, { policy, match });
      else if (first.policy !== policy && (first.match.role !== match.role || first.match.stop !== match.stop)) {
        conflicts.push({ container: c.name, winner: first.policy.name, loser: policy.name });
      }
    }
  }
  return { byContainer, conflicts };
}

/**
 * The annotations the policies that select `pod` write, in name order. `policies` must already
 * be sorted by name (see byPolicyName) and compiled.
 */
export function applyPolicies(pod: V1Pod, policies: readonly CompiledPolicy[], ctx: PolicyContext): PolicyApplication {
  if (policies.length === 0) return NOTHING;
  const selects = policies.map((p) => policySelects(p, pod, ctx));
  if (!selects.includes(true)) return NOTHING;
  const selecting = policies.filter((_, i) => selects[i]);
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  const { byContainer, conflicts } = claims(containers, policies, selects);
  if (byContainer.size === 0) return { ...NOTHING, conflicts };
  const own = pod.metadata?.annotations ?? {};
  const out: Record<string, string> = {};
  const warnings: string[] = [];
  const applied = new Set<string>();
  // A sidecar for every container leaves the pod no main container: drop those marks.
  const mains = containers.filter((c) => {
    const claim = byContainer.get(c.name);
    const role = claim && (claim.policy.enforce || !ownsContainer(own, c.name, claim)) ? claim.match.role : roleOf(own, c.name);
    return role !== 'sidecar';
  });
  if (mains.length === 0) {
    return { ...NOTHING, conflicts, warnings: [`podlife: policy ${[...byContainer.values()][0]?.policy.name} would leave no main container (every container matched a sidecar); not applied`] };
  }
  let nativeOff = false;
  for (const c of containers) {
    const claim = byContainer.get(c.name);
    if (!claim) continue;
    const { policy, match } = claim;
    applied.add(policy.name);
    const podWon = !policy.enforce && ownsContainer(own, c.name, claim);
    out[PolicyAnnotation.ContainerPrefix + c.name] = recordOf(policy.name, match.name, podWon);
    if (podWon) continue;
    out[Annotation.RolePrefix + c.name] = match.role;
    out[Annotation.StopPrefix + c.name] = match.stop;
    if (match.role === 'sidecar' && !match.nativeConversion) nativeOff = true;
  }
  const order = selecting.filter((p) => applied.has(p.name));
  podLevel(out, own, order, Annotation.Completion, (p) => p.completion);
  podLevel(out, own, order, Annotation.OnKeystoneExit, (p) => p.onKeystoneExit);
  if (nativeOff) out[Annotation.NativeSidecars] = 'false';
  else podLevel(out, own, order, Annotation.NativeSidecars, (p) => p.nativeSidecars);
  out[PolicyAnnotation.Policies] = order.map((p) => p.name).join(',');
  // Only what changes: a second pass over a pod the policies already annotated writes nothing.
  for (const key of Object.keys(out)) if (own[key] === out[key]) delete out[key];
  return { annotations: out, applied: order.map((p) => p.name), conflicts, warnings };
}

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
function podLevel(out: Record<string, string>, own: Readonly<Record<string, string>>, order: readonly CompiledPolicy[], key: string, value: (p: CompiledPolicy) => string | undefined): void {
  const setter = order.find((p) => value(p) !== undefined);
  if (!setter) return;
  // A value that differs from the policy's is the pod's own (the policy's would be equal).
  if (own[key] !== undefined && !setter.enforce) return;
  out[key] = value(setter) as string;
}
