/**
 * Patch bodies for the Kubernetes API, each paired with the Content-Type that selects its
 * semantics on the server.
 *
 * Guarantees:
 * - JSON pointers escape every token (RFC 6901: '~' -> '~0' first, then '/' -> '~1'), so
 *   annotation keys such as `role.podlife.dev/app` address one member, not a nested path;
 * - annotation ops work whether or not `metadata.annotations` exists yet (an `add` into a
 *   missing object fails the whole patch, so the object itself is added instead);
 * - `resourceVersionTest` turns any JSON patch into an optimistically locked one: the server
 *   rejects it (422) when the object changed since it was read;
 * - `conditionsPatch` is a strategic-merge body: the server merges `status.conditions` by
 *   `type`, leaving conditions written by others (the kubelet, other controllers) in place.
 *   Strategic merge is understood only by built-in kinds (pods, nodes), not custom resources.
 */
import type { ConditionLike } from './conditions.js';

/** The Content-Types that select a patch's semantics on the API server. */
export const ContentType = {
  JsonPatch: 'application/json-patch+json',
  MergePatch: 'application/merge-patch+json',
  StrategicMergePatch: 'application/strategic-merge-patch+json',
  ApplyPatch: 'application/apply-patch+yaml',
} as const;

/** One RFC 6902 operation. */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'test' | 'move' | 'copy';
  path: string;
  value?: unknown;
  from?: string;
}

type MetadataWithAnnotations = { annotations?: Record<string, string> | null } | null | undefined;

/** One RFC 6901 reference token. The order matters: escaping '/' first would double-escape. */
export function escapePointerToken(token: string): string {
  // Most tokens (field names, indices, container names) hold neither character: no copy, no search state.
  if (token.indexOf('~') < 0 && token.indexOf('/') < 0) return token;
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** A JSON pointer from unescaped tokens; no tokens is '' (the whole document). */
export function jsonPointer(...tokens: (string | number)[]): string {
  let pointer = '';
  for (const token of tokens) pointer += '/' + escapePointerToken(String(token));
  return pointer;
}

/** Set annotation `key` to `value`, creating /metadata/annotations when the object has none. */
export function setAnnotationOps(metadata: MetadataWithAnnotations, key: string, value: string): JsonPatchOp[] {
  if (!metadata?.annotations) {
    return [{ op: 'add', path: '/metadata/annotations', value: { [key]: value } }];
  }
  // 'add' on an existing member replaces it (RFC 6902 4.1), so one op covers both cases.
  return [{ op: 'add', path: jsonPointer('metadata', 'annotations', key), value }];
}

/** Remove annotation `key`; no ops when it is absent (a 'remove' of a missing path fails the patch). */
export function removeAnnotationOps(metadata: MetadataWithAnnotations, key: string): JsonPatchOp[] {
  const annotations = metadata?.annotations;
  if (!annotations || !Object.hasOwn(annotations, key)) return [];
  return [{ op: 'remove', path: jsonPointer('metadata', 'annotations', key) }];
}

export function testOp(path: string, value: unknown): JsonPatchOp {
  return { op: 'test', path, value };
}

/** Put first in a JSON patch to apply it only if the object is still at `resourceVersion`. */
export function resourceVersionTest(resourceVersion: string): JsonPatchOp {
  return testOp('/metadata/resourceVersion', resourceVersion);
}

/** Strategic-merge body for pods/status or nodes/status: conditions merge by `type`. */
export function conditionsPatch(conditions: readonly ConditionLike[]): { status: { conditions: ConditionLike[] } } {
  return { status: { conditions: conditions.map((c) => ({ ...c })) } };
}
