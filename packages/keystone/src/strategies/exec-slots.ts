/**
 * Exec slots: how many pods/exec calls one namespace may have in flight at once.
 *
 * Guarantees:
 * - at most `perNamespace` calls of one namespace run at a time, so one tenant's hanging commands
 *   hold at most that many of the controller's workers, each for at most a stop's budget
 *   (docs/adr/0261);
 * - a call over its namespace's share is never queued: it returns at once, `deferred`, with
 *   nothing run, so the reconcile that made it gives its worker back instead of waiting;
 * - a slot is given back however the call ends (exit status, error, timeout, abort), and a
 *   namespace with nothing in flight holds no memory.
 */
import type { ExecResult, PodExecApi } from './api.js';

/** Execs one namespace may have in flight unless told otherwise: a quarter of the default 64 workers. */
export const DEFAULT_EXEC_SLOTS_PER_NAMESPACE = 16;

/** Counts the calls in flight per namespace, against one limit for all. */
export class ExecSlots {
  readonly perNamespace: number;
  private readonly inFlight = new Map<string, number>();

  constructor(perNamespace: number = DEFAULT_EXEC_SLOTS_PER_NAMESPACE) {
    if (!Number.isInteger(perNamespace) || perNamespace < 1) {
      throw new RangeError(`exec slots per namespace must be a whole number of at least 1, got ${String(perNamespace)}`);
    }
    this.perNamespace = perNamespace;
  }

  /** Takes a slot of `namespace`: its release function, or undefined when the namespace has its share. */
  tryAcquire(namespace: string): (() => void) | undefined {
    const held = this.inFlight.get(namespace) ?? 0;
    if (held >= this.perNamespace) return undefined;
    this.inFlight.set(namespace, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release(namespace);
    };
  }

  /** Calls in flight in `namespace`. */
  held(namespace: string): number {
    return this.inFlight.get(namespace) ?? 0;
  }

  private release(namespace: string): void {
    const held = (this.inFlight.get(namespace) ?? 1) - 1;
    if (held > 0) this.inFlight.set(namespace, held);
    else this.inFlight.delete(namespace);
  }
}

/** `api` with each namespace held to its share of `slots`; a call over it resolves `deferred` at once. */
export function limitExecPerNamespace(api: PodExecApi, slots: ExecSlots = new ExecSlots()): PodExecApi {
  return {
    async exec(pod, container, command, signal) {
      const release = slots.tryAcquire(pod.namespace);
      if (!release) return busy(pod.namespace, slots.perNamespace);
      try {
        return await api.exec(pod, container, command, signal);
      } finally {
        release();
      }
    },
  };
}

function busy(namespace: string, perNamespace: number): ExecResult {
  return {
    exitCode: undefined,
    stdout: '',
    stderr: '',
    error: `not run: namespace ${namespace} already has ${perNamespace} commands in flight, its share of the controller's exec slots`,
    deferred: true,
  };
}
