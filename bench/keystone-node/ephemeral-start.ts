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
// No DESIGN target: the figure explains the ephemeral row of `keystone-node`.
//
//   pnpm bench -- keystone-node-ephemeral
//   pnpm exec tsx --conditions=@podlife/source bench/keystone-node/ephemeral-start.ts [--pods 6]
import os from 'node:os';
import type { V1Pod } from '@kubernetes/client-node';
import { resourcePath, sleep } from '@podlife/core';
import { startControlPlane } from '../../test/support/control-plane.js';
import { nodePrerequisiteProblem, startNode, type RealNode } from '../../test/support/node.js';
import { loadAverage, percentile } from '../verdict.js';

const i = process.argv.indexOf('--pods');
const PODS = i >= 0 ? Number(process.argv[i + 1]) : 6;
if (!Number.isInteger(PODS) || PODS < 1) throw new Error('--pods must be a positive integer');
const NS = 'ephemeral-start';
const podPath = (name = ''): string => resourcePath({ version: 'v1', resource: 'pods', namespace: NS, ...(name ? { name } : {}) });

type Case = 'quiet' | 'after an exit';

/** Polls the pod until `ok` holds (50 ms apart), or throws naming what was awaited. */
async function until(client: { get<T>(path: string): Promise<T> }, name: string, what: string, ok: (p: V1Pod) => boolean, timeoutMs = 60_000): Promise<V1Pod> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pod = await client.get<V1Pod>(podPath(name));
    if (ok(pod)) return pod;
    if (Date.now() > deadline) throw new Error(`pod ${NS}/${name}: no ${what} within ${timeoutMs / 1000} s; status ${JSON.stringify(pod.status)}`);
    await sleep(50);
  }
}

/** One pod of `kind`: its stop container's start, in ms after the request that added it was sent. */
async function once(cp: Awaited<ReturnType<typeof startControlPlane>>, node: RealNode, kind: Case, n: number): Promise<number> {
  const image = node.images.busybox;
  const name = `${kind === 'quiet' ? 'quiet' : 'exited'}-${n}`;
  const containers = [{ name: 'proxy', image, imagePullPolicy: 'Never', command: ['sleep', '3600'] }];
  if (kind === 'after an exit') containers.push({ name: 'app', image, imagePullPolicy: 'Never', command: ['sleep', '2'] });
  await cp.client.create(podPath(), { metadata: { name }, spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers } });
  const running = (p: V1Pod, c: string): boolean => Boolean(p.status?.containerStatuses?.find((s) => s.name === c)?.state?.running);
  await until(cp.client, name, 'running proxy', (p) => running(p, 'proxy'));
  if (kind === 'quiet') await sleep(2500);
  else await until(cp.client, name, 'app terminated', (p) => Boolean(p.status?.containerStatuses?.find((s) => s.name === 'app')?.state?.terminated));
  const sent = Date.now();
  const stop = { name: 'stop', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 1'], targetContainerName: 'proxy' };
  await cp.client.patch(podPath(name) + '/ephemeralcontainers', { spec: { ephemeralContainers: [stop] } }, 'application/strategic-merge-patch+json');
  const pod = await until(cp.client, name, 'stop container', (p) => Boolean(p.status?.ephemeralContainerStatuses?.[0]?.containerID));
  const id = (pod.status?.ephemeralContainerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, '');
  const started = node.containerTimes(id)?.startedAtMs;
  if (!started) throw new Error(`pod ${NS}/${name}: containerd has no start time for the stop container ${id}`);
  await cp.client.delete(podPath(name), { gracePeriodSeconds: 0 });
  return started - sent;
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
    const results: Record<Case, number[]> = { quiet: [], 'after an exit': [] };
    for (let n = 0; n < PODS; n++) {
      for (const kind of ['quiet', 'after an exit'] as const) results[kind].push(await once(cp, node, kind, n));
    }
    console.log('ephemeral container added -> started (containerd), per case:');
    for (const [kind, xs] of Object.entries(results)) {
      const sorted = [...xs].sort((a, b) => a - b);
      console.log(`  ${kind.padEnd(13)} p50 ${Math.round(percentile(sorted, 50))} ms  min ${Math.round(sorted[0] ?? NaN)} ms  max ${Math.round(sorted.at(-1) ?? NaN)} ms  (n=${sorted.length})`);
    }
    const p50 = (k: Case): number => percentile([...results[k]].sort((a, b) => a - b), 50);
    console.log(`figure: an ephemeral container added right after a container exit starts ${Math.round(p50('after an exit') - p50('quiet'))} ms later at p50 than on a quiet pod (the kubelet's PLEG relist period is 1 s) (no DESIGN target); load average ${os.loadavg()[0]?.toFixed(1)}`);
  } finally {
    await node?.stop();
    await cp.stop();
  }
}

await main();
