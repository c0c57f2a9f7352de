/**
 * What a soak run will do: its options, how many Jobs, and the fault schedule.
 *
 * Guarantees: pure; `parseSoakArgs` never throws, it returns the options or problems naming the
 * flag; the schedule depends on the duration and the seed alone; none is planned in the first
 * 15 s (the replicas elect a leader) or the last 20 s of the load window. Faults run one at a
 * time: one whose moment comes while another runs starts when that one ends.
 */

export type FaultKind = 'leader-kill' | 'apiserver-restart' | 'apiserver-pause' | 'etcd-compaction';

export interface PlannedFault {
  atMs: number;
  kind: FaultKind;
  /** How long the API server stays paused. */
  durationMs?: number;
}

export interface SoakOptions {
  minutes: number;
  seed: number;
  /** Jobs created a minute; undefined: the form's default (31 simulated, 12 on the real node). */
  jobsPerMinute?: number;
  /** Keep the components' logs here instead of a temporary folder removed at the end. */
  logsDir?: string;
  /** Run on a real node (kubelet, containerd, runc, busybox containers) instead of the simulated kubelet. */
  realNode: boolean;
  /** The controllers' stop strategy on the real node (the simulated kubelet has no exec: ephemeral there). */
  strategy: 'exec' | 'ephemeral';
  help: boolean;
}

export const usage = `Usage: pnpm soak [-- options]

  --minutes N       length of the load window in minutes (default 10; Jobs are created throughout,
                    then the soak drains)
  --quick           the 3-minute form (what CI runs); same as --minutes 3
  --seed N          seed of the Jobs' timings and of the fault order (default 1)
  --rate N          Jobs created a minute (default 31; 12 with --real-node)
  --real-node       run on a real node (kubelet, containerd, runc; busybox containers, the exec
                    stop strategy) instead of the simulated kubelet (ephemeral strategy); fewer
                    Jobs a minute (what one node on 2 shared cores sustains). Needs root.
  --strategy S      with --real-node: the controllers' stop strategy, exec (the default) or
                    ephemeral (busybox stop containers)
  --logs DIR        keep the controllers' and the kubelet's logs in DIR
  -h, --help        this text

Exit code 0 when no pod is stuck, no stop is repeated and no Job fails unexpectedly; 1 otherwise.
`;

export function parseSoakArgs(argv: readonly string[]): { ok: true; options: SoakOptions } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  const options: SoakOptions = { minutes: 10, seed: 1, help: false, realNode: false, strategy: 'exec' };
  let strategyGiven = false;
  let quick = false;
  let minutesGiven = false;
  const args = argv.filter((a) => a !== '--');
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => {
      if (inline !== undefined) return inline;
      const next = args[i + 1];
      if (next === undefined || next.startsWith('--')) {
        problems.push(`${flag}: needs a value`);
        return undefined;
      }
      i++;
      return next;
    };
    switch (flag) {
      case '--minutes': {
        const v = value();
        if (v === undefined) break;
        const n = Number(v);
        if (!Number.isFinite(n) || n < 1 || n > 240) problems.push(`--minutes: "${v}" is not a number of minutes between 1 and 240`);
        else options.minutes = n;
        minutesGiven = true;
        break;
      }
      case '--quick':
        quick = true;
        break;
      case '--real-node':
        options.realNode = true;
        break;
      case '--seed': {
        const v = value();
        if (v === undefined) break;
        if (!/^\d{1,9}$/.test(v)) problems.push(`--seed: "${v}" is not a non-negative integer`);
        else options.seed = Number(v);
        break;
      }
      case '--rate': {
        const v = value();
        if (v === undefined) break;
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 600) problems.push(`--rate: "${v}" is not a whole number of Jobs a minute between 1 and 600`);
        else options.jobsPerMinute = n;
        break;
      }
      case '--strategy': {
        const v = value();
        if (v === undefined) break;
        if (v !== 'exec' && v !== 'ephemeral') problems.push(`--strategy: "${v}" is not exec or ephemeral`);
        else options.strategy = v;
        strategyGiven = true;
        break;
      }
      case '--logs': {
        const v = value();
        if (v !== undefined) options.logsDir = v;
        break;
      }
      case '-h':
      case '--help':
        options.help = true;
        break;
      default:
        problems.push(`unknown argument "${arg}"; see --help`);
    }
  }
  if (quick && minutesGiven) problems.push('--quick and --minutes: give one of them (--quick is --minutes 3)');
  if (quick) options.minutes = 3;
  if (strategyGiven && !options.realNode) problems.push('--strategy: only with --real-node (the simulated kubelet runs no exec; it uses ephemeral stop containers)');
  return problems.length > 0 ? { ok: false, problems } : { ok: true, options };
}

/** Jobs created per minute of the load window (the run: 310 in 10 minutes). */
export const JOBS_PER_MINUTE = 31;

/**
 * Jobs a minute on the real node: one kubelet, containerd and runc on 2 cores shared with the
 * control plane, two controllers and other work (docs/adr/0140).
 */
export const REAL_NODE_JOBS_PER_MINUTE = 12;

/** How many of each fault a run of `minutes` gets: per 10 minutes 10 leader kills, 5 restarts, 2 pauses, 5 compactions. */
export function faultCounts(minutes: number): Record<FaultKind, number> {
  return {
    'leader-kill': Math.max(1, Math.round(minutes)),
    'apiserver-restart': Math.max(1, Math.round(minutes / 2)),
    'apiserver-pause': Math.max(1, Math.round(minutes / 5)),
    'etcd-compaction': Math.max(1, Math.round(minutes / 2)),
  };
}

export const PAUSE_MS = 20_000;
const FIRST_FAULT_MS = 15_000;
const QUIET_TAIL_MS = 20_000;

/** The faults, shuffled by the seed and spread evenly over the load window. */
export function faultSchedule(minutes: number, random: () => number): PlannedFault[] {
  const kinds: FaultKind[] = [];
  for (const [kind, n] of Object.entries(faultCounts(minutes)) as [FaultKind, number][]) for (let i = 0; i < n; i++) kinds.push(kind);
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [kinds[i], kinds[j]] = [kinds[j] as FaultKind, kinds[i] as FaultKind];
  }
  const span = minutes * 60_000 - FIRST_FAULT_MS - QUIET_TAIL_MS;
  const step = span / kinds.length;
  return kinds.map((kind, i) => ({
    atMs: Math.round(FIRST_FAULT_MS + i * step),
    kind,
    ...(kind === 'apiserver-pause' ? { durationMs: PAUSE_MS } : {}),
  }));
}
