/**
 * Label selectors over nodes: matching, and deciding whether two selectors can select the same node.
 *
 * Guarantees:
 * - `selectorMatches` follows metav1.LabelSelector exactly (matchLabels AND matchExpressions;
 *   In, NotIn, Exists, DoesNotExist); an unknown operator matches nothing, never everything;
 * - `selectorsMayOverlap` is conservative: it answers false only when some label key makes the
 *   two selectors provably disjoint, so two rules it calls disjoint can never fight over a node.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';

type Labels = Record<string, string> | null | undefined;

export function selectorMatches(selector: V1LabelSelector, labels: Labels): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (l[k] !== v) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, req.key);
    const value = l[req.key];
    switch (req.operator) {
      case 'In':
        if (!has || !(req.values ?? []).includes(value ?? '')) return false;
        break;
      case 'NotIn':
        if (has && (req.values ?? []).includes(value ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** What one selector says about one label key: the allowed values (undefined = any), or absence. */
interface KeyConstraint {
  mustExist: boolean;
  mustNotExist: boolean;
  allowed?: Set<string>;
  forbidden: Set<string>;
}

function constraints(selector: V1LabelSelector): Map<string, KeyConstraint> {
  const out = new Map<string, KeyConstraint>();
  const at = (key: string): KeyConstraint => {
    let c = out.get(key);
    if (!c) out.set(key, (c = { mustExist: false, mustNotExist: false, forbidden: new Set() }));
    return c;
  };
  const narrow = (c: KeyConstraint, values: string[]): void => {
    c.mustExist = true;
    c.allowed = c.allowed ? new Set(values.filter((v) => c.allowed?.has(v))) : new Set(values);
  };
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) narrow(at(k), [v]);
  for (const req of selector.matchExpressions ?? []) {
    const c = at(req.key);
    if (req.operator === 'In') narrow(c, req.values ?? []);
    else if (req.operator === 'NotIn') for (const v of req.values ?? []) c.forbidden.add(v);
    else if (req.operator === 'Exists') c.mustExist = true;
    else if (req.operator === 'DoesNotExist') c.mustNotExist = true;
  }
  return out;
}

function satisfiable(c: KeyConstraint): boolean {
  if (c.mustExist && c.mustNotExist) return false;
  if (c.allowed && [...c.allowed].every((v) => c.forbidden.has(v))) return false;
  return true;
}

export function selectorsMayOverlap(a: V1LabelSelector, b: V1LabelSelector): boolean {
  const ca = constraints(a);
  const cb = constraints(b);
  for (const [key, x] of ca) {
    const y = cb.get(key);
    if (!y) continue;
    const allowed = x.allowed && y.allowed ? new Set([...x.allowed].filter((v) => y.allowed?.has(v))) : (x.allowed ?? y.allowed);
    const joined: KeyConstraint = {
      mustExist: x.mustExist || y.mustExist,
      mustNotExist: x.mustNotExist || y.mustNotExist,
      ...(allowed ? { allowed } : {}),
      forbidden: new Set([...x.forbidden, ...y.forbidden]),
    };
    if (!satisfiable(joined)) return false;
  }
  return true;
}
