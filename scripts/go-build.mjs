// Helpers shared by the scripts that build into a cache folder (control-plane-assets, go-tools,
// node-assets, controller-image): the Go toolchain's version, a child process as a promise or run
// to its end, and the digest stamp a complete cache folder carries.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `~/.cache/podlife` (or under XDG_CACHE_HOME): where built binaries are kept by version. */
export function podlifeCacheRoot() {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'podlife');
}

/** The digest in `dir/stamp.json` when every one of `required` is in `dir`; undefined otherwise. */
export function stampedDigest(dir, required) {
  const stampPath = join(dir, 'stamp.json');
  if (required.some((name) => !existsSync(join(dir, name))) || !existsSync(stampPath)) return undefined;
  try {
    return String(JSON.parse(readFileSync(stampPath, 'utf8')).digest);
  } catch {
    return undefined;
  }
}

/** `go env GOVERSION`, or undefined when no Go toolchain runs here. */
export function goVersion() {
  const r = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  return r.stdout.trim();
}

/** Runs `cmd args` with inherited output; rejects naming the command and folder when it fails. */
export function run(cmd, args, opts) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${cmd} ${args.slice(0, 1).join(' ')} in ${opts.cwd} failed (${signal ?? `exit ${code}`})`));
    });
  });
}

/** Runs `cmd args` to its end and returns its stdout; throws with the last lines of its output when it fails. */
export function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-15).join('\n')}`);
  }
  return r.stdout;
}

/** Milliseconds as seconds with one decimal. */
export function seconds(ms) {
  return Math.round(ms / 100) / 10;
}

/**
 * Appends one build's time to the file PODLIFE_BUILD_TIMES names (one JSON line each), so the test
 * runner's closing summary can say what a run spent building; nothing when it is unset.
 */
export function recordBuildTime(what, buildSeconds) {
  const file = process.env.PODLIFE_BUILD_TIMES;
  if (file === undefined || file === '') return;
  appendFileSync(file, `${JSON.stringify({ what, seconds: buildSeconds })}\n`);
}
