#!/usr/bin/env node
// Runs the integration suites on the Kubernetes releases of the test matrix, each suite on the
// releases it declares (docs/adr/0255): the oldest and the newest supported release, or the
// releases PODLIFE_K8S_VERSIONS names (comma-separated, e.g. `1.37,1.34`; PODLIFE_K8S_VERSION
// alone names one).
//
// Guarantees:
// - every suite lives in a folder of test/integration/ that says what it runs on (SUITE_FOLDERS:
//   api/, node/, deploy/, soak/); a suite elsewhere, a suite name used twice, or a suite that starts
//   a real node outside node/ without saying `@real-node` in its header stops the run, naming the file;
// - every suite declares in its header where it runs, with one of
//     `@releases every`   on every release of the run (its behaviour depends on the release),
//     `@releases newest`  on the newest release of the run only;
//   a file that declares neither (or something else) stops the run before anything starts, naming
//   the file; PODLIFE_FULL_MATRIX=1 runs every suite on every release (a release's own check);
// - the plan (each release, its suites) is printed before anything is built or started;
// - every build comes first: the tools the suites run (helm, promtool, kubectl) and each release's
//   binaries and node assets (containerd v2 included), built once, then cached; a release whose
//   build failed runs nothing and fails the run;
// - then the suites, in two lanes at once (DEFAULT_LANES): the suites that run a real node in one
//   mocha process, those that need only an API server in another, each lane oldest release first
//   and each line of its output prefixed with `[release lane]`; PODLIFE_INTEGRATION_LANES=1 runs
//   one mocha process at a time;
// - every job runs even when an earlier one failed; the exit code is non-zero if any failed;
// - the integration phase (the suites, not the builds) has one limit, INTEGRATION_LIMIT_SECONDS
//   below: past it the running mocha processes are stopped and the run fails saying so, long
//   before CI's own limit would end it without a word;
// - the closing summary names each build and how long it took, each release and lane with its
//   outcome, each suite's wall time, the ten slowest tests, the phase against its limit and the
//   load average, and repeats each failed test (title, file, first lines of its error), so the end
//   of the log says what failed where and where the time went;
// - extra arguments go to mocha (e.g. `--grep`); PODLIFE_SUITES=a,b (file names without
//   `.test.ts`, wherever they are) or folders (`node/`) narrows the plan to those suites.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION_ENV, compareReleases, selectedKubernetesVersion, supportedKubernetesVersions } from './control-plane-assets.mjs';
import { seconds } from './go-build.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const suitesDir = join(repoRoot, 'test', 'integration');

/**
 * The integration phase's limit: the wall time from the first suite's start to the last one's end,
 * every build done before it. The test command must fit 40 minutes cold and 20 warm on 2 cores:
 * about 15 minutes build Go modules and 1 installs, builds, lints and runs the unit suites, so 20 minutes of
 * suites keep a cold run under 40 (and under 45 as suites are added); warm, the suites take 16.
 */
export const INTEGRATION_LIMIT_SECONDS = 1_200;

const RELEASE_TAGS = ['every', 'newest'];

/**
 * The folders of test/integration/, each named for what its suites run on. The lanes read one
 * thing from it: every suite under node/ runs a real node.
 */
export const SUITE_FOLDERS = {
  api: 'an API server (and at most the simulated kubelet)',
  node: 'a real node (kubelet, containerd, runc)',
  deploy: 'what podlife ships: packages, image, chart, manifests, rules',
  soak: 'the chaos soak and its counters',
};

/**
 * How many mocha processes run at once: 1, or 2 (the real-node suites in one lane and the suites
 * that need only an API server beside them, each lane on a control plane of its own). What was
 * measured each way is in docs/adr/0255; PODLIFE_INTEGRATION_LANES overrides it for one run.
 */
export const DEFAULT_LANES = 2;

function laneSetting() {
  const raw = (process.env.PODLIFE_INTEGRATION_LANES ?? '').trim();
  if (raw === '') return DEFAULT_LANES;
  if (raw !== '1' && raw !== '2') throw new Error(`PODLIFE_INTEGRATION_LANES=${raw}: say 1 (one suite at a time) or 2 (real-node and API-server suites side by side)`);
  return Number(raw);
}

/** Whether the suite's code starts a real node (the node harness's entry points). */
function startsRealNode(text) {
  return /\b(?:startNode|sharedRealCluster)\s*\(/.test(text);
}

/** The matrix: the oldest and the newest release this checkout pins, oldest first. */
function matrixVersions() {
  const listed = process.env.PODLIFE_K8S_VERSIONS;
  if (listed !== undefined && listed.trim() !== '') {
    return [...new Set(listed.split(',').map((v) => {
      try {
        return selectedKubernetesVersion(v);
      } catch (err) {
        throw new Error(`PODLIFE_K8S_VERSIONS=${listed}: ${err instanceof Error ? err.message.replace(/^\S+=/, '') : String(err)}`);
      }
    }))];
  }
  if ((process.env[VERSION_ENV] ?? '').trim() !== '') return [selectedKubernetesVersion()];
  const supported = supportedKubernetesVersions();
  return [...new Set([supported[0], supported[supported.length - 1]])];
}

/** Each `.test.ts` under dir, as paths relative to it (with `/`), sorted. */
function suiteFiles(dir, under = '') {
  const found = [];
  for (const entry of readdirSync(join(dir, under)).sort()) {
    const path = under === '' ? entry : `${under}/${entry}`;
    if (statSync(join(dir, path)).isDirectory()) found.push(...suiteFiles(dir, path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

/**
 * Each suite under dir (its folders, SUITE_FOLDERS) and the releases it declares; throws naming
 * every file without a valid tag, outside a folder, with a name another suite has, or starting a
 * real node outside node/ without `@real-node`.
 */
export function readSuiteTags(dir = suitesDir) {
  const suites = [];
  const problems = [];
  const seen = new Map();
  for (const path of suiteFiles(dir)) {
    const parts = path.split('/');
    const folder = parts.length === 2 ? parts[0] : undefined;
    const name = parts[parts.length - 1].replace(/\.test\.ts$/, '');
    if (folder === undefined || !Object.hasOwn(SUITE_FOLDERS, folder)) {
      problems.push(`${path}: a suite lives in one of test/integration/${Object.keys(SUITE_FOLDERS).join('/, ')}/ ` +
        `(${Object.entries(SUITE_FOLDERS).map(([f, what]) => `${f}: ${what}`).join('; ')})`);
      continue;
    }
    if (seen.has(name)) {
      problems.push(`${path}: its name is also ${seen.get(name)}'s; PODLIFE_SUITES selects by name, so each suite needs its own`);
      continue;
    }
    seen.set(name, path);
    const text = readFileSync(join(dir, path), 'utf8');
    const header = text.split('\n').slice(0, 60).join('\n');
    const tags = [...header.matchAll(/@releases\s+(\S+)/g)].map((m) => m[1]);
    if (tags.length !== 1 || !RELEASE_TAGS.includes(tags[0])) {
      problems.push(`${path}: ${tags.length === 0 ? 'declares no' : `declares ${tags.map((t) => `"${t}"`).join(', ')} as its`} releases; ` +
        `its header comment must say \`@releases every\` (its behaviour depends on the release) or \`@releases newest\``);
      continue;
    }
    const tagged = /@real-node\b/.test(header);
    if (folder !== 'node' && !tagged && startsRealNode(text)) {
      problems.push(`${path}: starts a real node, so it runs in the node lane: move it to node/, or say \`@real-node\` in its header`);
      continue;
    }
    const file = relative(repoRoot, join(dir, path)).split(sep).join('/');
    suites.push({ name, folder, file, releases: tags[0], realNode: folder === 'node' || tagged });
  }
  if (problems.length > 0) throw new Error(`every integration suite declares where it runs (docs/adr/0255, CONTRIBUTING.md):\n  ${problems.join('\n  ')}`);
  return suites;
}

/** The plan: for each release of the run, oldest first, the suites that run on it. */
export function plan(versions, suites, { full = false, only } = {}) {
  const sorted = [...versions].sort(compareReleases);
  const newest = sorted[sorted.length - 1];
  let chosen = suites;
  if (only !== undefined) {
    // A name ending in `/` is a folder: every suite in it.
    const selects = (n, s) => (n.endsWith('/') ? s.folder === n.slice(0, -1) : s.name === n);
    const unknown = only.filter((n) => !suites.some((s) => selects(n, s)));
    if (unknown.length > 0) {
      throw new Error(`PODLIFE_SUITES names no suite ${unknown.join(', ')}; suites: ${suites.map((s) => s.name).join(', ')}; ` +
        `folders: ${[...new Set(suites.map((s) => `${s.folder}/`))].join(', ')}`);
    }
    chosen = suites.filter((s) => only.some((n) => selects(n, s)));
  }
  return sorted.map((version) => ({
    version,
    suites: chosen.filter((s) => full || s.releases === 'every' || version === newest),
  })).filter((step) => step.suites.length > 0);
}

function run(cmd, args, env, { limitAt, onLine } = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ['ignore', onLine ? 'pipe' : 'inherit', onLine ? 'pipe' : 'inherit'] });
    if (onLine) {
      for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream, crlfDelay: Infinity }).on('line', onLine);
    }
    let overLimit = false;
    const timer = limitAt === undefined ? undefined : setTimeout(() => {
      overLimit = true;
      process.stderr.write(`\ntest-integration: the integration phase passed its limit of ${INTEGRATION_LIMIT_SECONDS}s (INTEGRATION_LIMIT_SECONDS in scripts/test-integration.mjs); stopping mocha\n`);
      // The harness stops what it started on SIGTERM (test/support/processes.ts).
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 30_000).unref();
    }, Math.max(0, limitAt - Date.now()));
    child.on('error', (err) => {
      process.stderr.write(`test-integration: ${cmd}: ${err.message}\n`);
      if (timer) clearTimeout(timer);
      resolvePromise({ code: 1, overLimit });
    });
    // 'close', not 'exit': a piped child's last lines are read by then.
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolvePromise({ code: code ?? (signal ? 1 : 0), overLimit });
    });
  });
}

function readJsonLines(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line !== '').map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      // A mocha killed while writing: keep the line as the message.
      return { kind: 'unparsed', title: '(a record that does not parse)', file: '', message: line };
    }
  });
}

function pad(text, width) {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** A release's suites split by what they need, when two lanes run at once. */
function lanesOf(step, laneCount) {
  if (laneCount === 1) return [{ lane: 'all', suites: step.suites }];
  return [
    { lane: 'node', suites: step.suites.filter((s) => s.realNode) },
    { lane: 'api', suites: step.suites.filter((s) => !s.realNode) },
  ].filter((j) => j.suites.length > 0);
}

async function main() {
  const versions = matrixVersions();
  const suites = readSuiteTags();
  const only = (process.env.PODLIFE_SUITES ?? '').trim() === '' ? undefined : process.env.PODLIFE_SUITES.split(',').map((s) => s.trim().replace(/\.test\.ts$/, ''));
  const full = process.env.PODLIFE_FULL_MATRIX === '1';
  const laneCount = laneSetting();
  const steps = plan(versions, suites, { full, only });
  const mochaArgs = process.argv.slice(2);
  const out = (line) => process.stderr.write(`${line}\n`);

  out(`test-integration: the plan (${full ? 'PODLIFE_FULL_MATRIX=1: every suite on every release' : '@releases tags; docs/adr/0255'}; ` +
    `${laneCount === 1 ? 'one suite at a time' : 'real-node suites in one lane, API-server suites beside them in another'}), ` +
    `integration phase limit ${INTEGRATION_LIMIT_SECONDS}s`);
  for (const step of steps) out(`  Kubernetes ${step.version}: ${step.suites.length} suites: ${step.suites.map((s) => s.name).join(', ')}`);
  const chosen = new Set(steps.flatMap((step) => step.suites));
  const newestOnly = suites.filter((s) => s.releases === 'newest' && chosen.has(s));
  if (!full && steps.length > 1 && newestOnly.length > 0) out(`  (on ${steps[steps.length - 1].version} only: ${newestOnly.map((s) => s.name).join(', ')})`);

  const work = mkdtempSync(join(tmpdir(), 'podlife-integration-'));
  const buildTimes = join(work, 'builds.jsonl');
  const baseEnv = { ...process.env, PODLIFE_BUILD_TIMES: buildTimes };
  const loads = [];
  const sampler = setInterval(() => loads.push(loadavg()[0]), 10_000);
  sampler.unref();

  // Builds first, all of them: kubelets of other releases run beside a release's control plane
  // (native-mechanisms-node), and no suite should share the cores with a compiler.
  const buildsStart = Date.now();
  const ready = new Map();
  const tools = await run(process.execPath, [join(repoRoot, 'scripts', 'go-tools.mjs')], baseEnv);
  for (const step of steps) {
    out(`test-integration: Kubernetes ${step.version}: binaries and node assets`);
    const assets = tools.code === 0
      ? await run(process.execPath, [join(repoRoot, 'scripts', 'node-assets.mjs'), '--containerd-v2'], { ...baseEnv, [VERSION_ENV]: step.version })
      : tools;
    ready.set(step.version, assets.code === 0);
  }
  const buildsSeconds = Math.round((Date.now() - buildsStart) / 1000);

  // Then the suites: each lane runs its jobs one after another, the lanes at the same time.
  const phaseStart = Date.now();
  const limitAt = phaseStart + INTEGRATION_LIMIT_SECONDS * 1000;
  let stoppedAtLimit = false;
  const jobs = steps.flatMap((step) => lanesOf(step, laneCount).map((j) => ({ ...j, version: step.version, records: join(work, `${step.version}-${j.lane}.jsonl`) })));
  const laneNames = [...new Set(jobs.map((j) => j.lane))];
  const mocha = join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const reporter = join(repoRoot, 'scripts', 'mocha-spec-failures.cjs');
  await Promise.all(laneNames.map(async (lane) => {
    for (const job of jobs.filter((j) => j.lane === lane)) {
      if (!ready.get(job.version)) {
        job.outcome = 'not built';
        continue;
      }
      if (stoppedAtLimit || Date.now() >= limitAt) {
        job.outcome = 'not run';
        stoppedAtLimit = true;
        continue;
      }
      const started = Date.now();
      const prefix = laneCount === 1 ? undefined : `[${job.version} ${lane}]`;
      out(`test-integration: Kubernetes ${job.version}${prefix === undefined ? '' : `, ${lane} lane`}: ${job.suites.length} suites`);
      const env = { ...baseEnv, [VERSION_ENV]: job.version, PODLIFE_FAILURES_FILE: job.records, PODLIFE_TIMINGS_FILE: job.records };
      // Two lanes print at once: each line says which it came from.
      const onLine = prefix === undefined ? undefined : (line) => process.stderr.write(`${prefix} ${line}\n`);
      const r = await run(process.execPath, [mocha, '--config', '.mocharc.integration.json', '--reporter', reporter, ...mochaArgs, ...job.suites.map((s) => s.file)], env, { limitAt, onLine });
      job.seconds = Math.round((Date.now() - started) / 1000);
      job.outcome = r.code === 0 ? 'passed' : 'FAILED';
      if (r.overLimit) {
        stoppedAtLimit = true;
        job.outcome = 'FAILED, stopped at the phase limit';
      }
    }
  }));
  const phaseSeconds = Math.round((Date.now() - phaseStart) / 1000);
  clearInterval(sampler);
  for (const job of jobs) job.recordList = readJsonLines(job.records);
  const builds = readJsonLines(buildTimes);
  rmSync(work, { recursive: true, force: true });

  out('\ntest-integration: summary');
  out(`  builds: ${buildsSeconds}s; ${builds.length === 0 ? 'nothing built (every binary came from the cache)' : builds.map((b) => `${b.what} ${b.seconds}s`).join(', ')}`);
  if (tools.code !== 0) out('  tools (helm, promtool, kubectl): FAILED');
  for (const job of jobs) {
    const tests = job.recordList.filter((x) => x.kind === 'test').length;
    out(`  Kubernetes ${job.version}${laneCount === 1 ? '' : ` (${job.lane} lane)`}: ${job.outcome}${job.seconds === undefined ? '' : ` in ${job.seconds}s, ${tests} tests`}`);
    const byFile = new Map();
    for (const x of job.recordList.filter((r) => r.kind === 'file')) byFile.set(x.file, (byFile.get(x.file) ?? 0) + x.ms);
    for (const s of [...byFile].map(([file, ms]) => ({ file, ms })).sort((a, b) => b.ms - a.ms)) {
      out(`    ${pad(s.file.replace(/^test\/integration\//, ''), 36)} ${String(seconds(s.ms)).padStart(6)}s`);
    }
  }
  const tests = jobs.flatMap((j) => j.recordList.filter((x) => x.kind === 'test').map((t) => ({ ...t, version: j.version })));
  if (tests.length > 0) {
    out('  the ten slowest tests:');
    for (const t of [...tests].sort((a, b) => b.ms - a.ms).slice(0, 10)) {
      out(`    ${String(seconds(t.ms)).padStart(6)}s  ${t.version}  ${t.title} (${t.file.replace(/^test\/integration\//, '')})`);
    }
  }
  const sortedLoads = [...loads].sort((a, b) => a - b);
  const at = (q) => sortedLoads.length === 0 ? 'n/a' : sortedLoads[Math.min(sortedLoads.length - 1, Math.floor(q * sortedLoads.length))].toFixed(2);
  out(`  integration phase: ${phaseSeconds}s of its ${INTEGRATION_LIMIT_SECONDS}s limit; load average (1 min, sampled every 10 s over builds and suites): median ${at(0.5)}, max ${at(1)}`);
  for (const job of jobs) {
    for (const f of job.recordList.filter((x) => x.kind === 'failure' || x.kind === 'unparsed')) {
      out(`  failed on ${job.version}: ${f.title}${f.file === '' ? '' : ` (${f.file})`}`);
      for (const line of String(f.message).split('\n')) out(`      ${line}`);
    }
  }
  if (stoppedAtLimit) {
    out(`test-integration: FAILED: the integration phase took longer than its limit of ${INTEGRATION_LIMIT_SECONDS}s ` +
      '(INTEGRATION_LIMIT_SECONDS in scripts/test-integration.mjs); the suite times above say where it went');
  }
  const ok = tools.code === 0 && jobs.length > 0 && jobs.every((j) => j.outcome === 'passed') && !stoppedAtLimit;
  process.exitCode = ok ? 0 : 1;
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  await main().catch((err) => {
    process.stderr.write(`test-integration: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
