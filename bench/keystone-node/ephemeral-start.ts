// Why the ephemeral stop strategy trails native sidecars by more than a second on a real node:
// how long the kubelet takes to start an ephemeral container, from the moment it is added to the
// pod (pods/ephemeralcontainers) to containerd's startedAt, in two cases, one pod at a time:
// - quiet: the pod has been running untouched for a while;
// - after an exit: the pod's other container has just exited and the API already says so, which
//   is when the keystone controller adds its stop container.
// A kubelet pod worker does not sync a pod again before the pod's runtime status in its cache is
// newer than the end of its last sync, and that cache is refreshed by the PLEG relist, once a
// second. The sync that follows a container's exit has just run, so a stop container added then
// waits for the next relist; a pod left alone has a fresher cache and starts it at once.
// The kubelet's own log says when the pod's update reached it (`SyncLoop UPDATE`, printed at --v=2),
// so the wait is split: request -> update logged by the kubelet -> container started.
// No DESIGN target: the figure explains the ephemeral row of `keystone-node`.
//
//   pnpm bench -- keystone-node-ephemeral
//   pnpm exec tsx --conditions=@podlife/source bench/keystone-node/ephemeral-start.ts [--pods 6]
import os from 'node:os';
import type { V1Pod } from '@kubernetes/client-node';
import { ContentType, resourcePath, sleep } from '@podlife/core';
import { type ControlPlane, nodePrerequisiteProblem, readKubeletLog, type RealNode, startControlPlane, startNode, waitFor } from '@podlife/testbed';
import { loadAverage, percentile } from '../verdict.js';

const i = process.argv.indexOf('--pods');
const PODS = i >= 0 ? Number(process.argv[i + 1]) : 6;
if (!Number.isInteger(PODS) || PODS < 1) throw new Error('--pods must be a positive integer');
const NS = 'ephemeral-start';
const podPath = (name = '', subresource = ''): string =>
  resourcePath({ version: 'v1', resource: 'pods', namespace: NS, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) });

type Case = 'quiet' | 'after an exit';

/** The pod once `ok` holds (polled 50 ms apart, for up to a minute). */
const podWhen = (cp: ControlPlane, name: string, what: string, ok: (p: V1Pod) => boolean): Promise<V1Pod> =>
  waitFor(`${what} in pod ${NS}/${name}`, async () => {
    const pod = await cp.client.get<V1Pod>(podPath(name));
    return ok(pod) ? pod : undefined;
  }, { timeoutMs: 60_000, intervalMs: 50 });

const state = (p: V1Pod, container: string) => p.status?.containerStatuses?.find((s) => s.name === container)?.state;

/** When the kubelet logged the first update of pod `name` from the API at or after `sinceMs`. */
function updateLoggedAt(node: RealNode, name: string, sinceMs: number): number | undefined {
  return readKubeletLog(node.kubeletLogTail(20_000), sinceMs).updates.get(`${NS}/${name}`)?.[0];
}

interface Timing {
  /** The kubelet logged the pod's update, ms after the request was sent. */
  updateMs: number;
  /** containerd started the stop container, ms after the request was sent. */
  startedMs: number;
}

/** One pod of `kind`: when the kubelet saw its stop container and when it started it, after the request that added it. */
async function once(cp: ControlPlane, node: RealNode, kind: Case, n: number): Promise<Timing> {
  const image = node.images.busybox;
  const name = `${kind === 'quiet' ? 'quiet' : 'exited'}-${n}`;
  const containers = [{ name: 'proxy', image, imagePullPolicy: 'Never', command: ['sleep', '3600'] }];
  if (kind === 'after an exit') containers.push({ name: 'app', image, imagePullPolicy: 'Never', command: ['sleep', '2'] });
  await cp.client.create(podPath(), { metadata: { name }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers } });
  await podWhen(cp, name, 'proxy running', (p) => Boolean(state(p, 'proxy')?.running));
  if (kind === 'quiet') await sleep(2500);
  else await podWhen(cp, name, 'app terminated', (p) => Boolean(state(p, 'app')?.terminated));
  const sent = Date.now();
  const stop = { name: 'stop', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 1'], targetContainerName: 'proxy' };
  await cp.client.patch(podPath(name, 'ephemeralcontainers'), { spec: { ephemeralContainers: [stop] } }, ContentType.StrategicMergePatch);
  const pod = await podWhen(cp, name, 'a stop container id', (p) => Boolean(p.status?.ephemeralContainerStatuses?.[0]?.containerID));
  const id = (pod.status?.ephemeralContainerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, '');
  const started = node.containerTimes(id)?.startedAtMs;
  if (!started) throw new Error(`pod ${NS}/${name}: containerd has no start time for the stop container ${id}`);
  const update = updateLoggedAt(node, name, sent);
  if (update === undefined) throw new Error(`pod ${NS}/${name}: the kubelet's log has no SyncLoop UPDATE of it after the request`);
  await cp.client.delete(podPath(name), { gracePeriodSeconds: 0 });
  return { updateMs: update - sent, startedMs: started - sent };
}

async function main(): Promise<void> {
  const problem = nodePrerequisiteProblem();
  if (problem) {
    console.log(`skipped: ${problem}`);
    return;
  }
  const cp = await startControlPlane({ controllerManager: true, scheduler: true });
  let node: RealNode | undefined;
  try {
    node = await startNode(cp, { name: 'ephemeral-node' });
    await cp.client.create('/api/v1/namespaces', { metadata: { name: NS } });
    console.log(`control plane ${cp.version}, node ${node.name} (kubelet ${node.kubeletVersion}); ${PODS} pods per case, one at a time; ${loadAverage()}`);
    const timings: Record<Case, Timing[]> = { quiet: [], 'after an exit': [] };
    for (let n = 0; n < PODS; n++) {
      for (const kind of ['quiet', 'after an exit'] as const) timings[kind].push(await once(cp, node, kind, n));
    }
    const sorted = (kind: Case, f: (t: Timing) => number): number[] => timings[kind].map(f).sort((a, b) => a - b);
    const spread = (xs: number[]): string => `p50 ${Math.round(percentile(xs, 50))} ms  min ${Math.round(xs[0] ?? NaN)} ms  max ${Math.round(xs.at(-1) ?? NaN)} ms`;
    const p50 = (kind: Case): number => percentile(sorted(kind, (t) => t.startedMs), 50);
    console.log('ephemeral container added -> the kubelet logs the pod update -> started (containerd), per case:');
    for (const kind of ['quiet', 'after an exit'] as const) {
      console.log(`  ${kind.padEnd(13)} update logged: ${spread(sorted(kind, (t) => t.updateMs))};  started: ${spread(sorted(kind, (t) => t.startedMs))}  (n=${timings[kind].length})`);
    }
    console.log(`figure: an ephemeral container added right after a container exit starts ${Math.round(p50('after an exit') - p50('quiet'))} ms later at p50 than on a quiet pod (the kubelet's PLEG relist period is 1 s) (no DESIGN target); load average ${os.loadavg()[0]?.toFixed(1)}`);
  } finally {
    await node?.stop();
    await cp.stop();
  }
}

await main();
