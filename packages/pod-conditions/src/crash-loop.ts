/**
 * Is a container crash-looping? Read from what the kubelet keeps about its restarts, not from one
 * waiting reason.
 *
 * Between two restarts the kubelet shows a crashing container as `terminated` (for several
 * seconds), then `waiting: CrashLoopBackOff` (for the back-off), then `running` again; a status
 * read at any moment is one of the three. What stays across them is `restartCount`, `lastState`
 * and the exit codes, and the restart policy says whether another restart comes.
 *
 * Guarantees:
 * - pure; never throws on partial statuses;
 * - a container the kubelet will not restart (restartPolicy Never, or OnFailure after exit 0) is
 *   never reported as crashing;
 * - a running container counts only while its current run is younger than the kubelet's back-off
 *   reset (10 minutes): a container that crashed once long ago and runs since is not a crash loop.
 */
import type { V1Container, V1ContainerStateTerminated, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import { oneLine } from './text.js';

/** A container's effective restart policy. */
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

/** How a container run ended. */
export interface Termination {
  exitCode: number;
  /** The runtime's reason: `Error`, `Completed`, `OOMKilled`, `StartError`, … */
  reason?: string;
  message?: string;
  /** The signal the exit code stands for (`SIGKILL` for 137), when it is above 128. */
  signal?: string;
  startedAtMs?: number;
  finishedAtMs?: number;
}

/** A container found crash-looping: which state of the loop it is in, and its last exit. */
export interface CrashLoop {
  container: string;
  /** `exited`: terminated, restart pending; `backingOff`: CrashLoopBackOff; `runningAgain`: restarted (not ready yet, unless asked for ready ones). */
  phase: 'exited' | 'backingOff' | 'runningAgain';
  restarts: number;
  /** The most recent exit. */
  last: Termination;
  /** The exit before it, when the kubelet still reports it. */
  previous?: Termination;
  policy: RestartPolicy;
  /** The back-off the kubelet announced (`20s`), while backing off. */
  backOff?: string;
  /** Since when the current run lasts, for `runningAgain`. */
  runningSinceMs?: number;
}

/** After this long without a crash the kubelet resets a container's restart back-off. */
export const backOffResetMs = 10 * 60_000;

const signals: Record<number, string> = {
  1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 9: 'SIGKILL',
  10: 'SIGUSR1', 11: 'SIGSEGV', 12: 'SIGUSR2', 13: 'SIGPIPE', 14: 'SIGALRM', 15: 'SIGTERM',
};

export function termination(t: V1ContainerStateTerminated | undefined): Termination | undefined {
  if (!t || typeof t.exitCode !== 'number') return undefined;
  const out: Termination = { exitCode: t.exitCode };
  if (t.reason) out.reason = t.reason;
  if (t.message?.trim()) out.message = t.message.trim();
  const signal = t.exitCode > 128 ? (signals[t.exitCode - 128] ?? `signal ${t.exitCode - 128}`) : t.signal ? (signals[t.signal] ?? `signal ${t.signal}`) : undefined;
  if (signal) out.signal = signal;
  // A container that never started (StartError) is reported as started at the epoch.
  const started = positive(timeMs(t.startedAt));
  const finished = positive(timeMs(t.finishedAt));
  if (started !== undefined) out.startedAtMs = started;
  if (finished !== undefined) out.finishedAtMs = finished;
  return out;
}

function positive(ms: number | undefined): number | undefined {
  return ms !== undefined && ms > 0 ? ms : undefined;
}

/**
 * The policy the kubelet applies to this container: its own `restartPolicy` when set (native
 * sidecars: Always), else the pod's; init containers of an Always pod restart only on failure.
 */
export function containerRestartPolicy(pod: V1Pod, spec: V1Container | undefined, init: boolean): RestartPolicy {
  const own = spec?.restartPolicy;
  if (own === 'Always' || own === 'OnFailure' || own === 'Never') return own;
  const podPolicy = pod.spec?.restartPolicy;
  const policy: RestartPolicy = podPolicy === 'OnFailure' || podPolicy === 'Never' ? podPolicy : 'Always';
  return init && policy === 'Always' ? 'OnFailure' : policy;
}

export function restartsAfter(policy: RestartPolicy, exitCode: number): boolean {
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

/** The crash loop a container is in at `nowMs`, or undefined. */
export function crashLoop(
  pod: V1Pod,
  spec: V1Container | undefined,
  status: V1ContainerStatus | undefined,
  opts: { init?: boolean; nowMs: number; /** Count a container running again that is ready too (it is up between crashes). */ ready?: boolean },
): CrashLoop | undefined {
  if (!status) return undefined;
  const policy = containerRestartPolicy(pod, spec, opts.init ?? false);
  const restarts = typeof status.restartCount === 'number' ? status.restartCount : 0;
  const current = termination(status.state?.terminated);
  const earlier = termination(status.lastState?.terminated);
  const base = { container: status.name, restarts, policy };

  if (status.state?.waiting?.reason === 'CrashLoopBackOff') {
    const backOff = /^back-off (\S+)/.exec(status.state.waiting.message ?? '')?.[1];
    return { ...base, phase: 'backingOff', last: earlier ?? { exitCode: -1 }, ...(backOff ? { backOff } : {}) };
  }
  if (current) {
    // The kubelet restarts it: this exit is part of a loop once it has restarted before.
    if (!restartsAfter(policy, current.exitCode) || (restarts === 0 && !earlier)) return undefined;
    return { ...base, phase: 'exited', last: current, ...(earlier ? { previous: earlier } : {}) };
  }
  const running = status.state?.running;
  if (running && (status.ready !== true || opts.ready === true) && restarts > 0 && earlier && failed(earlier, policy)) {
    const since = timeMs(running.startedAt);
    if (since === undefined || opts.nowMs - since >= backOffResetMs) return undefined;
    return { ...base, phase: 'runningAgain', last: earlier, runningSinceMs: since };
  }
  return undefined;
}

/** The first exit of a container the kubelet is about to restart (no restart yet). */
export function pendingRestart(pod: V1Pod, spec: V1Container | undefined, status: V1ContainerStatus | undefined, init = false): Termination | undefined {
  const current = termination(status?.state?.terminated);
  if (!current || (status?.restartCount ?? 0) > 0 || status?.lastState?.terminated) return undefined;
  return restartsAfter(containerRestartPolicy(pod, spec, init), current.exitCode) ? current : undefined;
}

function failed(t: Termination, policy: RestartPolicy): boolean {
  // Under Always even exit 0 is a crash: the container was meant to keep running.
  return t.exitCode !== 0 || policy === 'Always';
}

/** `code 3 (Error)`, `code 137 (OOMKilled, SIGKILL)`, `code 128 (StartError: exec: "x": not found)`. */
export function describeExit(t: Termination): string {
  if (t.exitCode < 0) return 'no exit code reported';
  const what = [t.reason, t.signal].filter(Boolean).join(', ');
  const msg = t.message ? `: ${oneLine(t.message, 200)}` : '';
  return `code ${t.exitCode}${what || msg ? ` (${what}${msg})` : ''}`;
}
