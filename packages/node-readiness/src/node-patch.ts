/**
 * The one write per node: a JSON patch that carries the taint list change, the ownership record
 * and the completion record together, locked on the resourceVersion the decision was made from.
 *
 * Guarantees:
 * - all or nothing: the server applies every op or none, so a taint is never removed without its
 *   completion record (or added without its ownership record), and a failed write leaves the node
 *   exactly as it was for the retry to decide again;
 * - the whole taint list is replaced under the resourceVersion test, so taints written by others
 *   between our read and our write make the patch fail (and be recomputed) instead of being lost;
 * - no changes, no ops: an empty result means there is nothing to write;
 * - a change to a taint outside `readiness.k8s.io/` is dropped, whatever produced it.
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import { jsonPointer, resourceVersionTest, wireTime } from '@podlife/core';
import type { JsonPatchOp } from '@podlife/core';
import type { TaintChange } from './evaluate.js';
import { CompletedAnnotation, ManagedTaintsAnnotation, ReadinessTaintPrefix } from './names.js';
import { encodeMap, readCompletions, readManagedTaints } from './ownership.js';
import { taintId } from './rule.js';

/** The single JSON patch that applies `changes` to `node` (see the guarantees above). */
export function planNodePatch(node: V1Node, changes: readonly TaintChange[], nowMs: number): JsonPatchOp[] {
  if (changes.length === 0) return [];
  const before = node.spec?.taints ?? [];
  let taints: V1Taint[] = [...before];
  const owned = readManagedTaints(node);
  const completed = readCompletions(node);
  const ownedBefore = encodeMap(owned);
  const completedBefore = encodeMap(completed);
  let taintsChanged = false;

  for (const c of changes) {
    const id = taintId(c.taint);
    // The last line of defence: whatever decided it, a foreign taint is never written.
    if (!c.taint.key.startsWith(ReadinessTaintPrefix)) continue;
    if (c.op === 'add' && !taints.some((t) => taintId(t) === id)) {
      taints.push(c.taint);
      taintsChanged = true;
    }
    if (c.op === 'remove' && taints.some((t) => taintId(t) === id)) {
      taints = taints.filter((t) => taintId(t) !== id);
      taintsChanged = true;
    }
    if (c.source !== 'zero-config') {
      if (c.op === 'add' || c.op === 'adopt') owned.set(id, c.gate);
      else if (owned.get(id) === c.gate) owned.delete(id);
    }
    if (c.complete) completed.set(c.gate, wireTime(nowMs).toISOString().replace('.000Z', 'Z'));
  }

  const ops: JsonPatchOp[] = [];
  if (taintsChanged) {
    ops.push(node.spec?.taints ? { op: 'replace', path: '/spec/taints', value: taints } : { op: 'add', path: '/spec/taints', value: taints });
  }
  const annotations = node.metadata?.annotations;
  let annotationsAdded = false;
  const setAnnotation = (key: string, before: string | undefined, after: string | undefined): void => {
    if (before === after) return;
    if (after === undefined) {
      if (annotations && Object.hasOwn(annotations, key)) ops.push({ op: 'remove', path: jsonPointer('metadata', 'annotations', key) });
    } else if (!annotations && !annotationsAdded) {
      ops.push({ op: 'add', path: '/metadata/annotations', value: { [key]: after } });
      annotationsAdded = true;
    } else {
      ops.push({ op: 'add', path: jsonPointer('metadata', 'annotations', key), value: after });
    }
  };
  setAnnotation(ManagedTaintsAnnotation, ownedBefore, encodeMap(owned));
  setAnnotation(CompletedAnnotation, completedBefore, encodeMap(completed));
  if (ops.length === 0) return [];
  return [resourceVersionTest(node.metadata?.resourceVersion ?? ''), ...ops];
}
