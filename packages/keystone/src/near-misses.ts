/**
 * Annotations podlife ignores although they were meant for it: a key whose prefix is a typo of a
 * known one (`roles.podlife.dev/proxy`, `podlife.dev/rol`, `podlife.dev/on-keystone-exti`), and a
 * stop spec on a container without a role in a pod without a keystone, which nothing ever uses.
 * Each is said aloud (`podlife explain`) instead of doing nothing in silence.
 *
 * Guarantees: pure; never reports a key podlife reads or writes; each finding names the key and,
 * for a typo, the key it is closest to (edit distance over the known prefixes and keys, at most 2
 * for a prefix and 3 for a whole key); at most NEAR_MISSES_MAX findings; never throws.
 */
import { Annotation } from './annotations.js';
import { PolicyAnnotation } from './policy/names.js';

/** Prefixes (with their `/`) of the per-container keys podlife reads or writes. */
const KNOWN_PREFIXES: readonly string[] = [Annotation.RolePrefix, Annotation.StopPrefix, Annotation.AliasPrefix, Annotation.NativePrefix, PolicyAnnotation.ContainerPrefix];
/** Whole keys podlife reads or writes (pod-conditions reads network-conditions). */
const KNOWN_KEYS: readonly string[] = [Annotation.OnKeystoneExit, Annotation.NativeSidecars, Annotation.Completion, PolicyAnnotation.Policies, 'podlife.dev/network-conditions'];
/** Per-container keys someone may write as `podlife.dev/<word>`. */
const CONTAINER_WORDS = [Annotation.RolePrefix, Annotation.StopPrefix];

/** Findings listed per pod, at most. */
export const NEAR_MISSES_MAX = 5;

/** Levenshtein distance, stopping early once it exceeds `max` (returns max + 1 then). */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      if (v < best) best = v;
    }
    if (best > max) return max + 1;
    prev = row;
  }
  return prev[b.length] as number;
}

function isKnown(key: string): boolean {
  return KNOWN_KEYS.includes(key) || KNOWN_PREFIXES.some((p) => key.startsWith(p) && key.length > p.length);
}

/** The known key `key` was most likely meant as, if it is close to one. */
export function nearestKnownKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash <= 0 || isKnown(key)) return undefined;
  const prefix = key.slice(0, slash + 1);
  const name = key.slice(slash + 1);
  let best: { key: string; distance: number } | undefined;
  const consider = (candidate: string, distance: number, max: number) => {
    if (distance <= max && distance > 0 && (!best || distance < best.distance)) best = { key: candidate, distance };
  };
  for (const known of KNOWN_KEYS) consider(known, editDistance(key, known, 3), 3);
  if (name.length > 0) for (const p of KNOWN_PREFIXES) consider(p + name, editDistance(prefix, p, 2), 2);
  // `podlife.dev/role` and friends: a per-container key written in the domain's own namespace.
  if (prefix === 'podlife.dev/') {
    for (const p of CONTAINER_WORDS) consider(`${p}<container>`, editDistance(name, p.slice(0, p.indexOf('.')), 2) + 1, 3);
  }
  return best?.key;
}

/** One line per annotation podlife ignores although it looks meant for podlife (see the guarantees). */
export function annotationNearMisses(annotations: Readonly<Record<string, string>> | undefined): string[] {
  if (!annotations || typeof annotations !== 'object') return [];
  const out: string[] = [];
  const keys = Object.keys(annotations);
  for (const key of keys) {
    const meant = nearestKnownKey(key);
    if (meant !== undefined) out.push(`annotation ${key} is not a podlife key and is ignored: did you mean ${meant}?`);
    else if (/(^|\.)podlife\.dev\//.test(key) && !isKnown(key)) out.push(`annotation ${key} is in the podlife.dev domain but is not a podlife key, and is ignored`);
  }
  const hasKeystone = keys.some((k) => (k.startsWith(Annotation.RolePrefix) || k.startsWith(Annotation.AliasPrefix)) && annotations[k] === 'keystone');
  if (!hasKeystone) {
    for (const key of keys) {
      if (!key.startsWith(Annotation.StopPrefix)) continue;
      const container = key.slice(Annotation.StopPrefix.length);
      if (annotations[Annotation.RolePrefix + container] !== undefined || annotations[Annotation.AliasPrefix + container] !== undefined) continue;
      out.push(
        `${key} is set but container ${container} has no role (${Annotation.RolePrefix}${container}: sidecar) and the pod has no keystone, so podlife never stops it and the stop spec is unused`,
      );
    }
  }
  return out.length <= NEAR_MISSES_MAX ? out : [...out.slice(0, NEAR_MISSES_MAX), `and ${out.length - NEAR_MISSES_MAX} more annotations podlife ignores`];
}
