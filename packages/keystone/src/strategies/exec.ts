/**
 * exec strategy: deliver a stop spec by running a command inside the container (pods/exec).
 *
 * Guarantees:
 * - the commands are `execCommands(spec)` (commands.ts), tried in order until one succeeds;
 * - a signal script that reports NO_HANDLER_EXIT, or a `kill` taken down with the PID namespace
 *   because PID 1 exited (KILLED_WITH_NAMESPACE_EXIT), counts as delivered, not as a failure;
 * - one budget per stop, not per command (`STOP_BUDGET_MS` unless told): the attempts share it,
 *   and the stop returns when it runs out even if a transport ignores its signal, so a command
 *   that hangs holds a worker for at most the budget (docs/adr/0261);
 * - a command the transport did not run because the namespace has its share of exec slots ends
 *   the stop at once, `deferred`: nothing was delivered, nothing else is tried;
 * - never throws: the outcome (and every attempt's error) is in the returned `StopAttempt`.
 */
import type { StopSpec } from '../annotations.js';
import { abortText, type ExecResult, type PodExecApi, type PodRef } from './api.js';
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
  /** Nothing was run: the namespace has its share of exec slots; the stop is still to be issued. */
  readonly deferred?: boolean;
}

/** How long one stop through pods/exec may take, every command it tries included. */
export const STOP_BUDGET_MS = 10_000;

/** The longest budget one timer holds (a longer delay would fire at once). */
const MAX_BUDGET_MS = 2 ** 31 - 1;

/** How `stopByExec` runs a stop. */
export interface ExecStopOptions {
  /** The time every attempt of one stop shares; default STOP_BUDGET_MS. */
  readonly budgetMs?: number;
}

/** A signal aborted by `signal` or when `budgetMs` has passed, whichever comes first; `expired` resolves then. */
class Deadline {
  readonly signal: AbortSignal;
  readonly expired: Promise<void>;
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly outer: AbortSignal | undefined;
  private readonly onOuterAbort = () => this.controller.abort(this.outer?.reason);

  constructor(budgetMs: number, outer?: AbortSignal) {
    this.signal = this.controller.signal;
    this.outer = outer;
    this.expired = new Promise((resolve) => this.signal.addEventListener('abort', () => resolve(), { once: true }));
    this.timer = setTimeout(() => this.controller.abort(new Error(`no exit status within the stop's budget of ${budgetMs} ms`)), budgetMs);
    if (outer?.aborted) this.onOuterAbort();
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  /** Why the deadline fired, as an attempt's error. */
  reason(): string {
    return abortText(this.signal);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }
}

/** The exec's result, or an aborted one as soon as the deadline fires (the transport may be still waiting). */
async function execWithin(api: PodExecApi, pod: PodRef, container: string, argv: readonly string[], deadline: Deadline): Promise<ExecResult> {
  if (deadline.signal.aborted) return { exitCode: undefined, stdout: '', stderr: '', error: deadline.reason() };
  const late = deadline.expired.then((): ExecResult => ({ exitCode: undefined, stdout: '', stderr: '', error: deadline.reason() }));
  return Promise.race([api.exec(pod, container, argv, deadline.signal), late]);
}

/**
 * 128 + SIGKILL: when a container's PID 1 exits, the kernel kills every other process of its PID
 * namespace, the exec'd `kill` included, so a signal that ended PID 1 before `kill` itself exited
 * reads as this exit code. It counts as sent: the sequence then waits for the container to be seen
 * stopped, and escalates as usual when it is not.
 */
export const KILLED_WITH_NAMESPACE_EXIT = 137;

/** A command as an error names it: a shell script by its shell, a long command by its program. */
function attemptLabel(argv: readonly string[]): string {
  if (argv[1] === '-c') return `${argv[0]} script`;
  const text = argv.join(' ');
  return text.length <= 48 ? text : (argv[0] ?? 'command');
}

/** Deliver a stop spec through pods/exec, trying the spec's commands in order within one budget. */
export async function stopByExec(
  api: PodExecApi,
  pod: PodRef,
  container: string,
  spec: StopSpec,
  commands: Readonly<Record<string, readonly string[]>> = {},
  signal?: AbortSignal,
  options: ExecStopOptions = {},
): Promise<StopAttempt> {
  const attempts = execCommands(spec, commands);
  if (attempts.length === 0) {
    return { ok: false, detail: `exec:${spec.kind === 'exec' ? spec.name : ''}`, error: 'no such command in the controller configuration' };
  }
  const budgetMs = options.budgetMs ?? STOP_BUDGET_MS;
  if (!(budgetMs > 0) || budgetMs > MAX_BUDGET_MS) {
    return { ok: false, detail: 'pods/exec', error: `the stop's budget must be 1 to ${MAX_BUDGET_MS} ms, got ${String(budgetMs)}` };
  }
  const deadline = new Deadline(budgetMs, signal);
  try {
    return await tryInTurn(api, pod, container, spec, attempts, deadline);
  } finally {
    deadline.dispose();
  }
}

async function tryInTurn(api: PodExecApi, pod: PodRef, container: string, spec: StopSpec, attempts: readonly string[][], deadline: Deadline): Promise<StopAttempt> {
  const errors: string[] = [];
  for (const argv of attempts) {
    const result = await execWithin(api, pod, container, argv, deadline);
    const detail = argv === attempts[0] && spec.kind === 'signal' ? `signal script (${spec.signal} to PID 1)` : argv.join(' ');
    // Errors reach Events: they name an attempt, never spell its script (the log has `detail`).
    const label = argv === attempts[0] && spec.kind === 'signal' ? detail : attemptLabel(argv);
    if (result.deferred) return { ok: false, deferred: true, detail, error: result.error ?? 'not run: no exec slot free' };
    if (result.exitCode === 0) return { ok: true, detail };
    if (spec.kind === 'signal' && argv === attempts[0] && result.exitCode === NO_HANDLER_EXIT) {
      return { ok: true, detail, noHandler: true };
    }
    if (spec.kind === 'signal' && result.exitCode === KILLED_WITH_NAMESPACE_EXIT) {
      return { ok: true, detail: `${detail}; PID 1 ended before kill returned` };
    }
    // A transport cut short by the deadline may say only "aborted": the deadline says why.
    const cut = result.exitCode === undefined && deadline.signal.aborted;
    const why = cut ? deadline.reason() : (result.error ?? (result.stderr.trim() || `exit code ${result.exitCode ?? 'unknown'}`));
    errors.push(`${label}: ${why}`);
    if (deadline.signal.aborted) break;
  }
  return { ok: false, detail: attempts.map((a) => a.join(' ')).join(' || '), error: errors.join('; ') };
}
