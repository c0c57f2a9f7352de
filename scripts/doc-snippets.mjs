#!/usr/bin/env node
/**
 * The code blocks of the user documentation compile, and the ones that need no cluster run
 * (docs/adr/0262).
 *
 * Guarantees:
 * - every fenced block of README.md and docs/**.md (not docs/adr) is read; a `ts` block is a
 *   module of its own, type-checked by the repository's TypeScript under the options a strict
 *   consumer uses, against the built packages (`tsc -b` first), as a user imports them
 *   (`@podlife/core`, `@podlife/core/testing`, …, and `@kubernetes/client-node`);
 * - a block runs when the HTML comment right before it says `<!-- snippet: run -->`: compiled,
 *   then run with Node outside the repository; it must exit 0 within 60 s (it asserts what it
 *   shows). `file=<name>.ts` names a block's module so a later block of the same document can
 *   import it (`./<name>.js`); `skip: <reason>` leaves a block unchecked, and the reason is
 *   required;
 * - a `yaml` block must parse; in a Pod, a Job, a CronJob or a workload's pod template (or a bare
 *   `metadata:` fragment), every key of podlife's domains must be a key of the contract, and a
 *   full pod spec must pass keystone's own validation (`readLifecycle`); a `json` block must parse;
 * - a problem is reported as `<doc>:<line>` of the Markdown, and the exit code is 1.
 *
 *     node scripts/doc-snippets.mjs              # every document; builds first
 *     node scripts/doc-snippets.mjs --no-run     # type-check and parse only
 *     node scripts/doc-snippets.mjs --no-build   # against the packages as last built (the test command builds first)
 *     node scripts/doc-snippets.mjs docs/guides/jobs-with-sidecars.md
 *     node scripts/doc-snippets.mjs --extract <dir>   # write the modules to <dir>/src/<doc>/ and list them as JSON, check nothing
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const RUN_TIMEOUT_MS = 60_000;
const CHECKED_LANGS = new Set(['ts', 'typescript', 'yaml', 'yml', 'json']);

/** The documents whose blocks are checked: README.md and docs/** except the decision records. */
export function documents() {
  const walk = (dir) =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return path === join('docs', 'adr') ? [] : walk(path);
      return e.name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', ...walk('docs')].sort();
}

/**
 * The fenced blocks of a Markdown text: `{ lang, code, line, marker }`, `line` being the line of
 * the first line of code (1-based), `marker` the directives of a `<!-- snippet: … -->` comment on
 * the last non-blank line before the fence.
 */
export function blocksOf(text, doc = '<text>') {
  const lines = text.split('\n');
  const blocks = [];
  const problems = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s{0,3})(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]);
    const markerLine = /^\s*<!--\s*snippet:(.*?)-->\s*$/.exec(lines[i]);
    if (markerLine && !nextFence(lines, i)) problems.push(`${doc}:${i + 1}: a snippet marker must come right before a code block`);
    if (!open) continue;
    const fence = open[2];
    const start = i + 1;
    let end = start;
    while (end < lines.length && !(lines[end].trim().startsWith(fence[0].repeat(fence.length)) && lines[end].trim().replace(new RegExp(`^\\${fence[0]}+`), '') === '')) end++;
    const indent = open[1].length;
    const code = lines.slice(start, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n');
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === '') before--;
    const marker = before >= 0 ? /^\s*<!--\s*snippet:(.*?)-->\s*$/.exec(lines[before])?.[1] : undefined;
    const parsed = parseMarker(marker, `${doc}:${before + 1}`);
    problems.push(...parsed.problems);
    blocks.push({ lang: open[3].toLowerCase(), code, line: start + 1, marker: parsed.directives });
    i = end;
  }
  return { blocks, problems };
}

function nextFence(lines, i) {
  for (let j = i + 1; j < lines.length; j++) {
    if (lines[j].trim() === '') continue;
    return /^\s{0,3}(`{3,}|~{3,})/.test(lines[j]);
  }
  return false;
}

/** `run`, `file=<name>.ts`, `skip: <reason>`; anything else is a problem naming the marker. */
export function parseMarker(text, where) {
  const directives = { run: false, file: undefined, skip: undefined };
  const problems = [];
  if (text === undefined) return { directives, problems };
  const skip = /\bskip:\s*(.*)$/.exec(text);
  if (skip) {
    directives.skip = skip[1].trim();
    if (directives.skip === '') problems.push(`${where}: "skip:" needs a reason`);
  }
  for (const word of (skip ? text.slice(0, skip.index) : text).trim().split(/\s+/).filter(Boolean)) {
    if (word === 'run') directives.run = true;
    else if (/^file=[\w.-]+\.ts$/.test(word)) directives.file = word.slice('file='.length);
    else problems.push(`${where}: unknown snippet directive "${word}" (run, file=<name>.ts, skip: <reason>)`);
  }
  return { directives, problems };
}

/** A folder name for a document's modules: `docs/guides/x.md` -> `docs-guides-x`. */
function slugOf(doc) {
  return doc.replace(/\.md$/, '').replace(/[^\w-]+/g, '-');
}

/**
 * A project outside the repository that resolves the workspace packages as a user's would:
 * `node_modules/@podlife/<name>` and client-node linked to what the packages themselves use.
 */
export function makeProject(dir) {
  mkdirSync(join(dir, 'node_modules', '@podlife'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '@kubernetes'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  for (const pkg of readdirSync(join(ROOT, 'packages'))) {
    const manifest = join(ROOT, 'packages', pkg, 'package.json');
    if (!existsSync(manifest)) continue;
    const name = JSON.parse(readFileSync(manifest, 'utf8')).name;
    symlinkSync(join(ROOT, 'packages', pkg), join(dir, 'node_modules', name));
  }
  symlinkSync(realpathSync(join(ROOT, 'packages/core/node_modules/@kubernetes/client-node')), join(dir, 'node_modules/@kubernetes/client-node'));
  symlinkSync(realpathSync(join(ROOT, 'node_modules/@types/node')), join(dir, 'node_modules/@types/node'));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'podlife-doc-snippets', private: true, type: 'module' }, null, 2)}\n`);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    `${JSON.stringify(
      {
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          moduleDetection: 'force',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
          rootDir: 'src',
          outDir: 'dist',
          sourceMap: false,
          noEmitOnError: true,
        },
        include: ['src'],
      },
      null,
      2,
    )}\n`,
  );
}

/** Writes each `ts` block of each document as a module; returns the modules with where they came from. */
export function extract(dir, docs) {
  const modules = [];
  const problems = [];
  const others = [];
  for (const doc of docs) {
    const { blocks, problems: found } = blocksOf(readFileSync(join(ROOT, doc), 'utf8'), doc);
    problems.push(...found);
    const names = new Set();
    for (const block of blocks) {
      if (block.marker.skip !== undefined) continue;
      if (!['ts', 'typescript'].includes(block.lang)) {
        if (block.marker.run || block.marker.file) problems.push(`${doc}:${block.line - 1}: run and file= apply to ts blocks only`);
        if (CHECKED_LANGS.has(block.lang)) others.push({ doc, ...block });
        continue;
      }
      const file = block.marker.file ?? `block-${block.line}.ts`;
      if (names.has(file)) problems.push(`${doc}:${block.line - 1}: a second block named ${file}`);
      names.add(file);
      const path = join('src', slugOf(doc), file);
      mkdirSync(join(dir, dirname(path)), { recursive: true });
      writeFileSync(join(dir, path), `${block.code}\n`);
      modules.push({ doc, line: block.line, path, run: block.marker.run });
    }
  }
  return { modules, problems, others };
}

/** tsc's `src/x/y.ts(3,5): error …` mapped to the Markdown line the code came from. */
function mapDiagnostics(output, modules) {
  const byPath = new Map(modules.map((m) => [m.path, m]));
  return output
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      const m = /^(src\/[^(]+)\((\d+),(\d+)\): (.*)$/.exec(l);
      const module = m && byPath.get(m[1]);
      return module ? `${module.doc}:${module.line + Number(m[2]) - 1}:${m[3]}: ${m[4]}` : l;
    });
}

/** The annotation and label keys of podlife's domains a manifest may carry, from the built packages. */
async function contractKeys() {
  const keystone = await import(join(ROOT, 'packages/keystone/dist/index.js'));
  const conditions = await import(join(ROOT, 'packages/pod-conditions/dist/index.js'));
  const { Annotation, ManagedLabel, WEBHOOK_OPT_IN_LABEL, PolicyAnnotation, readLifecycle } = keystone;
  // Keys a package may not export (yet) are simply not allowed: an undefined never matches a key.
  const defined = (list) => list.filter((k) => typeof k === 'string' && k.length > 0);
  return {
    readLifecycle,
    prefixes: defined([Annotation.RolePrefix, Annotation.StopPrefix, Annotation.AliasPrefix, Annotation.NativePrefix, PolicyAnnotation?.ContainerPrefix]),
    keys: new Set(defined([Annotation.OnKeystoneExit, Annotation.NativeSidecars, Annotation.Completion, conditions.networkConditionsAnnotation, PolicyAnnotation?.Policies])),
    labels: new Set(defined([ManagedLabel.key, WEBHOOK_OPT_IN_LABEL])),
  };
}

const OURS = /(^|\.)podlife\.dev\/|^sidecars\.alpha\.kubernetes\.io\//;

/** The pod templates of a manifest: a Pod, a Job's, a CronJob's, a workload's; or a bare metadata fragment. */
function podsOf(object) {
  if (!object || typeof object !== 'object') return [];
  switch (object.kind) {
    case 'Pod':
      return [{ pod: object, full: true }];
    case 'CronJob':
      return [{ pod: object.spec?.jobTemplate?.spec?.template ?? {}, full: true }];
    case 'Job':
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicaSet':
      return [{ pod: object.spec?.template ?? {}, full: true }];
    case undefined:
      return object.metadata ? [{ pod: object, full: false }] : [];
    default:
      return [];
  }
}

async function checkOthers(others) {
  const problems = [];
  const yamlBlocks = others.filter((b) => b.lang === 'yaml' || b.lang === 'yml');
  if (yamlBlocks.length === 0 && others.length === 0) return problems;
  // yaml is the workspace's own dependency (node-readiness reads its CRD with it); the root has none.
  const YAML = createRequire(join(ROOT, 'packages/node-readiness/package.json'))('yaml');
  const contract = yamlBlocks.length > 0 ? await contractKeys() : undefined;
  for (const block of others) {
    const where = `${block.doc}:${block.line}`;
    if (block.lang === 'json') {
      try {
        JSON.parse(block.code);
      } catch (err) {
        problems.push(`${where}: the json block does not parse: ${err.message}`);
      }
      continue;
    }
    const parsed = YAML.parseAllDocuments(block.code);
    for (const document of parsed) {
      for (const error of document.errors) problems.push(`${where}: the yaml block does not parse: ${error.message.split('\n')[0]}`);
      if (document.errors.length > 0) continue;
      for (const { pod, full } of podsOf(document.toJS())) {
        for (const [key, kind] of [...Object.keys(pod.metadata?.annotations ?? {}).map((k) => [k, 'annotation']), ...Object.keys(pod.metadata?.labels ?? {}).map((k) => [k, 'label'])]) {
          if (!OURS.test(key)) continue;
          const known = kind === 'label' ? contract.labels.has(key) : contract.keys.has(key) || contract.prefixes.some((p) => key.startsWith(p) && key.length > p.length);
          if (!known) problems.push(`${where}: ${kind} ${key} is not a key of podlife's contract (docs/annotations.md)`);
        }
        if (full) {
          const reading = contract.readLifecycle(pod);
          if (reading.kind === 'invalid') for (const error of reading.errors) problems.push(`${where}: ${error.message}`);
        }
      }
    }
  }
  return problems;
}

function runModules(dir, modules) {
  const problems = [];
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  for (const m of modules.filter((x) => x.run)) {
    const js = join(dir, m.path.replace(/^src/, 'dist').replace(/\.ts$/, '.js'));
    const started = Date.now();
    const r = spawnSync(process.execPath, [js], { cwd: dir, env, encoding: 'utf8', timeout: RUN_TIMEOUT_MS, killSignal: 'SIGKILL' });
    const ms = Date.now() - started;
    if (r.status !== 0) {
      const why = r.error?.code === 'ETIMEDOUT' ? `did not end within ${RUN_TIMEOUT_MS / 1000} s` : `exited ${r.status ?? r.signal}`;
      problems.push(`${m.doc}:${m.line}: the block marked run ${why}\n${`${r.stdout}${r.stderr}`.trim().split("\n").slice(-60).map((l) => `    ${l}`).join('\n')}`);
    } else {
      console.log(`doc-snippets: ran ${m.doc}:${m.line} (${ms} ms)`);
    }
  }
  return problems;
}

async function main(argv) {
  const started = Date.now();
  const noRun = argv.includes('--no-run');
  const extractAt = argv.includes('--extract') ? argv[argv.indexOf('--extract') + 1] : undefined;
  const named = argv.filter((a, i) => !a.startsWith('--') && argv[i - 1] !== '--extract');
  const docs = named.length > 0 ? named.map((f) => relative(ROOT, resolve(f))) : documents();

  if (extractAt) {
    mkdirSync(extractAt, { recursive: true });
    const { modules, problems } = extract(resolve(extractAt), docs);
    for (const p of problems) console.error(p);
    console.log(JSON.stringify(modules.map((m) => ({ doc: m.doc, line: m.line, path: m.path, run: m.run })), null, 2));
    process.exit(problems.length > 0 ? 1 : 0);
  }

  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  if (!argv.includes('--no-build')) {
    try {
      execFileSync(process.execPath, [tsc, '-b'], { cwd: ROOT, stdio: 'inherit' });
    } catch {
      console.error('doc-snippets: tsc -b failed (above): the packages must build before their docs can be checked against them');
      process.exit(1);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'podlife-doc-snippets-'));
  try {
    makeProject(dir);
    const { modules, problems, others } = extract(dir, docs);
    if (modules.length > 0) {
      const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir, encoding: 'utf8' });
      if (r.status !== 0) problems.push(...mapDiagnostics(`${r.stdout}${r.stderr}`, modules));
      else if (!noRun) problems.push(...runModules(dir, modules));
    }
    problems.push(...(await checkOthers(others)));
    for (const p of problems) console.error(p);
    const ran = noRun ? 0 : modules.filter((m) => m.run).length;
    const summary = `${docs.length} documents: ${modules.length} ts blocks type-checked, ${ran} run, ${others.length} yaml/json blocks parsed; ${((Date.now() - started) / 1000).toFixed(1)} s`;
    if (problems.length > 0) {
      console.error(`doc-snippets: ${problems.length} problem${problems.length === 1 ? '' : 's'} (${summary})`);
      process.exitCode = 1;
    } else {
      console.log(`doc-snippets: ${summary}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
