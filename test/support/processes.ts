/**
 * Child processes that cannot outlive the test run.
 *
 * Guarantees:
 * - every process starts in a process group of its own, and every signal goes to the whole group,
 *   so anything it forks goes with it;
 * - `stop()` sends SIGCONT (a paused process cannot act on SIGTERM), then SIGTERM, then SIGKILL
 *   after a grace period, and resolves only once the process has exited;
 * - when this Node process exits, normally or on SIGINT/SIGTERM/SIGHUP, every live group is
 *   killed and every registered temporary folder removed, synchronously;
 * - when this Node process dies without running any handler (SIGKILL, OOM), a small reaper shell,
 *   started once per run, notices within a second and does the same from its own lists;
 * - what a process group cannot take with it (a container runtime's shims, mounts, network
 *   interfaces) is undone by a cleanup script registered with `registerCleanupScript`, run after
 *   the groups are killed and before the folders are removed, on every one of those paths;
 * - output goes to a log file whose tail can be quoted in error messages.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logPath: string;
  /** Resolves when the process has exited (for whatever reason). */
  readonly exited: Promise<ExitInfo>;
  readonly running: boolean;
  pause(): void;
  resume(): void;
  stop(graceMs?: number): Promise<ExitInfo>;
  logTail(lines?: number): string;
}

const liveGroups = new Set<number>();
const liveNames = new Map<number, string>();
const tempDirs = new Set<string>();
const cleanupScripts = new Set<string>();
let registryDir: string | undefined;
let reaper: ChildProcess | undefined;
let hooksInstalled = false;

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we wanted.
  }
}

function cleanupNow(): void {
  for (const pgid of liveGroups) {
    killGroup(pgid, 'SIGCONT');
    killGroup(pgid, 'SIGKILL');
  }
  liveGroups.clear();
  for (const script of cleanupScripts) runCleanupScript(script);
  cleanupScripts.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
  if (reaper?.pid) killGroup(reaper.pid, 'SIGKILL');
  if (registryDir) rmSync(registryDir, { recursive: true, force: true });
}

function writeRegistry(): void {
  if (!registryDir) return;
  writeFileSync(join(registryDir, 'groups'), [...liveGroups].join('\n') + '\n');
  writeFileSync(join(registryDir, 'dirs'), [...tempDirs].join('\n') + '\n');
  writeFileSync(join(registryDir, 'scripts'), [...cleanupScripts].join('\n') + '\n');
}

function runCleanupScript(path: string): void {
  if (!existsSync(path)) return;
  spawnSync('sh', [path], { stdio: 'ignore', timeout: 60_000 });
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', cleanupNow);
  for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15], ['SIGHUP', 1]] as const) {
    process.on(signal, () => {
      cleanupNow();
      process.exit(128 + number);
    });
  }
  registryDir = mkdtempSync(join(tmpdir(), 'podlife-reaper-'));
  writeRegistry();
  // The reaper polls this process (dash and bash both take `kill -SIG -PGID`; dash rejects `--`); when it is gone it kills the listed groups and removes the
  // listed folders. Paths come from mkdtemp (no spaces), so word splitting is safe.
  const script = [
    `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`,
    `for g in $(cat "$0/groups" 2>/dev/null); do kill -CONT "-$g" 2>/dev/null; kill -KILL "-$g" 2>/dev/null; done`,
    `for s in $(cat "$0/scripts" 2>/dev/null); do [ -f "$s" ] && sh "$s" >/dev/null 2>&1; done`,
    `for d in $(cat "$0/dirs" 2>/dev/null); do rm -rf "$d"; done`,
    `rm -rf "$0"`,
  ].join('\n');
  reaper = spawn('sh', ['-c', script, registryDir], { detached: true, stdio: 'ignore' });
  reaper.unref();
}

/** A temporary folder removed at exit even if the caller never gets to remove it. */
export function makeTempDir(prefix: string): string {
  installHooks();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  writeRegistry();
  return dir;
}

/**
 * A shell script that undoes what a component leaves outside its process group; it must be
 * idempotent (it may run twice: from `runRegisteredCleanup` and at exit) and live in a folder made by
 * makeTempDir, so it is gone once it has run.
 */
export function registerCleanupScript(path: string): void {
  installHooks();
  cleanupScripts.add(path);
  writeRegistry();
}

/** Runs a registered cleanup script now and forgets it. */
export function runRegisteredCleanup(path: string): void {
  runCleanupScript(path);
  cleanupScripts.delete(path);
  writeRegistry();
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
  writeRegistry();
}

export function startProcess(opts: { name: string; command: string; args: string[]; logPath: string; env?: NodeJS.ProcessEnv; cwd?: string }): ManagedProcess {
  installHooks();
  const fd = openSync(opts.logPath, 'a');
  const child = spawn(opts.command, opts.args, {
    detached: true, // a new process group, led by the child
    stdio: ['ignore', fd, fd],
    env: opts.env ?? process.env,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) {
    throw new Error(`${opts.name}: could not start ${opts.command} (is it executable?)`);
  }
  liveGroups.add(pid);
  liveNames.set(pid, opts.name);
  writeRegistry();
  let running = true;
  const exited = new Promise<ExitInfo>((resolve) => {
    child.on('exit', (code, signal) => {
      running = false;
      // Anything the process forked goes too.
      killGroup(pid, 'SIGKILL');
      liveGroups.delete(pid);
      liveNames.delete(pid);
      writeRegistry();
      resolve({ code, signal });
    });
  });
  child.unref();

  return {
    name: opts.name,
    pid,
    logPath: opts.logPath,
    exited,
    get running() {
      return running;
    },
    pause: () => killGroup(pid, 'SIGSTOP'),
    resume: () => killGroup(pid, 'SIGCONT'),
    async stop(graceMs = 10_000) {
      if (!running) return exited;
      killGroup(pid, 'SIGCONT');
      killGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
      const info = await exited;
      clearTimeout(timer);
      return info;
    },
    logTail(lines = 30) {
      if (!existsSync(opts.logPath)) return '';
      return readFileSync(opts.logPath, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    },
  };
}

/** Processes started here that are still running (a suite that forgot a `stop()` leaves some). */
export function liveProcesses(): { name: string; pid: number }[] {
  return [...liveGroups].map((pid) => ({ name: liveNames.get(pid) ?? 'unknown', pid }));
}

/** Kills every process started here, at once (SIGKILL to each group). */
export function killAllProcesses(): void {
  for (const pid of liveGroups) {
    killGroup(pid, 'SIGCONT');
    killGroup(pid, 'SIGKILL');
  }
}

/** Whether a process id still names a live (not zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the parenthesised command name; Z is a zombie.
    return !/\)\s+Z\s/.test(stat);
  } catch {
    return true;
  }
}
