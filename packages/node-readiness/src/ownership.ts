/**
 * The node annotations that make node-readiness restartable: who owns which taint, and which
 * gates a node has passed.
 *
 * Guarantees: an ownership entry for a taint outside `readiness.k8s.io/` is never read (0092);
 * reading never throws — a malformed annotation (hand-edited, truncated) reads as
 * empty, which at worst makes the controller adopt a taint again, never strip one it does not own;
 * writing produces canonical JSON (sorted keys) so an unchanged record never causes a write.
 */
import type { V1Node } from '@kubernetes/client-node';
import { CompletedAnnotation, ManagedTaintsAnnotation, ReadinessTaintPrefix } from './names.js';

function readJsonMap(node: V1Node, key: string): Map<string, string> {
  const out = new Map<string, string>();
  const raw = node.metadata?.annotations?.[key];
  if (!raw) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out.set(k, v);
  return out;
}

/**
 * "key:effect" -> owning rule name, for taints under `readiness.k8s.io/` only. A node may edit
 * its own annotations but not its taints (NodeRestriction): an entry naming any other taint is
 * ignored, so no annotation can make a foreign taint removable.
 */
export function readManagedTaints(node: V1Node): Map<string, string> {
  const out = readJsonMap(node, ManagedTaintsAnnotation);
  for (const id of out.keys()) if (!isReadinessTaintId(id)) out.delete(id);
  return out;
}

/** True for a "key:effect" whose key is under the readiness prefix (and names something after it). */
export function isReadinessTaintId(id: string): boolean {
  const colon = id.lastIndexOf(':');
  const key = colon < 0 ? id : id.slice(0, colon);
  return key.startsWith(ReadinessTaintPrefix) && key.length > ReadinessTaintPrefix.length;
}

/** gate (rule name, or taint key in zero-config mode) -> RFC 3339 time it was passed. */
export function readCompletions(node: V1Node): Map<string, string> {
  return readJsonMap(node, CompletedAnnotation);
}

/** Canonical JSON for an annotation value, or undefined for an empty map (the annotation is dropped). */
export function encodeMap(map: ReadonlyMap<string, string>): string | undefined {
  if (map.size === 0) return undefined;
  const sorted = [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify(Object.fromEntries(sorted));
}
