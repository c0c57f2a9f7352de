/**
 * Where the soak's Jobs run, and how what happened to their containers is observed: the
 * simulated kubelet (its own record; ephemeral stop strategy) or one real node (node-observer.ts;
 * the controller's default, the exec strategy).
 *
 * Guarantees: a target is ready when returned (the node Ready, the observer synced) and `stop()`
 * leaves nothing of it behind; a target that fails to start stops what it started.
 */
import { chownSync, copyFileSync, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ControlPlane, type KubeletRecord, SCRIPT_ANNOTATION, SimulatedKubelet, startNode } from '@podlife/testbed';
import { CONTAINER_UID } from './busybox.js';
import type { PodFlavour } from './jobs.js';
import { NodeObserver } from './node-observer.js';
import { JOBS_PER_MINUTE, REAL_NODE_JOBS_PER_MINUTE } from './plan.js';
import { repeatedStopEvents, spread, type EventSeen, type Row } from './tally.js';

/** Where the Jobs run: the simulated kubelet or the real node, and how each is observed. */
export interface Target {
  /** For the heading: the kubelet and the stop strategy. */
  readonly describe: string;
  readonly flavour: PodFlavour;
  readonly jobsPerMinute: number;
  /** The controllers' config file, if any (none: the defaults, the exec strategy). */
  readonly controllerConfig?: string;
  readonly stopsSeenAs?: string;
  /** What the kubelet did, as the tally reads it, so far. */
  records(): KubeletRecord[];
  extraRows?(events: readonly EventSeen[]): Row[];
  stop(): Promise<void>;
}

export async function simulatedTarget(cp: ControlPlane, workDir: string): Promise<Target> {
  const records: KubeletRecord[] = [];
  const kubeletLog = createWriteStream(join(workDir, 'kubelet.log'));
  const kubelet = new SimulatedKubelet(cp.client, {
    nodeNames: ['soak-node-1', 'soak-node-2'],
    onRecord: (r) => records.push(r),
    log: (line) => kubeletLog.write(`${new Date().toISOString()} ${line}\n`),
  });
  try {
    await kubelet.start();
  } catch (err) {
    kubeletLog.end();
    throw err;
  }
  return {
    describe: 'simulated kubelet, ephemeral stop strategy',
    flavour: { scriptAnnotation: SCRIPT_ANNOTATION },
    jobsPerMinute: JOBS_PER_MINUTE,
    controllerConfig: 'defaultStrategy: ephemeral\nephemeralContainer:\n  image: soak-stop:1\n',
    records: () => records,
    async stop() {
      await kubelet.stop();
      kubeletLog.end();
    },
  };
}

export async function realNodeTarget(
  cp: ControlPlane,
  opts: { namespace: string; workDir: string; keepLogs: boolean; strategy: 'exec' | 'ephemeral' },
  note: (line: string) => void,
): Promise<Target> {
  const { namespace, workDir, keepLogs, strategy } = opts;
  const node = await startNode(cp, { name: 'soak-node' });
  try {
    const recordDir = join(workDir, 'container-records');
    mkdirSync(recordDir, { recursive: true });
    chownSync(recordDir, CONTAINER_UID, CONTAINER_UID);
    const observer = new NodeObserver(cp.client, namespace, node, recordDir);
    await observer.start();
    note(`node ${node.name} Ready (kubelet ${node.kubeletVersion}, containerd, runc)`);
    return {
      describe: `real node (kubelet ${node.kubeletVersion}, containerd, runc, busybox containers), ${strategy} stop strategy`,
      // exec: no config file, the defaults (`auto` without an ephemeral image is exec).
      ...(strategy === 'ephemeral' ? { controllerConfig: `defaultStrategy: ephemeral\nephemeralContainer:\n  image: ${node.images.busybox}\n` } : {}),
      flavour: { image: node.images.busybox, recordDir },
      jobsPerMinute: REAL_NODE_JOBS_PER_MINUTE,
      stopsSeenAs: 'TERMs the containers recorded, not sent by the kubelet',
      records: () => observer.records(),
      extraRows: (events) => {
        const repeated = repeatedStopEvents(events);
        const starts = observer.startLatenciesMs().sort((a, b) => a - b);
        return [
          { label: 'stops repeated by the controller\'s word (StoppingContainer Events per container)', value: String(repeated.length), pass: repeated.length === 0, examples: repeated },
          { label: `pod start, created -> every container started (1 s steps), p50 / p99 / max (${starts.length} pods)`, value: spread(starts) },
        ];
      },
      async stop() {
        await observer.stop();
        if (keepLogs) copyNodeLogs(node.dir, workDir);
        await node.stop();
      },
    };
  } catch (err) {
    await node.stop();
    throw err;
  }
}

/** Keeps the kubelet's and containerd's logs with the replicas' (the node's folder goes with it). */
function copyNodeLogs(nodeDir: string, workDir: string): void {
  for (const f of ['kubelet.log', 'containerd.log']) {
    try {
      copyFileSync(join(nodeDir, f), join(workDir, f));
    } catch {
      // Never written.
    }
  }
}
