/**
 * `pnpm bench -- --repeat N`: the targets of N consecutive runs of a benchmark, one row each.
 *
 * Guarantees: a target is the same target in every run when its benchmark and its wording match
 * (the n-th line of that wording in a run, should one run judge it twice); each row gives the
 * ratio (or, for an absolute bound, the figure) as min / median / max over the runs that
 * measured it, each run's verdict in order, and a verdict on the worst run: PASS only when every
 * run passed, FAIL when any failed or measured nothing (a run that crashed before judging a
 * target its other runs judged counts as a failure, never as a gap). The worst run is a failing
 * one where there is one, else the one nearest its bound: the lowest figure for a `>=` target,
 * the highest for every other.
 */
import type { Recorded } from './verdict.js';

/** One run's targets, as `bench/verdict.ts` recorded them. */
export type Run = readonly Recorded[];

export interface RepeatedTarget {
  benchmark: string;
  target: string;
  /** One value per run in order: the leading number of the ratio (or figure); undefined where that run did not judge it or gave no number. */
  values: (number | undefined)[];
  /** One per run: true/false, undefined where the target has no DESIGN bound, null where the run did not judge it. */
  verdicts: (boolean | undefined | null)[];
  min: number | undefined;
  median: number | undefined;
  max: number | undefined;
  /** Index of the worst run (0-based). */
  worst: number;
  /** The verdict on the worst run; undefined for a figure without a target. */
  pass: boolean | undefined;
  /** What the numbers are: the ratio's unit as printed (e.g. "x", "%"), or the figure's. */
  unit: string;
  /** The lowest and highest one-minute load average over the runs that judged it. */
  load: [number, number];
}

/**
 * The first number in `text` that stands as a word of its own ("1.13x" -> 1.13, "p99 2.41 ms" ->
 * 2.41, "+49 MiB" -> 49), and what follows it up to a space. Digits inside a word are a name,
 * not a figure: the 99 of "p99" is never read.
 */
export function leadingNumber(text: string | undefined): { value: number; unit: string } | undefined {
  const m = /(?<![\w.])(-?\d[\d,]*(?:\.\d+)?)\s*([a-zA-Z%/]*)/.exec(text ?? '');
  if (!m) return undefined;
  const value = Number((m[1] as string).replaceAll(',', ''));
  return Number.isFinite(value) ? { value, unit: m[2] ?? '' } : undefined;
}

/** True when a higher figure is the better one (the target's wording says `>=`). */
export const higherIsBetter = (target: string): boolean => target.includes('>=');

function median(sorted: number[]): number | undefined {
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Every target judged in any of `runs` (one benchmark's N runs), in the order first seen. */
export function aggregate(benchmark: string, runs: readonly Run[]): RepeatedTarget[] {
  // The n-th line of one wording in a run is the same target as the n-th in every other run.
  const keyed = runs.map((run) => {
    const seen = new Map<string, number>();
    return run.map((v) => {
      const n = seen.get(v.target) ?? 0;
      seen.set(v.target, n + 1);
      return { key: `${n}\u0000${v.target}`, v };
    });
  });
  const order: string[] = [];
  for (const run of keyed) for (const { key } of run) if (!order.includes(key)) order.push(key);
  return order.map((key) => {
    const found = keyed.map((run) => run.find((r) => r.key === key)?.v);
    const target = (found.find((v) => v !== undefined) as Recorded).target;
    const parsed = found.map((v) => (v === undefined ? undefined : (leadingNumber(v.ratio) ?? leadingNumber(v.figure))));
    const values = parsed.map((p) => p?.value);
    const judged = found.some((v) => v !== undefined && v.pass !== undefined);
    const verdicts = found.map((v) => (v === undefined ? (judged ? false : null) : v.pass));
    const numbers = values.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
    const worst = worstRun(values, verdicts, higherIsBetter(target));
    const loads = found.filter((v): v is Recorded => v !== undefined).map((v) => v.load);
    return {
      benchmark,
      target,
      values,
      verdicts,
      min: numbers[0],
      median: median(numbers),
      max: numbers[numbers.length - 1],
      worst,
      pass: judged ? verdicts.every((p) => p === true) : undefined,
      unit: parsed.find((p) => p !== undefined)?.unit ?? '',
      load: [Math.min(...loads), Math.max(...loads)],
    };
  });
}

/** The failing run with the figure furthest past its bound (or the first that measured nothing), else the run nearest its bound. */
function worstRun(values: (number | undefined)[], verdicts: (boolean | undefined | null)[], higherBetter: boolean): number {
  const failing = verdicts.map((p, i) => (p === false ? i : -1)).filter((i) => i >= 0);
  const pool = failing.length > 0 ? failing : values.map((_, i) => i);
  const missing = pool.find((i) => values[i] === undefined);
  if (failing.length > 0 && missing !== undefined) return missing;
  let worst = pool.find((i) => values[i] !== undefined) ?? pool[0] ?? 0;
  for (const i of pool) {
    const v = values[i];
    if (v === undefined) continue;
    if (higherBetter ? v < (values[worst] as number) : v > (values[worst] as number)) worst = i;
  }
  return worst;
}

const number = (x: number | undefined, unit: string): string => {
  if (x === undefined) return '-';
  const digits = x.toLocaleString('en-US', { maximumFractionDigits: 3 });
  return unit === 'x' || unit === '%' || unit === '' ? `${digits}${unit}` : `${digits} ${unit}`;
};
const state = (p: boolean | undefined | null): string => (p === null ? 'none' : p === undefined ? '-' : p ? 'PASS' : 'FAIL');

/** The rows as printed: benchmark, target, min / median / max, each run's verdict, the verdict on the worst run, load. */
export function formatRepeated(rows: readonly RepeatedTarget[]): string[][] {
  return rows.map((r) => [
    r.benchmark,
    r.target,
    `${number(r.min, r.unit)} / ${number(r.median, r.unit)} / ${number(r.max, r.unit)}`,
    r.verdicts.map(state).join(' '),
    r.pass === undefined ? 'no target' : `${r.pass ? 'PASS' : 'FAIL'} (worst: run ${r.worst + 1}, ${number(r.values[r.worst], r.unit)})`,
    `load ${r.load[0].toFixed(1)}-${r.load[1].toFixed(1)}`,
  ]);
}
