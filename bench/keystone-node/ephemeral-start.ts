// Why the ephemeral stop strategy trails native sidecars on a real node: how long the kubelet
// takes to start an ephemeral container, from the moment it is added to the pod
// (pods/ephemeralcontainers) to containerd's startedAt, in two cases, one pod at a time:
// - quiet: the pod has been running untouched for a while;
// - after an exit: the pod's other container has just exited and the API already says so, which
//   is when the keystone controller adds its stop container.
// A kubelet pod worker does not sync a pod again before the pod's runtime status in its cache is
// newer than the end of its last sync. The generic PLEG refreshes that cache by a relist once a
// second; the sync that follows a container's exit has just run, so a stop container added then
// waits for the next relist, while a pod left alone has a fresher cache and starts it at once.
// The kubelet's own log says when the pod's update reached it (`SyncLoop UPDATE`, printed at --v=2),
// so the wait is split: request -> update logged by the kubelet -> container started.
// Each setup (setups.ts: `relist`, the default PLEG; `evented`, the EventedPLEG gate) is a node of
// its own, one after the other in the same run, both on the pinned containerd v2 (ADR 0277).
// No DESIGN target: the figure explains the ephemeral row of `keystone-node`.
//
//   pnpm bench -- keystone-node-ephemeral
//   pnpm exec tsx --conditions=@podlife/source bench/keystone-node/ephemeral-start.ts [--pods 6] [--setups relist,evented]
import os from 'node:os';
import { type ControlPlane, nodePrerequisiteProblem, type RealNode, startControlPlane } from '@podlife/testbed';
import { judge, loadAverage, percentile } from '../verdict.js';
import { measureStartWait, parseSetups, plegInUse, SETUP_LABELS, START_CASES, startSetupNode, startWaitMs, stopSetupNode, type Setup, type StartTiming } from './setups.js';

const i = process.argv.indexOf('--pods');
const PODS = i >= 0 ? Number(process.argv[i + 1]) : 6;
if (!Number.isInteger(PODS) || PODS < 1) throw new Error('--pods must be a positive integer');
const SETUPS_ASKED = parseSetups(process.argv);
const NS = 'ephemeral-start';

async function measureSetup(cp: ControlPlane, setup: Setup): Promise<void> {
  let node: RealNode | undefined;
  try {
    node = await startSetupNode(cp, setup, 'ephemeral');
    console.log(`\n== ${SETUP_LABELS[setup]}: control plane ${cp.version}, node ${node.name} (kubelet ${node.kubeletVersion}, containerd ${node.containerdVersion}); ${PODS} pods per case, one at a time; ${loadAverage()}`);
    const timings = await measureStartWait(cp, node, NS, PODS);
    const sorted = (xs: StartTiming[], f: (t: StartTiming) => number): number[] => xs.map(f).sort((a, b) => a - b);
    const spread = (xs: number[]): string => `p50 ${Math.round(percentile(xs, 50))} ms  min ${Math.round(xs[0] ?? NaN)} ms  max ${Math.round(xs.at(-1) ?? NaN)} ms`;
    console.log(`${setup}: ${plegInUse(node, setup)}`);
    console.log('ephemeral container added -> the kubelet logs the pod update -> started (containerd), per case:');
    for (const kind of START_CASES) {
      console.log(`  ${kind.padEnd(13)} update logged: ${spread(sorted(timings[kind], (t) => t.updateMs))};  started: ${spread(sorted(timings[kind], (t) => t.startedMs))}  (n=${timings[kind].length})`);
    }
    judge({
      target: `an ephemeral container added right after a container exit, started later than on a quiet pod (p50), ${SETUP_LABELS[setup]}`,
      figure: `+${Math.round(startWaitMs(timings))} ms`,
      note: `n=${PODS} a case; load average ${os.loadavg()[0]?.toFixed(1)}`,
    });
  } finally {
    await stopSetupNode(cp, node);
  }
}

async function main(): Promise<void> {
  const problem = nodePrerequisiteProblem();
  if (problem) {
    console.log(`skipped: ${problem}`);
    return;
  }
  const cp = await startControlPlane({ controllerManager: true, scheduler: true });
  try {
    await cp.client.create('/api/v1/namespaces', { metadata: { name: NS } });
    for (const setup of SETUPS_ASKED) await measureSetup(cp, setup);
  } finally {
    await cp.stop();
  }
}

await main();
