#!/usr/bin/env node
// Runs the integration suites once per Kubernetes release of the test matrix: the oldest supported
// and the newest release (docs/adr/0170), in that order, or the releases PODLIFE_K8S_VERSIONS names
// (comma-separated, e.g. `1.37,1.34`; PODLIFE_K8S_VERSION alone names one).
//
// Guarantees:
// - one release at a time: its binaries and the node's assets (containerd v2 included) are provided
//   first (built once, then cached), then mocha runs every integration suite with PODLIFE_K8S_VERSION set to it;
// - every release runs even when an earlier one failed; the exit code is non-zero if any failed,
//   and a closing summary names each release with its outcome and time, and repeats each failed
//   test (title, file, first lines of its error) so the end of the log says what failed where;
// - extra arguments go to mocha (e.g. `--grep`).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION_ENV, selectedKubernetesVersion, supportedKubernetesVersions } from './control-plane-assets.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The matrix: the oldest and the newest release this checkout pins. */
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

function run(cmd, args, env) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: repoRoot, env, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', (err) => {
      process.stderr.write(`test-integration: ${cmd}: ${err.message}\n`);
      resolvePromise(1);
    });
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
  });
}

/**
 * The failures the reporter wrote for one release; none when mocha failed before any test ran. A
 * line that does not parse (a mocha killed while writing it) is kept as it is, as the message.
 */
function readFailures(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line !== '').map(parseFailure);
}

function parseFailure(line) {
  try {
    const f = JSON.parse(line);
    return { title: String(f.title ?? ''), file: String(f.file ?? ''), message: String(f.message ?? '') };
  } catch {
    return { title: '(a failure record that does not parse)', file: '', message: line };
  }
}

async function main() {
  const versions = matrixVersions();
  const mochaArgs = process.argv.slice(2);
  const results = [];
  const failuresDir = mkdtempSync(join(tmpdir(), 'podlife-failures-'));
  for (const version of versions) {
    const started = Date.now();
    const failuresFile = join(failuresDir, `${version}.jsonl`);
    const env = { ...process.env, [VERSION_ENV]: version, PODLIFE_FAILURES_FILE: failuresFile };
    process.stderr.write(`test-integration: Kubernetes ${version} (${versions.indexOf(version) + 1} of ${versions.length})\n`);
    let code = await run(process.execPath, [join(repoRoot, 'scripts', 'node-assets.mjs'), '--containerd-v2'], env);
    if (code === 0) {
      const mocha = join(repoRoot, 'node_modules', 'mocha', 'bin', 'mocha.js');
      const reporter = join(repoRoot, 'scripts', 'mocha-spec-failures.cjs');
      code = await run(process.execPath, [mocha, '--config', '.mocharc.integration.json', '--reporter', reporter, ...mochaArgs], env);
    }
    results.push({ version, ok: code === 0, seconds: Math.round((Date.now() - started) / 1000), failures: readFailures(failuresFile) });
  }
  rmSync(failuresDir, { recursive: true, force: true });
  process.stderr.write('\ntest-integration: summary\n');
  for (const r of results) {
    process.stderr.write(`  Kubernetes ${r.version}: ${r.ok ? 'passed' : 'FAILED'} in ${r.seconds}s\n`);
    for (const f of r.failures) {
      process.stderr.write(`    failed: ${f.title}${f.file === '' ? '' : ` (${f.file})`}\n`);
      for (const line of f.message.split('\n')) process.stderr.write(`      ${line}\n`);
    }
  }
  process.exitCode = results.every((r) => r.ok) ? 0 : 1;
}

await main().catch((err) => {
  process.stderr.write(`test-integration: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
