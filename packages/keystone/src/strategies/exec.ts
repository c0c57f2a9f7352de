/**
 * exec strategy: deliver a stop spec by running a command inside the container (pods/exec).
 *
 * Guarantees:
 * - signals: `kill -s SIG 1`, then `/bin/sh -c 'kill -SIG 1'` for images whose `kill` is only a
 *   shell builtin; the signal name comes from a fixed list, so the shell line is constant text;
 * - http/presets: POST to 127.0.0.1 with curl, then GNU wget, then a constant sh+nc script
 *   (busybox) — never following a redirect, never a shell line built from the spec;
 * - `exec:<name>` runs exactly the argv the controller configuration names, nothing else;
 * - never throws: the outcome (and every attempt's error) is in the returned `StopAttempt`.
 */
import type { StopSpec } from '../annotations.js';
import type { PodExecApi, PodRef } from './api.js';

export interface StopAttempt {
  readonly ok: boolean;
  /** What was run, for Events and logs. */
  readonly detail: string;
  readonly error?: string;
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
      return [
        ['kill', '-s', spec.signal, '1'],
        ['/bin/sh', '-c', `kill -${spec.signal} 1`],
      ];
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
    const detail = argv.join(' ');
    if (result.exitCode === 0) return { ok: true, detail };
    const why = result.error ?? (result.stderr.trim() || `exit code ${result.exitCode ?? 'unknown'}`);
    errors.push(`${detail}: ${why}`);
    if (signal?.aborted) break;
  }
  return { ok: false, detail: attempts.map((a) => a.join(' ')).join(' || '), error: errors.join('; ') };
}
