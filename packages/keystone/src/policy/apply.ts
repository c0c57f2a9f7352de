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

/** Does `match` claim this container (by name, or by its image's repository)? */
export function matchClaims(match: CompiledMatch, c: V1Container): boolean {
  if (match.names.includes(c.name)) return true;
  if (match.images.length === 0 || typeof c.image !== 'string') return false;
  const repo = imageRepository(c.image);
  return match.images.some((g) => globMatches(g, repo));
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

/** The first claim of each container, and the conflicts of later ones. */
function claims(containers: readonly V1Container[], policies: readonly CompiledPolicy[]): { byContainer: Map<string, Claim>; conflicts: PolicyConflict[] } {
  const byContainer = new Map<string, Claim>();
  const conflicts: PolicyConflict[] = [];
  for (const c of containers) {
    for (const policy of policies) {
      const match = policy.matches.find((m) => matchClaims(m, c));
      if (!match) continue;
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
  const selecting = policies.filter((p) => policySelects(p, pod, ctx));
  if (selecting.length === 0) return NOTHING;
  const containers = Array.isArray(pod.spec?.containers) ? pod.spec.containers : [];
  const { byContainer, conflicts } = claims(containers, selecting);
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
