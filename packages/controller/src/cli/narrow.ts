/**
 * Objects from the API server narrowed to what the CLI's renderers read, each field of the type
 * they expect: an API server can send anything (ADR 0260), and a malformed node renders as what
 * can be read of it instead of throwing.
 *
 * Guarantees: `narrowNode` never throws; it keeps the node's name, labels, annotations, taints and
 * conditions (what `evaluateNode` reads), strings as strings and anything else dropped: a label or
 * annotation whose value is not a string goes, a taint without a string key or effect gets `''`,
 * a condition without a string type goes.
 */
import type { V1Node, V1NodeCondition, V1Taint } from '@kubernetes/client-node';

type Loose = Record<string, unknown>;

const loose = (v: unknown): Loose => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Loose) : {});
const list = (v: unknown): Loose[] => (Array.isArray(v) ? v.map(loose) : []);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The string-valued entries of a map, or undefined when it is not one. */
function strings(v: unknown): Record<string, string> | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Copies the fields of `from` named in `keys` that are strings. */
function stringFields<K extends string>(from: Loose, keys: readonly K[]): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of keys) {
    const v = text(from[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

function taint(t: Loose): V1Taint {
  return { ...stringFields(t, ['value', 'timeAdded'] as const), key: text(t.key) ?? '', effect: text(t.effect) ?? '' } as V1Taint;
}

function condition(c: Loose): V1NodeCondition | undefined {
  const type = text(c.type);
  if (type === undefined) return undefined;
  return { ...stringFields(c, ['reason', 'message', 'lastTransitionTime', 'lastHeartbeatTime'] as const), type, status: text(c.status) ?? 'Unknown' } as V1NodeCondition;
}

/** `raw` as a V1Node whose every field `evaluateNode` reads has its declared type (see above). */
export function narrowNode(raw: unknown): V1Node {
  const node = loose(raw);
  const metadata = loose(node.metadata);
  const labels = strings(metadata.labels);
  const annotations = strings(metadata.annotations);
  return {
    metadata: { name: text(metadata.name) ?? '', ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    spec: { taints: list(loose(node.spec).taints).map(taint) },
    status: { conditions: list(loose(node.status).conditions).flatMap((c) => condition(c) ?? []) },
  };
}
