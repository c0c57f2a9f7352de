/**
 * What a LifecyclePolicy's status says (ADR 0269), decided from the cluster's namespaces and the
 * other policies: a pure function, so the webhook's view of which policies are in force and the
 * status the controller writes can never disagree.
 *
 * Guarantees: a policy is in force only when it compiles and its selector selects none of the
 * cluster's own namespaces by their current labels; otherwise `Accepted=False` names the field
 * or the namespace and the webhook ignores it. Overlaps are judged the same way on every replica
 * and run: two accepted policies overlap when they select a common namespace and share a
 * container name or an image glob; the one first by name applies.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';
import { labelSelectorMatches } from '@podlife/core';
import type { LifecycleOptions } from '../annotations.js';
import { POLICY_FORBIDDEN_NAMESPACES, PolicyNamespaceLabel } from './names.js';
import { byPolicyName, compilePolicy, type CompiledPolicy, type LifecyclePolicy } from './policy.js';

/** A namespace as the policies see it: its name and labels. */
export interface NamespaceView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** One policy judged: in force (compiled) or not, with what its status reports. */
export interface PolicyJudgement {
  readonly name: string;
  readonly policy?: CompiledPolicy;
  readonly accepted: { readonly status: 'True' | 'False'; readonly reason: string; readonly message: string };
  readonly matchedNamespaces: number;
  readonly unlabelledNamespaces: number;
  /** Policies this one overlaps, each with the namespaces and containers they share. */
  readonly overlaps: readonly { readonly other: string; readonly namespaces: readonly string[]; readonly containers: readonly string[] }[];
}

function selected(selector: V1LabelSelector, namespaces: readonly NamespaceView[]): NamespaceView[] {
  return namespaces.filter((ns) => labelSelectorMatches(selector, ns.labels));
}

function shared(a: CompiledPolicy, b: CompiledPolicy): string[] {
  const out = new Set<string>();
  for (const ma of a.matches) {
    for (const mb of b.matches) {
      for (const n of ma.names) if (mb.names.includes(n)) out.add(n);
      for (const g of ma.images) if (mb.images.includes(g)) out.add(`image ${g}`);
    }
  }
  return [...out];
}

/** Every policy judged, in name order. `options.execCommands` are the controller's named commands. */
export function judgePolicies(policies: readonly LifecyclePolicy[], namespaces: readonly NamespaceView[], options: LifecycleOptions = {}): PolicyJudgement[] {
  type Draft = Omit<PolicyJudgement, 'overlaps'> & { readonly sel: NamespaceView[] };
  const judged: Draft[] = policies
    .map((p) => ({ raw: p, name: p.metadata?.name ?? '' }))
    .sort(byPolicyName)
    .map(({ raw, name }): Draft => {
      const compiled = compilePolicy(raw, options);
      const sel = raw.spec?.namespaceSelector && typeof raw.spec.namespaceSelector === 'object' ? selected(raw.spec.namespaceSelector, namespaces) : [];
      const counts = { matchedNamespaces: sel.length, unlabelledNamespaces: sel.filter((ns) => ns.labels[PolicyNamespaceLabel.key] !== PolicyNamespaceLabel.value).length };
      if (!compiled.ok) {
        const message = compiled.problems.map((p) => `${p.field}: ${p.message}`).join('; ');
        return { name, ...counts, sel, accepted: { status: 'False' as const, reason: 'InvalidSpec', message: message.slice(0, 2000) } };
      }
      const system = sel.find((ns) => POLICY_FORBIDDEN_NAMESPACES.includes(ns.name));
      if (system) {
        return { name, ...counts, sel, accepted: { status: 'False' as const, reason: 'SelectsSystemNamespace', message: `spec.namespaceSelector selects ${system.name} by its labels: a policy never covers the cluster's own namespaces; the policy is ignored` } };
      }
      const hint = counts.unlabelledNamespaces > 0 ? `; ${counts.unlabelledNamespaces} selected namespace(s) lack the label ${PolicyNamespaceLabel.key}=${PolicyNamespaceLabel.value}, so the webhook never sees their pods` : '';
      return { name, ...counts, sel, policy: compiled.policy, accepted: { status: 'True' as const, reason: 'Accepted', message: `the policy is in force${hint}` } };
    });
  return judged.map((j) => {
    const overlaps: PolicyJudgement['overlaps'][number][] = [];
    if (j.policy) {
      for (const k of judged) {
        if (k === j || !k.policy) continue;
        const names = new Set(k.sel.map((ns) => ns.name));
        const common = j.sel.filter((ns) => names.has(ns.name)).map((ns) => ns.name);
        const containers = common.length > 0 ? shared(j.policy, k.policy) : [];
        if (containers.length > 0) overlaps.push({ other: k.name, namespaces: common.slice(0, 5), containers });
      }
    }
    const { sel: _sel, ...rest } = j;
    return { ...rest, overlaps };
  });
}

/** The policies in force, in name order: what the webhook applies. */
export function policiesInForce(judgements: readonly PolicyJudgement[]): CompiledPolicy[] {
  return judgements.flatMap((j) => (j.policy ? [j.policy] : []));
}

/** The message of an overlap, naming both policies and which applies. */
export function overlapMessage(self: string, o: PolicyJudgement['overlaps'][number]): string {
  const [first, second] = self < o.other ? [self, o.other] : [o.other, self];
  return `policies ${first} and ${second} both select namespace(s) ${o.namespaces.join(', ')} and match ${o.containers.join(', ')}; ${first} applies to those containers (policies apply in name order)`;
}
