/**
 * CPU time as Linux accounts it, for benchmarks that need to say how busy the machine was while
 * they measured and which process used it.
 *
 * Guarantees: every reader answers undefined where /proc cannot be read (another OS, a process
 * that has exited), never throws; times are in clock ticks of USER_HZ, which /proc/stat and
 * /proc/<pid>/stat share, so shares between them need no conversion.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Clock ticks per second in /proc (USER_HZ): 100 on every Linux architecture Node runs on. */
export const USER_HZ = 100;

/** The machine's CPU time so far: all of it, the idle part (idle and iowait) and the part the hypervisor gave to other guests (steal). */
export interface MachineTicks {
  total: number;
  idle: number;
  steal: number;
}

export function machineTicks(): MachineTicks | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '').trim().split(/\s+/);
    if (fields[0] !== 'cpu' || fields.length < 9) return undefined;
    const ticks = fields.slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
    return { total: ticks.reduce((a, b) => a + b, 0), idle: (ticks[3] ?? 0) + (ticks[4] ?? 0), steal: ticks[7] ?? 0 };
  } catch {
    return undefined;
  }
}

/** A process's own CPU time so far (user + system), in ticks. */
export function processTicks(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th of the line.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks : undefined;
  } catch {
    return undefined;
  }
}

/** A process's command name (`/proc/<pid>/comm`), e.g. `kube-apiserver`. */
export function processName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** CPU used by named processes and by the whole machine between `start()` and `stop()`. */
export class CpuAccount {
  private machine: MachineTicks | undefined;
  private readonly before = new Map<string, number>();
  private started = 0;

  /** `pids`: a label for each process to account (a process that cannot be read is left out). */
  constructor(private readonly pids: ReadonlyMap<string, number>) {}

  start(): void {
    this.started = performance.now();
    this.machine = machineTicks();
    for (const [label, pid] of this.pids) {
      const t = processTicks(pid);
      if (t !== undefined) this.before.set(label, t);
    }
  }

  /**
   * The machine's busy share (of all its CPUs: 100% is every CPU busy) and each process's share of
   * one CPU (200% is two CPUs' worth), over the interval; undefined where /proc could not be read.
   */
  stop(): { machineBusyPct: number; stealPct: number; cpus: number; processPct: Map<string, number> } | undefined {
    const machine = machineTicks();
    const seconds = (performance.now() - this.started) / 1000;
    if (!machine || !this.machine || seconds <= 0) return undefined;
    const total = machine.total - this.machine.total;
    if (total <= 0) return undefined;
    const processPct = new Map<string, number>();
    for (const [label, pid] of this.pids) {
      const before = this.before.get(label);
      const after = processTicks(pid);
      if (before === undefined || after === undefined) continue;
      // A process's ticks over the interval, as a share of one CPU's ticks per second.
      processPct.set(label, (100 * (after - before)) / seconds / USER_HZ);
    }
    return {
      machineBusyPct: (100 * (total - (machine.idle - this.machine.idle))) / total,
      stealPct: (100 * (machine.steal - this.machine.steal)) / total,
      cpus: cpus().length,
      processPct,
    };
  }
}
