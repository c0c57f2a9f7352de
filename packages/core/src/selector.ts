/**
 * metav1.LabelSelector matching, for every package that selects objects by their labels.
 *
 * Guarantees: matchLabels AND matchExpressions (In, NotIn, Exists, DoesNotExist) exactly as the
 * API server reads them; an unknown operator, or a selector that is not an object, matches
 * nothing, never everything; only own properties of the labels are read.
 */
import type { V1LabelSelector } from '@kubernetes/client-node';

/** True when `labels` satisfy `selector` (an empty selector matches every object, as in the API). */
export function labelSelectorMatches(selector: V1LabelSelector, labels: Readonly<Record<string, string>> | null | undefined): boolean {
  if (typeof selector !== 'object' || selector === null) return false;
  const l = labels ?? {};
  const value = (key: string): string | undefined => (Object.hasOwn(l, key) ? l[key] : undefined);
  const matchLabels = selector.matchLabels;
  if (matchLabels) {
    for (const k in matchLabels) {
      if (Object.hasOwn(matchLabels, k) && value(k) !== matchLabels[k]) return false;
    }
  }
  for (const req of selector.matchExpressions ?? []) {
    const v = value(req.key);
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (v === undefined || !values.includes(v)) return false;
        break;
      case 'NotIn':
        if (v !== undefined && values.includes(v)) return false;
        break;
      case 'Exists':
        if (v === undefined) return false;
        break;
      case 'DoesNotExist':
        if (v !== undefined) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}
