/**
 * `pnpm bench`: every benchmark, one after another, each in a process of its own, so one run
 * puts all of DESIGN 10's numbers side by side.
 *
 *   pnpm bench                      all of them
 *   pnpm bench -- informer queue    only these
 *   pnpm bench -- --quick           shorter runs (smaller sizes, fewer seconds) for a smoke test
 *   pnpm bench -- --list            what exists
 *   pnpm bench -- --repeat 5 informer   each named benchmark 5 times in a row, judged on its worst run
 *
 * Guarantees: benchmarks run sequentially (they measure time and memory, and the machine is
 * small); a benchmark whose file does not exist yet is skipped with a note, never an error; the
 * control-plane binaries are made ready once, before the first benchmark that needs them, and
 * when that fails only those benchmarks are skipped; likewise the real node's assets, and a host
 * that cannot run a node skips the benchmarks that need one, saying why; the exit code is
 * non-zero when a benchmark that ran failed (or an unknown name was asked for). It ends with every
 * target the benchmarks judged (bench/verdict.ts): figure, same-run floor, ratio, PASS/FAIL and the
 * load average at the time, then how many targets passed. With `--repeat N` each benchmark runs N
 * times back to back, and each target prints once, as min / median / max over the runs and a
 * verdict on the worst run (bench/repeat.ts): PASS only when every run passed.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodePrerequisiteProblem } from '@podlife/testbed';
import { aggregate, formatRepeated, type RepeatedTarget } from './repeat.js';
import { RESULTS_ENV, verdictState, type Recorded } from './verdict.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Benchmark {
  name: string;
  /** Relative to the repository root. */
  file: string;
  /** Starts its own kube-apiserver and etcd (test/support), so needs the control-plane binaries. */
  controlPlane: boolean;
  /**
   * Runs a real node (test/support/node.ts), so needs a host that can run one (Linux, root,
   * cgroups) and the node's packages, kubelet and images (scripts/node-assets.mjs).
   */
  node?: boolean;
  /** Arguments for a full run, when the file serves several benchmarks. */
  args?: string[];
  /** Arguments for `--quick`. */
  quick: string[];
  /**
   * Measures this package's build (dist), as a controller runs it, instead of its sources:
   * built first with `tsc -b`, and run without the `@podlife/source` condition.
   */
  dist?: string;
  what: string;
}

const BENCHMARKS: Benchmark[] = [
  { name: 'queue', file: 'bench/queue/run.ts', controlPlane: false, quick: [], what: 'WorkQueue throughput and bytes per queued key vs a naive queue' },
  { name: 'informer', file: 'bench/informer/run.ts', controlPlane: false, quick: ['--quick'], what: 'informer cache memory, 150k pods, vs raw JSON size' },
  { name: 'informer-paged', file: 'bench/informer/run.ts', controlPlane: false, args: ['--sync', 'list', '--variants', 'lifecycleView'], quick: ['--quick', '--sync', 'list', '--variants', 'lifecycleView'], what: 'the same through the paged list, the fallback where streaming lists are refused: peak over steady' },
  { name: 'pod-conditions', file: 'bench/pod-conditions/run.ts', controlPlane: false, quick: ['20000'], what: 'sandboxReady + explainPod pods/s vs JSON.parse' },
  { name: 'keystone-evaluate', file: 'bench/keystone/evaluate.ts', controlPlane: false, quick: [], dist: 'packages/keystone', what: 'evaluatePod pods/s on 3-container pods' },
  { name: 'keystone-reaction', file: 'bench/keystone/reaction.ts', controlPlane: true, quick: ['--pods', '2000', '--seconds', '10'], what: 'container finished -> first stop action, p50/p99' },
  { name: 'webhook-handler', file: 'bench/keystone/webhook.ts', controlPlane: false, quick: [], dist: 'packages/keystone', what: 'AdmissionReview handler alone, p50/p99 per call' },
  { name: 'webhook', file: 'bench/webhook/run.ts', controlPlane: false, args: ['--floor-twice'], quick: ['--seconds', '4', '--floor-twice'], dist: 'packages/controller', what: '/mutate-pods over TLS at 500 req/s, p50/p99, beside the empty route against itself' },
  { name: 'webhook-policies', file: 'bench/webhook/run.ts', controlPlane: false, args: ['--floor-twice', '--policies', '20'], quick: ['--seconds', '4', '--floor-twice', '--policies', '20'], dist: 'packages/controller', what: 'the same with 20 lifecycle policies installed, each matched against every container' },
  { name: 'keystone-node', file: 'bench/keystone-node/run.ts', controlPlane: true, node: true, quick: ['--jobs', '10'], what: 'real node: main exits -> last sidecar terminated per strategy vs native sidecars, p50/p99' },
  { name: 'keystone-node-ephemeral', file: 'bench/keystone-node/ephemeral-start.ts', controlPlane: true, node: true, quick: ['--pods', '2'], what: 'real node: ephemeral container added -> started, on a quiet pod and right after a container exit (no target)' },
  { name: 'node-readiness', file: 'bench/node-readiness/run.ts', controlPlane: true, quick: ['--nodes', '500'], what: 'condition True -> taint removed with 5,000 nodes, p50/p99 vs a raw PATCH' },
  { name: 'node-readiness-write-cost', file: 'bench/node-readiness/write-cost.ts', controlPlane: true, quick: ['--nodes', '300', '--rounds', '2'], what: 'API server CPU per taint removal, by patch form, authentication and answer (no target)' },
  { name: 'node-readiness-15k', file: 'bench/node-readiness/run.ts', controlPlane: true, args: ['--nodes', '15000', '--no-naive'], quick: ['--nodes', '1500', '--no-naive'], what: 'the same with 15,000 nodes: p99, requests per node, controller RSS' },
  { name: 'node-readiness-nrc', file: 'bench/node-readiness/run.ts', controlPlane: true, args: ['--nrc', '--no-naive'], quick: ['--nodes', '500', '--nrc', '--no-naive'], what: 'the 5,000-node run with the rule in NRC\'s own shape, converted as podlife migrate nrc does' },
  { name: 'node-readiness-nrc-15k', file: 'bench/node-readiness/run.ts', controlPlane: true, args: ['--nodes', '15000', '--nrc', '--no-naive'], quick: ['--nodes', '1500', '--nrc', '--no-naive'], what: 'the same with 15,000 nodes' },
  { name: 'node-readiness-pods', file: 'bench/node-readiness/run.ts', controlPlane: true, args: ['--pods', '--no-naive'], quick: ['--nodes', '500', '--pods', '--no-naive'], what: 'the 5,000-node run with a DaemonSet-pod condition: pod Ready -> taint removed, one pod per node cached' },
  { name: 'node-readiness-pods-15k', file: 'bench/node-readiness/run.ts', controlPlane: true, args: ['--nodes', '15000', '--pods', '--no-naive'], quick: ['--nodes', '1500', '--pods', '--no-naive'], what: 'the same with 15,000 nodes and pods' },
];

/** Runs `args` with this Node and resolves with the exit code (signals count as failure). */
function run(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((done) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: 'inherit', env });
    child.on('error', (err) => {
      console.error(err.message);
      done(1);
    });
    child.on('exit', (code) => done(code ?? 1));
  });
}

/** Entry points under bench/<dir>/ that the registry does not name, so a new benchmark is not silently left out. */
function unregistered(): string[] {
  const known = new Set(BENCHMARKS.map((b) => b.file));
  const found: string[] = [];
  for (const dir of readdirSync(join(repoRoot, 'bench'), { withFileTypes: true })) {
    if (!dir.isDirectory() || dir.name === 'node_modules') continue;
    const file = relative(repoRoot, join(repoRoot, 'bench', dir.name, 'run.ts'));
    if (existsSync(join(repoRoot, file)) && !known.has(file)) found.push(file);
  }
  return found;
}

/** The verdicts a benchmark recorded (none when it wrote none, e.g. it crashed first). */
function readResults(file: string): Recorded[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Recorded);
}

/** Every target judged in this run, one line each, and the count that passed. */
function printTargets(targets: [string, Recorded][]): void {
  if (targets.length === 0) return;
  console.log('\n== targets (DESIGN.md 10): figure, floor from the same run, ratio, verdict, 1-minute load average when judged');
  const rows = targets.map(([name, v]) => [name, v.target, v.figure, v.floor ?? '(absolute)', v.ratio ?? '', verdictState(v.pass), `load ${v.load.toFixed(1)}`]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  const judged = targets.filter(([, v]) => v.pass !== undefined);
  const passed = judged.filter(([, v]) => v.pass).length;
  console.log(`${passed} of ${judged.length} targets PASS${passed < judged.length ? `, ${judged.length - passed} FAIL` : ''}`);
}

/** Every target of N runs, each once: min / median / max, each run's verdict, the verdict on the worst run. */
function printRepeated(rows: RepeatedTarget[], repeat: number): void {
  if (rows.length === 0) return;
  console.log(`\n== targets over ${repeat} runs each (DESIGN.md 10): ratio (or figure) min / median / max, each run's verdict, verdict on the worst run, load averages`);
  const lines = formatRepeated(rows);
  const widths = lines[0]!.map((_, c) => Math.max(...lines.map((r) => r[c]!.length)));
  for (const r of lines) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  const judged = rows.filter((r) => r.pass !== undefined);
  const passed = judged.filter((r) => r.pass).length;
  console.log(`${passed} of ${judged.length} targets PASS on their worst of ${repeat} runs${passed < judged.length ? `, ${judged.length - passed} FAIL` : ''}`);
}

function parseArgs(argv: string[]): { names: string[]; quick: boolean; list: boolean; repeat: number } {
  const args = argv.filter((a) => a !== '--');
  const r = args.indexOf('--repeat');
  const repeat = r >= 0 ? Number(args[r + 1]) : 1;
  if (!(Number.isInteger(repeat) && repeat >= 1 && repeat <= 100)) throw new Error(`--repeat wants a whole number of runs from 1 to 100, got "${args[r + 1] ?? ''}"`);
  return {
    names: args.filter((a, i) => !a.startsWith('--') && !(r >= 0 && i === r + 1)),
    quick: args.includes('--quick'),
    list: args.includes('--list'),
    repeat,
  };
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    return 2;
  }
  const { names, quick, list, repeat } = parsed;
  const unknown = names.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    console.error(`unknown benchmark ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
    return 2;
  }
  if (list) {
    for (const b of BENCHMARKS) {
      const state = existsSync(join(repoRoot, b.file)) ? '' : '  (not written yet)';
      const needs = b.node ? 'real node    ' : b.controlPlane ? 'control plane' : '             ';
      console.log(`${b.name.padEnd(18)} ${b.file.padEnd(30)} ${needs}  ${b.what}${state}`);
    }
    for (const file of unregistered()) console.log(`(not in the registry of bench/run.ts: ${file})`);
    return 0;
  }

  console.log(`benchmarks on Node ${process.version}, ${process.platform}/${process.arch}${quick ? ', --quick' : ''}${repeat > 1 ? `, ${repeat} runs of each` : ''}`);
  const selected = names.length > 0 ? BENCHMARKS.filter((b) => names.includes(b.name)) : BENCHMARKS;
  const summary: string[][] = [];
  const targets: [string, Recorded][] = [];
  const repeated: RepeatedTarget[] = [];
  const resultsDir = mkdtempSync(join(tmpdir(), 'podlife-bench-'));
  let controlPlane: 'unknown' | 'ready' | 'unavailable' = 'unknown';
  let node: 'unknown' | 'ready' | 'unavailable' = 'unknown';
  const nodeProblem = nodePrerequisiteProblem();
  let failed = false;
  for (const b of selected) {
    if (!existsSync(join(repoRoot, b.file))) {
      summary.push([b.name, `skipped: ${b.file} does not exist yet`, '']);
      continue;
    }
    if (b.controlPlane && controlPlane === 'unknown') {
      console.log('\n== control-plane binaries (built once per version, then cached)');
      controlPlane = (await run([join(repoRoot, 'scripts', 'control-plane-assets.mjs')])) === 0 ? 'ready' : 'unavailable';
    }
    if (b.controlPlane && controlPlane === 'unavailable') {
      summary.push([b.name, 'skipped: control-plane binaries unavailable (see above)', '']);
      continue;
    }
    if (b.node && nodeProblem) {
      summary.push([b.name, `skipped: ${nodeProblem}`, '']);
      continue;
    }
    if (b.node && node === 'unknown') {
      console.log('\n== the real node\'s packages, kubelet and images (built once per version, then cached)');
      node = (await run([join(repoRoot, 'scripts', 'node-assets.mjs')])) === 0 ? 'ready' : 'unavailable';
    }
    if (b.node && node === 'unavailable') {
      summary.push([b.name, 'skipped: the real node\'s assets are unavailable (see above)', '']);
      continue;
    }
    const args = [...(quick ? b.quick : (b.args ?? []))];
    console.log(`\n== ${b.name}: ${b.what}${args.length ? ` [${args.join(' ')}]` : ''}`);
    const started = performance.now();
    if (b.dist && (await run([join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', b.dist])) !== 0) {
      failed = true;
      summary.push([b.name, `failed: tsc -b ${b.dist}`, '']);
      continue;
    }
    const conditions = b.dist ? [] : ['--conditions=@podlife/source'];
    const runs: Recorded[][] = [];
    for (let k = 1; k <= repeat; k++) {
      const label = repeat > 1 ? `${b.name} (run ${k} of ${repeat})` : b.name;
      if (repeat > 1) console.log(`\n-- ${label}`);
      const resultsFile = join(resultsDir, `${b.name}.${k}.jsonl`);
      const loadBefore = loadavg()[0] ?? NaN;
      const runStarted = performance.now();
      const code = await run(['--import', 'tsx', ...conditions, join(repoRoot, b.file), ...args], { ...process.env, [RESULTS_ENV]: resultsFile });
      // The first run's time includes the build (dist).
      const seconds = (((k === 1 ? performance.now() - started : performance.now() - runStarted)) / 1000).toFixed(0);
      if (code !== 0) failed = true;
      summary.push([label, code === 0 ? 'ok' : `failed: exit ${code}`, `${seconds} s`, `load ${loadBefore.toFixed(1)} -> ${(loadavg()[0] ?? NaN).toFixed(1)}`]);
      runs.push(readResults(resultsFile));
    }
    if (repeat === 1) for (const v of runs[0] ?? []) targets.push([b.name, v]);
    else repeated.push(...aggregate(b.name, runs));
  }
  rmSync(resultsDir, { recursive: true, force: true });

  console.log(`\n== summary${quick ? ' (--quick)' : ''}`);
  const widths = [0, 1, 2, 3].map((c) => Math.max(...summary.map((r) => (r[c] ?? '').length)));
  for (const r of summary) console.log(r.map((cell, c) => (c === 2 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ').trimEnd());
  printTargets(targets);
  printRepeated(repeated, repeat);
  for (const file of unregistered()) console.log(`note: ${file} is not in the registry of bench/run.ts, so it did not run`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
