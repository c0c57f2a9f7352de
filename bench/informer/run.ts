/**
 * Informer cache benchmark: memory of an `Informer<V1Pod>` holding 150,000 pods (Kubernetes'
 * tested maximum per cluster), without a transform, with `stripManagedFields` and with a
 * lifecycle-controller view, against the raw JSON size of the same pods.
 *
 * Targets (DESIGN 10, lifecycle view at 150k pods): peak RSS during the initial sync <= 1.15x the
 * steady RSS (also printed as a share of the raw JSON, which does not move with the steady state); steady RSS <= 30% of the raw JSON; and < 1 GiB RSS with any transform. `optIn`
 * (DESIGN 3.7): the lifecycle view of only the 5% of pods labelled podlife.dev/managed=true,
 * RSS < 150 MiB, read against the empty-list process.
 *
 * How: this process serves generated pods on loopback as the API server would (a streaming list,
 * or with `--sync list` a 422 for it and a paged list, then an idle watch); each variant runs in
 * a fresh child process (`--expose-gc`) that syncs a real `Informer` over a real `KubeClient`,
 * collects garbage and reports its memory. A baseline child syncs an empty list with the same
 * code loaded, so per-pod figures exclude the runtime itself.
 *
 * Each child runs with the young generation cap the shipped Deployment sets (`--max-semi-space-size`,
 * ADR 0248), as the controller does; `--semi-space-mib 0` leaves V8's default instead.
 *
 * `--nodes N` has the API also serve N generated Nodes (nodes.ts), and the controller's variants
 * (keystone, keystoneManaged, keystoneAndNetwork) then also hold the controller's node caches
 * (ADR 0254); the other variants and the baselines never list nodes.
 *
 *   tsx bench/informer/run.ts [--pods N] [--nodes N] [--quick] [--variants none,stripManagedFields,lifecycleView,optIn] [--heap-mib M] [--limit-mib L] [--sync stream|list] [--semi-space-mib S]
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPT_IN_EVERY, startFakePodApi } from './api.js';
import { node } from './nodes.js';
import { pod } from './pods.js';
import type { Measurement, PeakSample, Variant } from './measure.js';
import { SEMI_SPACE_MIB } from '@podlife/controller';
import { judge } from '../verdict.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const FULL_PODS = 150_000;
/** As many as nodes.ts has addresses for (Kubernetes documents 5,000 nodes per cluster). */
const MAX_NODES = 30_000;
const QUICK_PODS = 10_000;
const TARGET_RSS = 1024 ** 3;
const TARGET_PEAK_OVER_STEADY = 1.15;
const TARGET_STEADY_OVER_RAW = 0.3;
const IDLE_MS = 10_000;
const TARGET_OPT_IN_RSS = 150 * 1024 ** 2;
const VARIANTS: Variant[] = ['baseline', 'none', 'stripManagedFields', 'lifecycleView', 'optIn'];
/** Run only when named: the controller's own caches, for deploy/README.md's sizing table. */
const SIZING: Variant[] = ['keystone', 'keystoneManaged', 'keystoneAndNetwork'];

type Sync = 'stream' | 'list';

const isBaseline = (v: Variant): boolean => v === 'baseline' || v === 'baselineController';

function parseArgs(argv: string[]): { pods: number; nodes: number; variants: Variant[]; heapMiB: number | undefined; limitMiB: number | undefined; sync: Sync; semiSpaceMiB: number } {
  let pods = argv.includes('--quick') ? QUICK_PODS : FULL_PODS;
  const i = argv.indexOf('--pods');
  if (i >= 0) {
    const n = Number(argv[i + 1]);
    if (!Number.isInteger(n) || n < 1 || n > 14_000_000) throw new Error(`--pods wants a whole number from 1 to 14,000,000, got "${argv[i + 1] ?? ''}"`);
    pods = n;
  }
  const k = argv.indexOf('--nodes');
  const nodes = k >= 0 ? Number(argv[k + 1]) : 0;
  if (!(Number.isInteger(nodes) && nodes >= 0 && nodes <= MAX_NODES)) throw new Error(`--nodes wants a whole number from 0 to ${fmt(MAX_NODES)}, got "${argv[k + 1] ?? ''}"`);
  let variants = VARIANTS;
  const v = argv.indexOf('--variants');
  if (v >= 0) {
    const asked = (argv[v + 1] ?? '').split(',');
    const known = [...VARIANTS, ...SIZING];
    const unknown = asked.filter((name) => !known.includes(name as Variant));
    if (unknown.length > 0) throw new Error(`--variants: unknown ${unknown.join(', ')}; known: ${known.slice(1).join(', ')}`);
    variants = known.filter((name) => name === 'baseline' || asked.includes(name));
    // The controller's variants load the controller package: their floor is an empty list with it loaded.
    if (variants.some((name) => SIZING.includes(name))) variants.splice(1, 0, 'baselineController');
  }
  // As a container memory limit would size it: e.g. 768 for a pod limited to 1 GiB.
  const h = argv.indexOf('--heap-mib');
  const heapMiB = h >= 0 ? Number(argv[h + 1]) : undefined;
  if (heapMiB !== undefined && !(Number.isInteger(heapMiB) && heapMiB >= 64)) throw new Error(`--heap-mib wants a whole number of MiB >= 64, got "${argv[h + 1] ?? ''}"`);
  const s = argv.indexOf('--sync');
  const sync = s >= 0 ? argv[s + 1] : 'stream';
  if (sync !== 'stream' && sync !== 'list') throw new Error(`--sync wants stream or list, got "${sync ?? ''}"`);
  // The container memory limit the run stands for (deploy/README.md's sizes): judged against peak RSS.
  const l = argv.indexOf('--limit-mib');
  const limitMiB = l >= 0 ? Number(argv[l + 1]) : undefined;
  if (limitMiB !== undefined && !(Number.isInteger(limitMiB) && limitMiB >= 64)) throw new Error(`--limit-mib wants a whole number of MiB >= 64, got "${argv[l + 1] ?? ''}"`);
  // The Deployment's young generation cap by default; 0 for V8's own default.
  const y = argv.indexOf('--semi-space-mib');
  const semiSpaceMiB = y >= 0 ? Number(argv[y + 1]) : SEMI_SPACE_MIB;
  if (!(Number.isInteger(semiSpaceMiB) && semiSpaceMiB >= 0 && semiSpaceMiB <= 1024)) throw new Error(`--semi-space-mib wants a whole number of MiB from 0 to 1024, got "${argv[y + 1] ?? ''}"`);
  return { pods, nodes, variants, heapMiB, limitMiB, sync, semiSpaceMiB };
}

// --dist: the children load the built packages (run `tsc -b` first) rather than the sources
// through the source condition, closer to the shipped process.
const DIST = process.argv.includes('--dist');

function runChild(server: string, variant: Variant, pods: number, nodes: number, heapMiB: number | undefined, semiSpaceMiB: number): Promise<Measurement> {
  const expected = isBaseline(variant) ? 0 : pods;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', ...(DIST ? [] : ['--conditions=@podlife/source']), '--expose-gc', ...(heapMiB ? [`--max-old-space-size=${heapMiB}`] : []), ...(semiSpaceMiB > 0 ? [`--max-semi-space-size=${semiSpaceMiB}`] : []), resolve(here, 'measure.ts'), server, variant, String(expected), String(nodes), String(IDLE_MS)],
      { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    );
    let result: Measurement | undefined;
    child.on('message', (m) => (result = m as Measurement));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (result && code === 0) resolvePromise(result);
      // V8 aborts when the heap is exhausted ("JavaScript heap out of memory").
      else reject(new Error(signal === 'SIGABRT' || code === 134 ? 'out of memory (V8 heap limit)' : `exit ${code ?? signal}`));
    });
  });
}

const MiB = 1024 * 1024;
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mib = (n: number): string => fmt(n / MiB, 0);
/** The idle RSS's anonymous and file-backed parts, or blanks where the system does not tell. */
const split = (m: Measurement): [string, string] => [m.rssAnon === undefined ? '' : mib(m.rssAnon), m.rssFile === undefined ? '' : mib(m.rssFile)];

/** Where the RSS was at the sync's highest sample: V8's spaces, external memory, the rest. */
function peakBreakdown(m: Measurement): string {
  const p = m.atPeak as PeakSample;
  const spaces = Object.entries(p.spaces).filter(([, bytes]) => bytes >= MiB).sort((a, b) => b[1] - a[1]).map(([name, bytes]) => `${name.replace(/_space$/, '')} ${mib(bytes)} (steady ${mib(m.steadySpaces[name] ?? 0)})`);
  const other = p.rss - p.heapTotal - p.external;
  return (
    `${m.transform}: at the sampled peak (${fmt(p.atMs / 1000, 1)} s into the sync, after ${p.majorGcs} full collections and ${p.minorGcs} scavenges): ` +
    `RSS ${mib(p.rss)} = V8 heap ${mib(p.heapTotal)} committed (${mib(p.heapUsed)} used; ${spaces.join(', ')}) + external ${mib(p.external)} ` +
    `(array buffers ${mib(p.arrayBuffers)}) + rest ${mib(other)}`
  );
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

async function main(): Promise<void> {
  const { pods, nodes, variants, heapMiB, limitMiB, sync, semiSpaceMiB } = parseArgs(process.argv.slice(2));
  // `list`: the API refuses the streaming list as a server with WatchList off does, so the
  // informer takes its production fallback rather than being told to page.
  const api = await startFakePodApi({ pods, nodes, streaming: sync === 'stream' });
  const results: Measurement[] = [];
  const failures = new Map<Variant, string>();
  try {
    for (const variant of variants) {
      const cluster = SIZING.includes(variant) && nodes > 0 ? `${fmt(pods)} pods, ${fmt(nodes)} nodes` : `${fmt(pods)} pods`;
      process.stdout.write(`measuring ${variant}${isBaseline(variant) ? ' (empty list)' : ` (${cluster})`} ...\n`);
      try {
        results.push(await runChild(api.url, variant, pods, nodes, heapMiB, semiSpaceMiB));
      } catch (err) {
        // A variant that runs out of memory is a result too; without a baseline nothing is.
        if (variant === 'baseline') throw err;
        failures.set(variant, err instanceof Error ? err.message : String(err));
      }
    }
  } finally {
    await api.close();
  }
  // Counted while serving; when no child got through a whole list, count it here instead.
  let raw = api.rawBytes;
  if (raw === undefined) {
    raw = 0;
    for (let i = 0; i < pods; i++) raw += Buffer.byteLength(JSON.stringify(pod(i)));
  }
  const rawPerPod = raw / pods;
  let nodeRaw = api.nodeRawBytes ?? 0;
  if (nodes > 0 && api.nodeRawBytes === undefined) for (let i = 0; i < nodes; i++) nodeRaw += Buffer.byteLength(JSON.stringify(node(i)));
  const base = results[0]!;

  const rows = [['transform', 'read by', 'sync s', 'peak RSS', 'RSS at sync', 'RSS idle', 'anon', 'file', 'peak/idle', 'idle/raw', 'peak/raw', 'heap', 'RSS B/pod', 'heap B/pod', 'heap/raw', 'RSS < 1 GiB']];
  for (const m of results) {
    if (isBaseline(m.transform)) {
      rows.push([m.transform === 'baseline' ? '(baseline: empty list)' : '(baseline: empty list, controller loaded)', m.syncPath, fmt(m.syncMs / 1000, 2), mib(m.maxRss), mib(m.rssAtSync), mib(m.rss), ...split(m), '', '', '', mib(m.heapUsed), '', '', '', '']);
      continue;
    }
    // Per cached pod: the opt-in variant caches one pod in OPT_IN_EVERY.
    const floor = SIZING.includes(m.transform) ? (results.find((r) => r.transform === 'baselineController') ?? base) : base;
    const rssPerPod = (m.rss - floor.rss) / m.pods;
    const heapPerPod = (m.heapUsed - floor.heapUsed) / m.pods;
    rows.push([
      m.transform === 'optIn' || m.transform === 'keystoneManaged' ? `${m.transform} (${fmt(m.pods)} labelled)` : m.transform,
      m.syncPath,
      fmt(m.syncMs / 1000, 2),
      mib(m.maxRss),
      mib(m.rssAtSync),
      mib(m.rss),
      ...split(m),
      `${fmt(m.maxRss / m.rss, 2)}x`,
      `${fmt((m.rss / raw) * 100, 0)}%`,
      `${fmt((m.maxRss / raw) * 100, 1)}%`,
      mib(m.heapUsed),
      fmt(rssPerPod),
      fmt(heapPerPod),
      `${fmt((heapPerPod / rawPerPod) * 100, 0)}%`,
      m.rss < TARGET_RSS ? 'yes' : 'no',
    ]);
  }

  console.log(
    `\ninformer cache benchmark (Node ${process.version}, heap limit ${mib(base.heapLimit)} MiB, ` +
      `${semiSpaceMiB > 0 ? `young generation capped at ${semiSpaceMiB} MiB per semi-space as the Deployment runs the controller` : "V8's default young generation"}): ${fmt(pods)} pods, ` +
      `raw JSON ${fmt(rawPerPod)} B/pod (${mib(raw)} MiB in all), ` +
      (nodes > 0 ? `${fmt(nodes)} nodes of ${fmt(nodeRaw / nodes)} B of JSON each (${mib(nodeRaw)} MiB in all, listed by the controller's variants only), ` : '') +
      (sync === 'stream' ? 'read by a streaming list' : 'streaming refused (422), read by a paged list') +
      ` over loopback HTTP, then an idle watch; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} CPUs`,
  );
  console.log(table(rows));
  for (const m of results) if (!isBaseline(m.transform) && m.atPeak) console.log(peakBreakdown(m));
  for (const [variant, reason] of failures) console.log(`${variant}: failed, ${reason}`);
  for (const m of results) {
    if (m.errors.length === 0) continue;
    const shown = [...new Set(m.errors)].slice(0, 3).join(' | ');
    console.log(`${m.transform}: the informer reported ${m.errors.length} error(s) before it synced (it retried and relisted): ${shown}`);
  }
  if (failures.size > 0) process.exitCode = 1;
  console.log(
    [
      'MiB unless marked. peak RSS: the process high-water mark. RSS at sync: after sync and full GCs. RSS idle: after',
      `${IDLE_MS / 1000} s more of idling (V8 returns free pages late) and full GCs; the B/pod, heap and verdict columns use it.`,
      'anon / file: RSS idle as Linux splits it, anonymous memory and file-backed pages (the node binary\'s mapped code).',
      'B/pod (per cached pod) excludes the baseline process; heap/raw = cached heap per pod over the pod\'s JSON size.',
      `optIn: the lifecycleView of only the pods labelled podlife.dev/managed=true (1 in ${OPT_IN_EVERY}), selected by the API.`,
      'keystone / keystoneManaged / keystoneAndNetwork: the caches the controller holds as the Deployment runs it with keystone and node-readiness (keepLifecycleFields;',
      'with --managed-pods-only; plus network-conditions\' stripManagedFields cache), and with --nodes its two node caches, which their B/pod columns then include.',
      ...results.filter((m) => SIZING.includes(m.transform)).map((m) => `  ${m.transform} held: ${m.caches.join(', ')}${m.notHeld.length > 0 ? `; not served, so not held: ${m.notHeld.join(', ')}` : ''}`),
      'peak/idle = peak RSS over RSS idle (steady); idle/raw = RSS idle over the raw JSON of all the pods; peak/raw = peak RSS over it.',
      'at the sampled peak: the highest RSS of a sample every 20 ms during the sync, split into V8\'s heap as committed (per space), the',
      'array buffers and other external memory V8 knows of, and the rest (Node\'s own allocations, the binary\'s pages, allocator slack).',
      'The informer transforms each pod as its event arrives (streaming) or as its bytes in a page end (paged): never a whole page or list of full pods.',
    ].join('\n'),
  );

  if (limitMiB !== undefined) {
    // DESIGN 10: the shipped Deployment's memory limit holds the cluster size the docs state.
    for (const variant of variants.filter((name) => !isBaseline(name))) {
      const m = results.find((r) => r.transform === variant);
      judge({
        target: `${variant}, ${fmt(pods)} pods${nodes > 0 && SIZING.includes(variant) ? `, ${fmt(nodes)} nodes` : ''}${heapMiB ? `, heap capped at ${heapMiB} MiB` : ''}: peak RSS under the memory limit of ${limitMiB} MiB`,
        figure: m ? `peak ${mib(m.maxRss)} MiB, steady ${mib(m.rss)} MiB` : `not measured: ${failures.get(variant) ?? '?'}`,
        floor: `limit ${limitMiB} MiB`,
        ratio: m ? `${fmt((m.maxRss / (limitMiB * MiB)) * 100, 0)}% of it` : undefined,
        pass: m !== undefined && m.maxRss < limitMiB * MiB,
      });
    }
  }
  if (pods !== FULL_PODS) {
    // Fixed costs (V8's young generation, allocator slack) dominate small runs, so RSS per pod
    // there overstates the full run several times over: no verdict from a projection.
    const view = results.find((r) => r.transform === 'lifecycleView');
    if (view) {
      judge({
        target: `lifecycle view steady RSS over the raw JSON, ${fmt(pods)} pods (judged only at ${fmt(FULL_PODS)})`,
        figure: `${mib(view.rss)} MiB`,
        floor: `raw JSON ${mib(raw)} MiB`,
        ratio: `${fmt((view.rss / raw) * 100, 0)}%`,
      });
    }
    return;
  }
  const sync_ = (m: Measurement): string => `read by ${m.syncPath}`;
  for (const variant of (['stripManagedFields', 'lifecycleView'] as const).filter((name) => variants.includes(name))) {
    // Not in DESIGN 10 any more (the ratios below replaced it), kept as a figure for reading.
    const m = results.find((r) => r.transform === variant);
    judge({ target: `${fmt(FULL_PODS)} pods cached with a transform (${variant}), RSS against 1 GiB`, figure: m ? `${mib(m.rss)} MiB (peak ${mib(m.maxRss)} MiB)` : `not measured: ${failures.get(variant) ?? '?'}`, ratio: m ? `${fmt((m.rss / TARGET_RSS) * 100, 0)}% of 1 GiB` : undefined });
  }
  if (variants.includes('optIn')) {
    const optIn = results.find((r) => r.transform === 'optIn');
    judge({
      target: `${fmt(FULL_PODS)} pods, 5% opted in (lifecycle view of the labelled pods): RSS < 150 MiB`,
      figure: optIn ? `RSS ${mib(optIn.rss)} MiB (peak ${mib(optIn.maxRss)} MiB)` : `not measured: ${failures.get('optIn') ?? '?'}`,
      floor: `empty-list process ${mib(base.rss)} MiB`,
      ratio: optIn ? `+${mib(optIn.rss - base.rss)} MiB` : undefined,
      pass: optIn !== undefined && optIn.rss < TARGET_OPT_IN_RSS,
    });
  }
  // The lifecycle view the targets name, and the controller's own view (keystone) where it ran.
  for (const variant of (['lifecycleView', 'keystone'] as const).filter((name) => variants.includes(name))) {
    const view = results.find((r) => r.transform === variant);
    const missing = `not measured: ${failures.get(variant) ?? '?'}`;
    // The controller's caches hold the nodes too, when there are any.
    const held = `${variant}, ${fmt(FULL_PODS)} pods${view?.nodes ? `, ${fmt(nodes)} nodes` : ''}`;
    judge({
      target: `peak RSS during the initial sync <= ${TARGET_PEAK_OVER_STEADY}x steady (${held}${sync === 'list' ? ', paged list: the fallback' : ''})`,
      figure: view ? `peak ${mib(view.maxRss)} MiB` : missing,
      floor: view ? `steady ${mib(view.rss)} MiB` : undefined,
      ratio: view ? `${fmt(view.maxRss / view.rss, 2)}x` : undefined,
      pass: view !== undefined && view.maxRss / view.rss <= TARGET_PEAK_OVER_STEADY,
      note: view ? `${sync_(view)}; the peak is ${fmt((view.maxRss / raw) * 100, 1)}% of the raw JSON` : undefined,
    });
    // Not a target: the peak against a floor that does not move with the steady state.
    judge({
      target: `peak RSS during the initial sync as a share of the raw JSON (${held}${sync === 'list' ? ', paged list: the fallback' : ''})`,
      figure: view ? `peak ${mib(view.maxRss)} MiB` : missing,
      floor: `raw JSON ${mib(raw)} MiB`,
      ratio: view ? `${fmt((view.maxRss / raw) * 100, 1)}%` : undefined,
    });
    judge({
      target: `steady RSS <= ${TARGET_STEADY_OVER_RAW * 100}% of the raw JSON (${held}${sync === 'list' ? ', paged list: the fallback' : ''})`,
      figure: view ? `steady ${mib(view.rss)} MiB` : missing,
      floor: `raw JSON ${mib(raw)} MiB`,
      ratio: view ? `${fmt((view.rss / raw) * 100, 1)}%` : undefined,
      pass: view !== undefined && view.rss / raw <= TARGET_STEADY_OVER_RAW,
      note: view ? sync_(view) : undefined,
    });
  }
}

await main();
