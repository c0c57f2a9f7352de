/**
 * exec strategy: deliver a stop spec by running a command inside the container (pods/exec).
 *
 * Guarantees:
 * - signals: SIGNAL_SCRIPT (which first tells whether PID 1 has a handler for the signal, since
 *   the kernel drops a signal sent to a namespace's init from inside without one), then
 *   `kill -s SIG 1` for images without a shell; the script is constant text, the signal name and
 *   number (from a fixed list) are its arguments; a `kill` taken down with the PID namespace
 *   because PID 1 exited (KILLED_WITH_NAMESPACE_EXIT) counts as delivered, not as a failure;
 * - http/presets: POST to 127.0.0.1 with curl, then GNU wget, then a constant sh+nc script
 *   (busybox) — never following a redirect, never a shell line built from the spec;
 * - `exec:<name>` runs exactly the argv the controller configuration names, nothing else;
 * - never throws: the outcome (and every attempt's error) is in the returned `StopAttempt`.
 */
import type { StopSpec } from '../annotations.js';
import type { PodExecApi, PodRef } from './api.js';
import { NO_HANDLER_EXIT } from '../stop-containers.js';

export interface StopAttempt {
  readonly ok: boolean;
  /** What was run, for Events and logs. */
  readonly detail: string;
  readonly error?: string;
  /** The signal went out, but PID 1 has no handler for it, so the kernel dropped it (pid_namespaces(7)). */
  readonly noHandler?: boolean;
}

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = Object.freeze({ HUP: 1, INT: 2, QUIT: 3, KILL: 9, USR1: 10, USR2: 12, TERM: 15 });


/**
 * 128 + SIGKILL: when a container's PID 1 exits, the kernel kills every other process of its PID
 * namespace, the exec'd `kill` included, so a signal that ended PID 1 before `kill` itself exited
 * reads as this exit code. It counts as sent: the sequence then waits for the container to be seen
 * stopped, and escalates as usual when it is not.
 */
export const KILLED_WITH_NAMESPACE_EXIT = 137;

/**
 * Signal PID 1 (`$1` the name, `$2` the number), telling first whether it has a handler: init of a
 * PID namespace gets a signal from inside only if it caught it (SigCgt in /proc/1/status; never
 * for KILL). Without one it prints why and exits NO_HANDLER_EXIT. Only sh builtins and kill.
 */
export const SIGNAL_SCRIPT =
  'm=; while read -r k v; do [ "$k" = SigCgt: ] && m=$v; done < /proc/1/status; ' +
  `if [ -n "$m" ] && [ $(( 0x\${m#????????} >> ($2 - 1) & 1 )) = 0 ]; then ` +
  `echo "PID 1 has no handler for SIG$1, so the kernel drops it when sent from inside the container"; kill -s "$1" 1; exit ${NO_HANDLER_EXIT}; fi; ` +
  'exec kill -s "$1" 1';

/**
 * SIGNAL_SCRIPT for a stop container that shares the target's PID namespace: after the signal
 * it stays until the target's init exits (the kernel then ends it). A container without its own
 * PID namespace that exits first has every process it can reach killed by the runtime's shim
 * (containerd kills all on exit for such containers), which can SIGKILL a target still running
 * its TERM handler.
 */
export const LINGERING_SIGNAL_SCRIPT = SIGNAL_SCRIPT.replace(/exec kill -s "\$1" 1$/, 'kill -s "$1" 1 || exit $?; exec sleep 2147483647');

/** argv for SIGNAL_SCRIPT (or LINGERING_SIGNAL_SCRIPT for a stop container). */
export function signalScriptArgv(signal: string, opts: { linger?: boolean } = {}): string[] {
  return ['/bin/sh', '-c', opts.linger ? LINGERING_SIGNAL_SCRIPT : SIGNAL_SCRIPT, 'podlife-stop', signal, String(SIGNAL_NUMBERS[signal] ?? 0)];
}

export function stopUrl(port: number, path: string): string {
  return `http://127.0.0.1:${port}${path}`;
}

/**
 * A POST to 127.0.0.1 with only sh, printf, nc, head and grep (busybox has them all), which can
 * never follow a redirect: the script is constant text, port and path are positional arguments
 * (`$1`, `$2`), and only a 2xx status line counts as success.
 */
export const POST_SCRIPT =
  `printf 'POST %s HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n' "$2" ` +
  `| nc -w 5 127.0.0.1 "$1" | head -n 1 | grep -q '^HTTP/1\\.[01] 2'`;

/** argv for POST_SCRIPT. */
export function postScriptArgv(port: number, path: string): string[] {
  return ['/bin/sh', '-c', POST_SCRIPT, 'podlife-stop', String(port), path];
}

/** The commands to try, in order, for a stop spec (none when an exec name is not configured). */
export function execCommands(spec: StopSpec, commands: Readonly<Record<string, readonly string[]>> = {}): string[][] {
  switch (spec.kind) {
    case 'signal':
      return [signalScriptArgv(spec.signal), ['kill', '-s', spec.signal, '1']];
    case 'http': {
      const url = stopUrl(spec.port, spec.path);
      // None of these follows a redirect: curl does not without -L, GNU wget is told not to
      // (busybox wget cannot be, and refuses the flag), the script cannot.
      return [
        ['curl', '-fsS', '-X', 'POST', '--max-time', '5', url],
        ['wget', '-q', '-O-', '--post-data=', '--max-redirect=0', '-T', '5', url],
        postScriptArgv(spec.port, spec.path),
      ];
    }
    case 'exec': {
      const argv = Object.hasOwn(commands, spec.name) ? commands[spec.name] : undefined;
      return argv && argv.length > 0 ? [[...argv]] : [];
    }
  }
}

export async function stopByExec(
  api: PodExecApi,
  pod: PodRef,
  container: string,
  spec: StopSpec,
  commands: Readonly<Record<string, readonly string[]>> = {},
  signal?: AbortSignal,
): Promise<StopAttempt> {
  const attempts = execCommands(spec, commands);
  if (attempts.length === 0) {
    return { ok: false, detail: `exec:${spec.kind === 'exec' ? spec.name : ''}`, error: 'no such command in the controller configuration' };
  }
  const errors: string[] = [];
  for (const argv of attempts) {
    const result = await api.exec(pod, container, argv, signal);
    const detail = argv === attempts[0] && spec.kind === 'signal' ? `signal script (${spec.signal} to PID 1)` : argv.join(' ');
    if (result.exitCode === 0) return { ok: true, detail };
    if (spec.kind === 'signal' && argv === attempts[0] && result.exitCode === NO_HANDLER_EXIT) {
      return { ok: true, detail, noHandler: true };
    }
    if (spec.kind === 'signal' && result.exitCode === KILLED_WITH_NAMESPACE_EXIT) {
      return { ok: true, detail: `${detail}; PID 1 ended before kill returned` };
    }
    const why = result.error ?? (result.stderr.trim() || `exit code ${result.exitCode ?? 'unknown'}`);
    errors.push(`${detail}: ${why}`);
    if (signal?.aborted) break;
  }
  return { ok: false, detail: attempts.map((a) => a.join(' ')).join(' || '), error: errors.join('; ') };
}
