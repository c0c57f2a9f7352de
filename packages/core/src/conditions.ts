/**
 * Status conditions, read and written the way the API server's own controllers do.
 *
 * Guarantees:
 * - a condition list is keyed by `type`; helpers never reorder or drop other entries;
 * - `lastTransitionTime` moves only when `status` changes (or a type first appears), so it
 *   answers "since when has this been True/False" — reason/message updates do not reset it;
 * - inputs are never mutated: writers get a fresh list and a flag saying whether anything
 *   changed, so callers can skip a status write that would be a no-op.
 *
 * Works for any condition shape with `type` and `status` (V1PodCondition, V1NodeCondition,
 * custom resources). Time is a parameter (`nowMs`), never read from a clock.
 */
import { wireTime, type Time } from './time.js';

/** The status of a condition, as the API spells it. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** The fields every status condition has (pods, nodes, custom resources). */
export interface ConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: Time;
}

/** What a writer supplies: everything but the transition time, which setCondition owns. */
export type ConditionInput<C extends ConditionLike> = Omit<C, 'lastTransitionTime'>;

/** The condition of `type` in a list, if present. */
export function findCondition<C extends { type: string }>(
  conditions: readonly C[] | null | undefined,
  type: string,
): C | undefined {
  if (!conditions) return undefined;
  for (const c of conditions) if (c.type === type) return c;
  return undefined;
}

/**
 * The status of condition `type`, or undefined when the condition is absent. A present
 * condition with a status outside True/False/Unknown reads as 'Unknown': it exists, but says
 * nothing a caller can rely on.
 */
export function conditionStatus(
  conditions: readonly ConditionLike[] | null | undefined,
  type: string,
): ConditionStatus | undefined {
  const c = findCondition(conditions, type);
  if (c === undefined) return undefined;
  return c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
}

export function isConditionTrue(conditions: readonly ConditionLike[] | null | undefined, type: string): boolean {
  return conditionStatus(conditions, type) === 'True';
}

/** Equal in everything a reader acts on: type, status, reason and message (absent and '' differ). */
export function sameCondition(a: ConditionLike, b: ConditionLike): boolean {
  return a.type === b.type && a.status === b.status && a.reason === b.reason && a.message === b.message;
}

/**
 * Merge `next` into `conditions` by type. lastTransitionTime is kept when the status is
 * unchanged and set to `wireTime(nowMs)` when it changes or the type is new. When status,
 * reason and message are all equal, `changed` is false and the list is returned as an
 * untouched copy. Other conditions keep their order; a new type is appended.
 */
export function setCondition<C extends ConditionLike>(
  conditions: readonly C[] | null | undefined,
  next: ConditionInput<C>,
  nowMs: number,
): { conditions: C[]; condition: C; changed: boolean } {
  const list = conditions ? [...conditions] : [];
  const index = list.findIndex((c) => c.type === next.type);
  const existing = index >= 0 ? list[index] : undefined;

  if (existing !== undefined && sameCondition(existing, next)) {
    return { conditions: list, condition: existing, changed: false };
  }

  const statusChanged = existing === undefined || existing.status !== next.status;
  const lastTransitionTime =
    statusChanged || existing.lastTransitionTime === undefined ? wireTime(nowMs) : existing.lastTransitionTime;
  const condition = { ...next, lastTransitionTime } as C;

  if (index >= 0) list[index] = condition;
  else list.push(condition);
  return { conditions: list, condition, changed: true };
}
