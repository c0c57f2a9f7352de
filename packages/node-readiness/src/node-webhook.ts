/**
 * Taints at a node's birth: the answer to an AdmissionReview of a Node CREATE, adding the readiness
 * taints of the rules that select the new node, for node pools whose kubelet flags
 * (`--register-with-taints`) cannot be set. The node is tainted before any scheduler sees it.
 *
 * Guarantees (pure; the caller passes the rules in force):
 * - fails open: anything it cannot read, any error, rules not yet known — the node is admitted
 *   unchanged (with a warning), never refused; only CREATE of a core v1 Node is ever patched;
 * - never a taint outside `readiness.k8s.io/`, never one the node already carries (same key and
 *   effect), never for a dry-run rule, never on a control-plane node (the
 *   `node-role.kubernetes.io/control-plane` or `/master` label or taint);
 * - a rule waiting on another's release (`after`) still taints at birth: both gates hold the node.
 */
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import { ReadinessTaintPrefix } from './names.js';
import { taintId } from './rule.js';
import type { RuleSet } from './ruleset.js';
import { selectorMatches } from './selector.js';

/** Labels and taints that mark a control-plane node, which the webhook never taints. */
export const ControlPlaneKeys: readonly string[] = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

/** What a review answers: the HTTP status, and the body (an AdmissionReview, or an error for a malformed request). */
export interface NodeAdmission {
  status: number;
  body: unknown;
}

/** The readiness taints a new node should be born with under `set` (see the guarantees above). */
export function birthTaints(node: V1Node, set: RuleSet): V1Taint[] {
  const labels = node.metadata?.labels ?? {};
  const present = node.spec?.taints ?? [];
  if (ControlPlaneKeys.some((k) => Object.hasOwn(labels, k) || present.some((t) => t.key === k))) return [];
  const have = new Set(present.map(taintId));
  const out: V1Taint[] = [];
  for (const rule of set.active) {
    if (rule.dryRun || rule.suspended || !rule.taint.key.startsWith(ReadinessTaintPrefix)) continue;
    if (!selectorMatches(rule.selector, labels) || have.has(taintId(rule.taint))) continue;
    have.add(taintId(rule.taint));
    out.push({ key: rule.taint.key, effect: rule.taint.effect, ...(rule.taint.value ? { value: rule.taint.value } : {}) });
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The AdmissionReview answer for `body` (parsed JSON). `rules` is undefined until the rule cache
 * has synced: the node is then admitted unchanged.
 */
export function admitNode(body: unknown, rules: RuleSet | undefined): NodeAdmission {
  if (!isRecord(body) || body.apiVersion !== 'admission.k8s.io/v1' || body.kind !== 'AdmissionReview') {
    return { status: 400, body: { error: 'expected an admission.k8s.io/v1 AdmissionReview' } };
  }
  const request = body.request;
  if (!isRecord(request) || typeof request.uid !== 'string' || request.uid.length === 0) return { status: 400, body: { error: 'AdmissionReview has no request.uid' } };
  const answer = (response: Record<string, unknown>): NodeAdmission => ({
    status: 200,
    body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: request.uid, allowed: true, ...response } },
  });
  const kind = isRecord(request.kind) ? request.kind : {};
  if (kind.kind !== 'Node' || (kind.group ?? '') !== '' || request.operation !== 'CREATE') return answer({});
  if (!rules) return answer({ warnings: ['podlife: readiness rules not loaded yet; node admitted without readiness taints'] });
  try {
    const node = request.object as V1Node;
    if (!isRecord(node)) return answer({ warnings: ['podlife: no node in the request; admitted unchanged'] });
    const taints = birthTaints(node, rules);
    if (taints.length === 0) return answer({});
    const spec: unknown = node.spec;
    const ops = isRecord(spec) && Array.isArray(spec.taints)
      ? taints.map((t) => ({ op: 'add', path: '/spec/taints/-', value: t }))
      : [isRecord(spec) ? { op: 'add', path: '/spec/taints', value: taints } : { op: 'add', path: '/spec', value: { taints } }];
    return answer({ patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });
  } catch (err) {
    return answer({ warnings: [`podlife: node admitted without readiness taints: ${(err as Error).message}`.slice(0, 256)] });
  }
}
