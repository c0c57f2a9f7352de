/**
 * exec strategy: deliver a stop spec by running a command inside the container (pods/exec).
 *
 * Guarantees:
 * - the commands are `execCommands(spec)` (commands.ts), tried in order until one succeeds;
 * - a signal script that reports NO_HANDLER_EXIT, or a `kill` taken down with the PID namespace
 *   because PID 1 exited (KILLED_WITH_NAMESPACE_EXIT), counts as delivered, not as a failure;
 * - never throws: the outcome (and every attempt's error) is in the returned `StopAttempt`.
 */
import type { StopSpec } from '../annotations.js';
import type { PodExecApi, PodRef } from './api.js';
import { execCommands } from './commands.js';
import { NO_HANDLER_EXIT } from '../stop-containers.js';

/** How one stop attempt went, with what was run. */
export interface StopAttempt {
  readonly ok: boolean;
  /** What was run, for Events and logs. */
  readonly detail: string;
  readonly error?: string;
  /** The signal went out, but PID 1 has no handler for it, so the kernel dropped it (pid_namespaces(7)). */
  readonly noHandler?: boolean;
}

/**
 * 128 + SIGKILL: when a container's PID 1 exits, the kernel kills every other process of its PID
 * namespace, the exec'd `kill` included, so a signal that ended PID 1 before `kill` itself exited
 * reads as this exit code. It counts as sent: the sequence then waits for the container to be seen
 * stopped, and escalates as usual when it is not.
 */
export const KILLED_WITH_NAMESPACE_EXIT = 137;

/** Deliver a stop spec through pods/exec, trying the spec's commands in order. */
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
