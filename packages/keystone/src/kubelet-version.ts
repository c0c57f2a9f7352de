/**
 * Kubelet versions as nodes report them (`status.nodeInfo.kubeletVersion`), for deciding
 * whether native sidecars (init containers with restartPolicy Always, beta and on by default
 * from 1.29) can be relied on.
 *
 * Guarantees: vendor suffixes (`v1.29.3-gke.1`, `v1.30.0+k3s1`, `v1.28.5-eks-5e0fdde`) parse;
 * anything unreadable counts as too old, never as new enough.
 */
import type { V1Node } from '@kubernetes/client-node';
import { perNodeList } from './node-features.js';

export interface KubeletVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

export const NATIVE_SIDECARS_MIN: KubeletVersion = Object.freeze({ major: 1, minor: 29, patch: 0 });

function readInt(text: string, from: number): { value: number; end: number } | undefined {
  let end = from;
  while (end < text.length && end - from < 9) {
    const c = text.charCodeAt(end);
    if (c < 48 || c > 57) break;
    end++;
  }
  return end === from ? undefined : { value: Number(text.slice(from, end)), end };
}

/** `v1.29.3-gke.1` -> {1, 29, 3}; undefined when there is no major.minor. */
export function parseKubeletVersion(text: string | null | undefined): KubeletVersion | undefined {
  if (typeof text !== 'string') return undefined;
  const s = text.trim();
  let i = s.startsWith('v') || s.startsWith('V') ? 1 : 0;
  const major = readInt(s, i);
  if (!major || s[major.end] !== '.') return undefined;
  i = major.end + 1;
  const minor = readInt(s, i);
  if (!minor) return undefined;
  let patch = 0;
  if (s[minor.end] === '.') patch = readInt(s, minor.end + 1)?.value ?? 0;
  return { major: major.value, minor: minor.value, patch };
}

export function compareVersions(a: KubeletVersion, b: KubeletVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** True when there is at least one node and every node's kubelet is >= 1.29 (worked out once per list object). */
export function nodesSupportNativeSidecars(nodes: readonly V1Node[]): boolean {
  return perNodeList(nodes, 'native sidecars', allNativeSidecars);
}

function allNativeSidecars(nodes: readonly V1Node[]): boolean {
  if (nodes.length === 0) return false;
  for (const node of nodes) {
    const v = parseKubeletVersion(node.status?.nodeInfo?.kubeletVersion);
    if (!v || compareVersions(v, NATIVE_SIDECARS_MIN) < 0) return false;
  }
  return true;
}
