/**
 * One way for every benchmark to state a DESIGN 10 target: the figure, the floor measured in the
 * same run, their ratio, PASS or FAIL, and the machine's load average when it was judged.
 *
 * Guarantees: each call prints one `target:` line; when `bench/run.ts` started the benchmark
 * (it sets PODLIFE_BENCH_RESULTS to a file), the same verdict is appended there as one JSON line,
 * so `pnpm bench` can end with every target of every benchmark it ran. A line with `pass`
 * undefined is a figure without a DESIGN target (printed and summarised, never judged).
 */
import { appendFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

export const RESULTS_ENV = 'PODLIFE_BENCH_RESULTS';

export interface Verdict {
  /** The target as DESIGN 10 words it, e.g. "p99 <= 1.1x the watch delivery p99"; or what the figure is, without one. */
  target: string;
  /** The measured figure, with its unit. */
  figure: string;
  /** The floor from the same run, with its unit; absent for an absolute bound. */
  floor?: string;
  /** figure over floor (or the share it is of it), as printed. */
  ratio?: string;
  /** undefined: no DESIGN target, a figure for reading only. */
  pass?: boolean;
  /** Anything the reader needs to weigh the figure (sample size, what was left out). */
  note?: string;
}

export interface Recorded extends Verdict {
  /** One-minute load average when judged, and the number of CPUs. */
  load: number;
  cpus: number;
}

export const loadAverage = (): string => `load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs`;

const state = (pass: boolean | undefined): string => (pass === undefined ? 'no target' : pass ? 'PASS' : 'FAIL');

/** Prints the verdict and records it for the summary of `pnpm bench`; returns `pass` (true when there is no target). */
export function judge(v: Verdict): boolean {
  const against = v.floor === undefined ? '' : ` against ${v.floor}${v.ratio === undefined ? '' : ` = ${v.ratio}`}`;
  const note = v.note ? ` (${v.note})` : '';
  const head = v.pass === undefined ? `figure: ${v.target} (no DESIGN target)` : `target: ${v.target}: ${state(v.pass)}`;
  console.log(`${head}, ${v.figure}${against}${note}; ${loadAverage()}`);
  const file = process.env[RESULTS_ENV];
  if (file) {
    const recorded: Recorded = { ...v, load: loadavg()[0] ?? NaN, cpus: cpus().length };
    appendFileSync(file, `${JSON.stringify(recorded)}\n`);
  }
  return v.pass ?? true;
}

export const verdictState = state;

/** `x` as "1.23x". */
export const times = (x: number, digits = 2): string => `${x.toFixed(digits)}x`;

/** The p-th percentile of an ascending array (nearest rank, as every benchmark here computes it). */
export const percentile = (sorted: ArrayLike<number>, p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/**
 * Open-loop load: calls `fire(i)` for i in [0, total) at `rate` a second, each at its due time
 * whatever earlier calls still wait for (a slow answer never slows the sender), then waits for all.
 */
export async function openLoop(rate: number, total: number, fire: (i: number) => Promise<unknown>): Promise<void> {
  const inflight: Promise<unknown>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(fire(i));
  }
  await Promise.all(inflight);
}

/** Closed-loop work: `fn` over every item, at most `concurrency` of them in flight at once. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (i < items.length) await fn(items[i++] as T);
  }));
}
