/**
 * The controller replicas of a soak: `podlife-controller` (its real entry point, run from the
 * sources) as separate processes with leader election, kept running as a Deployment would.
 *
 * Guarantees:
 * - each replica runs in a process group of its own (test/support/processes.ts), so it is killed
 *   with the soak however the soak ends;
 * - a replica that exits (killed, lost its lease, failed to start) is started again after
 *   RESTART_DELAY_MS under a new identity (`replica-a-2`), so its Events and its Lease are told
 *   apart from its previous life's; `stop()` ends that;
 * - nothing here looks inside the controller: who leads is read from the Lease.
 */
import { join } from 'node:path';
import type { KubeClient } from '@podlife/core';
import { type ManagedProcess, startProcess } from '@podlife/testbed';

export const RESTART_DELAY_MS = 2000;
export const LEASE_NAME = 'podlife-controller';

export interface ReplicaSetup {
  /** `node` arguments before the controller's own flags (loader, conditions, entry file). */
  entry: string[];
  flags: string[];
  logDir: string;
  note: (line: string) => void;
}

export class Replica {
  private incarnation = 0;
  private proc?: ManagedProcess;
  private stopping = false;
  private restartTimer?: NodeJS.Timeout;

  constructor(readonly slot: string, private readonly setup: ReplicaSetup) {}

  get identity(): string {
    return `replica-${this.slot}-${this.incarnation}`;
  }

  get running(): boolean {
    return this.proc?.running === true;
  }

  start(): void {
    this.incarnation++;
    const identity = this.identity;
    const proc = startProcess({
      name: `podlife-controller ${identity}`,
      command: process.execPath,
      args: [...this.setup.entry, ...this.setup.flags],
      logPath: join(this.setup.logDir, `${identity}.log`),
      env: { ...process.env, POD_NAME: identity },
    });
    this.proc = proc;
    void proc.exited.then((info) => {
      if (this.stopping) return;
      this.setup.note(`${identity} exited (${info.signal ?? `code ${info.code}`}); starting it again in ${RESTART_DELAY_MS / 1000} s`);
      this.restartTimer = setTimeout(() => {
        if (!this.stopping) this.start();
      }, RESTART_DELAY_MS);
    });
  }

  /** SIGKILL to the whole process group: no shutdown, no lease release. */
  kill(): void {
    if (this.proc?.running) process.kill(-this.proc.pid, 'SIGKILL');
  }

  /** SIGTERM; resolves with the time until the process exited (SIGKILL after `graceMs`). */
  async terminate(graceMs: number): Promise<{ ms: number; info: string }> {
    const proc = this.proc;
    if (!proc?.running) return { ms: 0, info: 'not running' };
    const started = Date.now();
    process.kill(-proc.pid, 'SIGTERM');
    const timer = setTimeout(() => proc.running && process.kill(-proc.pid, 'SIGKILL'), graceMs);
    const info = await proc.exited;
    clearTimeout(timer);
    return { ms: Date.now() - started, info: info.signal ?? `code ${info.code}` };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    await this.proc?.stop(5000);
  }
}

/** The Lease's holder, or undefined when there is none (or the API does not answer). */
export async function leaseHolder(client: KubeClient, namespace: string): Promise<string | undefined> {
  try {
    const lease = await client.request<{ spec?: { holderIdentity?: string } }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${LEASE_NAME}`, timeoutMs: 5000,
    });
    return lease.spec?.holderIdentity || undefined;
  } catch {
    return undefined;
  }
}
