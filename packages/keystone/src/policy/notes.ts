/**
 * What `podlife explain` says about roles: why each container is a sidecar or keystone (its own
 * annotation, a policy's match, or being native), which won when a policy and the pod disagreed,
 * and a pod a policy in force would have marked but which predates it (ADR 0268, 0269).
 *
 * Guarantees: pure; reads only the pod's annotations and spec (and, for the last note, the
 * policies and namespace labels given); never throws on odd objects.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { shellQuote } from '@podlife/core';
import { Annotation } from '../annotations.js';
import { applyPolicies, parseRecord } from './apply.js';
import { PolicyAnnotation, PolicyNamespaceLabel } from './names.js';
import type { CompiledPolicy } from './policy.js';

/** One line per container with a role: where it came from. */
export function roleNotes(pod: V1Pod): string[] {
  const annotations = pod.metadata?.annotations ?? {};
  const out: string[] = [];
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy !== 'Always') continue;
    const record = parseRecord(annotations[PolicyAnnotation.ContainerPrefix + c.name]);
    const made = annotations[Annotation.NativePrefix + c.name]?.includes('sidecar') ? ", made native by podlife's webhook" : '';
    out.push(`${c.name} is a native sidecar (an init container with restartPolicy Always${made})${record && !record.podWon ? `; its role came from policy ${record.policy}, match ${record.match}` : ''}`);
  }
  for (const c of pod.spec?.containers ?? []) {
    const own = annotations[Annotation.RolePrefix + c.name] ?? annotations[Annotation.AliasPrefix + c.name];
    const record = parseRecord(annotations[PolicyAnnotation.ContainerPrefix + c.name]);
    if (own === undefined && !record) continue;
    const stop = annotations[Annotation.StopPrefix + c.name];
    const how = stop ? `, stopped by ${stop}` : '';
    if (record && !record.podWon) out.push(`${c.name} is a ${own ?? 'main container'}${how}: from policy ${record.policy}, match ${record.match}`);
    else if (record) out.push(`${c.name} is a ${own ?? 'main container'}${how}: from the pod's own annotations, which won over policy ${record.policy}, match ${record.match} (set enforce: true on the policy to make it win)`);
    else {
      const key = annotations[Annotation.RolePrefix + c.name] !== undefined ? Annotation.RolePrefix + c.name : Annotation.AliasPrefix + c.name;
      out.push(`${c.name} is a ${own}${how}: from its annotation ${key}`);
    }
  }
  return out;
}

/**
 * A note when policies in force would mark this pod's containers but the pod carries no policy
 * record: it was created before the policy, or its namespace lacks the webhook's label.
 */
export function missedPolicyNotes(pod: V1Pod, policies: readonly CompiledPolicy[], namespaceLabels: Readonly<Record<string, string>> | undefined): string[] {
  if (pod.metadata?.annotations?.[PolicyAnnotation.Policies] !== undefined || policies.length === 0 || namespaceLabels === undefined) return [];
  const app = applyPolicies(pod, policies, { namespaceLabels });
  const marked = Object.keys(app.annotations).filter((k) => k.startsWith(PolicyAnnotation.ContainerPrefix) && !app.annotations[k]?.endsWith(':pod'));
  if (marked.length === 0) return [];
  const containers = marked.map((k) => k.slice(PolicyAnnotation.ContainerPrefix.length)).join(', ');
  const namespace = pod.metadata?.namespace ?? 'default';
  const reach =
    namespaceLabels[PolicyNamespaceLabel.key] === PolicyNamespaceLabel.value
      ? 'it was created before the policy applied; recreate it (a Job makes a new pod when this one is deleted) and the webhook marks the new one'
      : `namespace ${namespace} lacks the label ${PolicyNamespaceLabel.key}=${PolicyNamespaceLabel.value}, so the webhook never sees its pods: ${['kubectl', 'label', 'namespace', namespace, `${PolicyNamespaceLabel.key}=${PolicyNamespaceLabel.value}`].map(shellQuote).join(' ')}, then recreate the pod`;
  return [`policy ${app.applied.join(', ')} would mark container(s) ${containers}, but this pod carries no policy record: ${reach}`];
}
