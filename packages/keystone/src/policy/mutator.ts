/**
 * The webhook's mutation with lifecycle policies in front (ADR 0268, 0269): the policies that
 * select the pod write their annotations first, then the usual lifecycle mutation runs on the pod
 * as those annotations leave it, so conversion, labels and records work unchanged.
 *
 * Guarantees: a pod no policy selects is handed to the inner mutation untouched (the same
 * object); the annotation ops come first in the patch and create `/metadata/annotations` when the
 * pod has none; conflicts between policies and marks a policy had to drop come back as admission
 * warnings naming the policies.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { jsonPointer, type JsonPatchOp } from '@podlife/core';
import type { AdmissionOptions, MutateResult } from '../webhook/admission.js';
import { readsLifecycleFields, readsOnlyLifecycleFields } from '../webhook/decode.js';
import { applyPolicies, type PolicyApplication } from './apply.js';
import type { CompiledPolicy } from './policy.js';

/** Where the webhook reads the policies (sorted by name) and namespace labels from: the controller's caches. */
export interface PolicySource {
  policies(): readonly CompiledPolicy[];
  namespaceLabels(namespace: string): Readonly<Record<string, string>> | undefined;
}

/** JSON patch ops adding `entries` to the pod's annotations (creating the map when absent). */
export function annotationOps(pod: V1Pod, entries: Readonly<Record<string, string>>): JsonPatchOp[] {
  return annotationOpsOf(pod, entries, Object.keys(entries));
}

/** `annotationOps` for `keys`, the keys of `entries`. */
function annotationOpsOf(pod: V1Pod, entries: Readonly<Record<string, string>>, keys: readonly string[]): JsonPatchOp[] {
  if (keys.length === 0) return [];
  if (!pod.metadata?.annotations) return [{ op: 'add', path: '/metadata/annotations', value: { ...entries } }];
  return keys.map((key) => ({ op: 'add', path: annotationPath(key), value: entries[key] }));
}

/** `/metadata/annotations/<key>`, escaped (RFC 6901); an annotation key holds '/' and seldom '~'. */
function annotationPath(key: string): string {
  return key.indexOf('~') < 0 ? `/metadata/annotations/${key.replaceAll('/', '~1')}` : `/metadata/annotations${jsonPointer(key)}`;
}

/** The admission warnings of an application: conflicts (both policies named) and dropped marks. */
export function applicationWarnings(app: PolicyApplication): string[] {
  const out = [...app.warnings];
  for (const c of app.conflicts) out.push(`podlife: policies ${c.winner} and ${c.loser} both match container ${c.container}; ${c.winner} applies (policies apply in name order)`);
  return out;
}

/** `inner` with the policies of `source` applied first. */
export function withPolicies(inner: AdmissionOptions['mutate'], source: PolicySource): AdmissionOptions['mutate'] {
  // Policies read a pod's labels, owners and containers' names and images (decode.ts lists them).
  const mutate: AdmissionOptions['mutate'] = (pod, request) => {
    const policies = source.policies();
    if (policies.length === 0 || request.operation === 'UPDATE') return inner(pod, request);
    const namespace = request.namespace ?? pod.metadata?.namespace;
    const app = applyPolicies(pod, policies, { namespaceLabels: namespace ? source.namespaceLabels(namespace) : undefined });
    const keys = Object.keys(app.annotations);
    if (keys.length === 0 && app.conflicts.length === 0 && app.warnings.length === 0) return inner(pod, request);
    const annotated: V1Pod = keys.length === 0 ? pod : { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, ...app.annotations } } };
    const out = inner(annotated, request);
    const result: MutateResult = Array.isArray(out) ? { ops: out as readonly JsonPatchOp[] } : (out as MutateResult);
    if (result.deny !== undefined) return result;
    // One list at its size: the annotations first (they may create the map the records go into).
    const ops = annotationOpsOf(pod, app.annotations, keys).concat(result.ops ?? []);
    if (app.conflicts.length === 0 && app.warnings.length === 0) return result.warnings ? { ops, warnings: result.warnings } : { ops };
    const warnings = applicationWarnings(app);
    for (const w of result.warnings ?? []) warnings.push(w);
    return { ops, warnings };
  };
  return readsOnlyLifecycleFields(inner) ? readsLifecycleFields(mutate) : mutate;
}
