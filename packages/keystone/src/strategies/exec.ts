/**
 * exec strategy: deliver a stop spec by running a command inside the container (pods/exec).
 *
 * Guarantees:
 * - signals: `kill -s SIG 1`, then `/bin/sh -c 'kill -SIG 1'` for images whose `kill` is only a
 *   shell builtin; the signal name comes from a fixed list, so the shell line is constant text;
 * - http/presets: POST to 127.0.0.1 with curl, then busybox-compatible wget — argv only, no shell;
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
      return [
        ['curl', '-fsS', '-X', 'POST', '--max-time', '5', url],
        ['wget', '-q', '-O-', '--post-data=', '-T', '5', url],
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
