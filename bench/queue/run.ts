/**
 * WorkQueue benchmark: throughput (adds + gets per second) and heap per queued key, side by
 * side with a naive queue (an array for order, a Set for dedup) in the same run.
 *
 * Workloads, each at two queue depths:
 * - burst: add N distinct keys, then get and done each;
 * - churn: hold the queue at depth N; each step adds a key (half of them already queued, so
 *   dedup is exercised) and gets and finishes one.
 * Both queues are driven through the same async `get()`, so the difference is data structure.
 *
 * Re-runs itself with `--expose-gc` (steadier heap figures) and the `@podlife/source`
 * condition (so it measures the sources, not a possibly stale build).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { judge, loadAverage } from '../verdict.js';

interface BenchQueue {
  add(key: string): void;
  get(): Promise<string | undefined>;
  done(key: string): void;
  len(): number;
}

/** The obvious implementation: Array#shift is O(n) in the worst case, and no per-key state. */
class NaiveQueue implements BenchQueue {
  private readonly items: string[] = [];
  private readonly queued = new Set<string>();
  add(key: string): void {
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.items.push(key);
  }
  get(): Promise<string | undefined> {
    const key = this.items.shift();
    if (key !== undefined) this.queued.delete(key);
    return Promise.resolve(key);
  }
  done(_key: string): void {}
  len(): number {
    return this.items.length;
  }
}

function keys(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `namespace-${i % 97}/pod-${i}`);
}

async function burst(q: BenchQueue, ks: string[]): Promise<number> {
  for (const k of ks) q.add(k);
  for (let i = 0; i < ks.length; i++) {
    const k = (await q.get()) as string;
    q.done(k);
  }
  return ks.length * 2;
}

async function churn(q: BenchQueue, ks: string[], depth: number, steps: number): Promise<number> {
  for (let i = 0; i < depth; i++) q.add(ks[i] as string);
  let next = depth;
  for (let i = 0; i < steps; i++) {
    // Alternate a fresh key with one that is (usually) still queued: a dedup hit.
    const k = i % 2 === 0 ? (ks[next++ % ks.length] as string) : (ks[(next - depth / 2) % ks.length] as string);
    q.add(k);
    const got = (await q.get()) as string;
    q.done(got);
  }
  return steps * 2;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

async function opsPerSec(run: () => Promise<number>): Promise<number> {
  await run(); // warm-up
  gc();
  const start = performance.now();
  let ops = 0;
  let elapsed = 0;
  do {
    ops += await run();
    elapsed = performance.now() - start;
  } while (elapsed < 500);
  return (ops / elapsed) * 1000;
}

function bytesPerKey(make: () => BenchQueue, ks: string[]): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  const q = make();
  for (const k of ks) q.add(k);
  gc();
  const after = process.memoryUsage().heapUsed;
  if (q.len() !== ks.length) throw new Error('queue lost keys');
  return (after - before) / ks.length;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

async function main(): Promise<void> {
  const { WorkQueue } = await import('@podlife/core');
  const makeWork = (): BenchQueue => new WorkQueue<string>();
  const makeNaive = (): BenchQueue => new NaiveQueue();
  const rows: string[][] = [['workload', 'WorkQueue ops/s', 'naive ops/s', 'WorkQueue / naive']];
  let deepChurn: [number, number] = [NaN, NaN];

  for (const depth of [1_000, 100_000]) {
    const ks = keys(depth * 2);
    const burstKeys = ks.slice(0, depth);
    const steps = depth > 10_000 ? 50_000 : 200_000; // the naive queue is slow at depth
    const cases: [string, (q: BenchQueue) => Promise<number>][] = [
      [`burst  N=${fmt(depth)}`, (q) => burst(q, burstKeys)],
      [`churn  depth=${fmt(depth)}`, (q) => churn(q, ks, depth, steps)],
    ];
    for (const [name, run] of cases) {
      const work = await opsPerSec(() => run(makeWork()));
      const naive = await opsPerSec(() => run(makeNaive()));
      rows.push([name, fmt(work), fmt(naive), `${fmt(work / naive, 2)}x`]);
      if (name.startsWith('churn') && depth === 100_000) deepChurn = [work, naive];
    }
  }

  const delayed = keys(100_000);
  const delayOps = await opsPerSec(async () => {
    const q = new WorkQueue<string>();
    for (let i = 0; i < delayed.length; i++) q.addAfter(delayed[i] as string, 60_000 + ((i * 7919) % 10_000));
    q.shutDown();
    return delayed.length;
  });

  const memKeys = keys(200_000);
  const memWork = bytesPerKey(makeWork, memKeys);
  const memNaive = bytesPerKey(makeNaive, memKeys);

  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  console.log(`queue benchmark (Node ${process.version}, adds+gets per second, each get followed by done; ${loadAverage()})`);
  for (const r of rows) console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
  console.log(`addAfter into the delay heap, 100,000 keys: ${fmt(delayOps)} ops/s (WorkQueue only)`);
  console.log(
    `heap per queued key (200,000 keys, key strings excluded): WorkQueue ${fmt(memWork, 1)} B, naive ${fmt(memNaive, 1)} B` +
      ((globalThis as { gc?: unknown }).gc ? '' : ' (no --expose-gc: figures are noisy)'),
  );
  judge({ target: 'WorkQueue churn at depth 100,000, adds+gets/s', figure: `${fmt(deepChurn[0])}/s`, floor: `naive queue ${fmt(deepChurn[1])}/s`, ratio: `${fmt(deepChurn[0] / deepChurn[1], 2)}x` });
}

const CHILD = 'PODLIFE_QUEUE_BENCH_CHILD';
if (process.env[CHILD] === undefined) {
  const result = spawnSync(
    process.execPath,
    [...process.execArgv, '--expose-gc', '--conditions=@podlife/source', fileURLToPath(import.meta.url)],
    { stdio: 'inherit', env: { ...process.env, [CHILD]: '1' } },
  );
  process.exit(result.status ?? 1);
} else {
  await main();
}
