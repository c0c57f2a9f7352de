/**
 * The node setups the real-node benchmarks compare, and the kubelet's wait they differ by.
 *
 * - `relist`: the kubelet's default generic PLEG, which refreshes its pod cache by listing the
 *   containers once a second;
 * - `evented`: the kubelet with the alpha `EventedPLEG` gate (in every pinned release), which
 *   updates the cache from the runtime's container events (CRI `GetContainerEvents`, served by the
 *   pinned containerd v2) and relists only every 300 s as a fallback.
 * Both run the pinned containerd v2, so the PLEG is all that differs (ADR 0277).
 *
 * Guarantees: `startSetupNode` starts one node of a setup; `plegInUse` says, from the kubelet's own
 * log, whether an evented node kept the evented PLEG or fell back to relisting;
 * `measureStartWait` adds a stop container to pods one at a time, as keystone's ephemeral strategy
 * does, on a pod left alone and right after another container of the pod exited, and returns when
 * the kubelet logged each update and when containerd started the container. The difference of
 * the two cases' starts is the wait the setup's kubelet puts on a container added right after an
 * exit (ADR 0241), measured on the node under test.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { ContentType, resourcePath, sleep } from '@podlife/core';
import { type ControlPlane, readKubeletLog, type RealNode, startNode, waitFor } from '@podlife/testbed';
import { percentile } from '../verdict.js';

export const SETUPS = ['relist', 'evented'] as const;
export type Setup = (typeof SETUPS)[number];

export const SETUP_LABELS: Record<Setup, string> = {
  relist: 'relist (generic PLEG, 1 s)',
  evented: 'evented (EventedPLEG, CRI events)',
};

/** `--setups relist,evented` from argv, both by default. */
export function parseSetups(argv: readonly string[]): Setup[] {
  const i = argv.indexOf('--setups');
  if (i < 0) return [...SETUPS];
  const asked = (argv[i + 1] ?? '').split(',').filter((s) => s !== '');
  const unknown = asked.filter((s) => !(SETUPS as readonly string[]).includes(s));
  if (asked.length === 0 || unknown.length > 0) throw new Error(`--setups wants a comma-separated list of ${SETUPS.join(', ')}, got "${argv[i + 1] ?? ''}"`);
  return asked as Setup[];
}

/** A node of `setup`, named after it (pods pinned to it by name, so an earlier setup's Node object does not matter). */
export function startSetupNode(cp: ControlPlane, setup: Setup, prefix: string): Promise<RealNode> {
  return startNode(cp, { name: `${prefix}-${setup}`, containerd: 'v2', ...(setup === 'evented' ? { featureGates: { EventedPLEG: true } } : {}) });
}

/** Stops the node and removes its Node object, so the next setup's node is the only one. */
export async function stopSetupNode(cp: ControlPlane, node: RealNode | undefined): Promise<void> {
  if (!node) return;
  await node.stop();
  await cp.client.delete(`/api/v1/nodes/${node.name}`).catch(() => undefined);
}

/** Which PLEG the node's kubelet ran, from its log. */
export function plegInUse(node: RealNode, setup: Setup): string {
  if (setup === 'relist') return 'generic PLEG (relist every 1 s)';
  const log = node.kubeletLogTail(200_000);
  return /fall(ing)? back to (use )?Generic PLEG/i.test(log)
    ? 'EventedPLEG on, but the kubelet fell back to the generic PLEG (its log says so)'
    : 'evented PLEG (CRI container events; relist every 300 s as a fallback)';
}

export type StartCase = 'quiet' | 'after an exit';
export const START_CASES: readonly StartCase[] = ['quiet', 'after an exit'];

export interface StartTiming {
  /** The kubelet logged the pod's update, ms after the request was sent. */
  updateMs: number;
  /** containerd started the stop container, ms after the request was sent. */
  startedMs: number;
}

const state = (p: V1Pod, container: string) => p.status?.containerStatuses?.find((s) => s.name === container)?.state;

/** One pod of `kind` in `namespace` on `node`: when the kubelet saw its stop container and when it started it, after the request that added it. */
async function startOnce(cp: ControlPlane, node: RealNode, namespace: string, kind: StartCase, name: string): Promise<StartTiming> {
  const podPath = (pod = '', subresource = ''): string => resourcePath({ version: 'v1', resource: 'pods', namespace, ...(pod ? { name: pod } : {}), ...(subresource ? { subresource } : {}) });
  const podWhen = (what: string, ok: (p: V1Pod) => boolean): Promise<V1Pod> =>
    waitFor(`${what} in pod ${namespace}/${name}`, async () => {
      const pod = await cp.client.get<V1Pod>(podPath(name));
      return ok(pod) ? pod : undefined;
    }, { timeoutMs: 60_000, intervalMs: 50 });
  const image = node.images.busybox;
  const containers = [{ name: 'proxy', image, imagePullPolicy: 'Never', command: ['sleep', '3600'] }];
  if (kind === 'after an exit') containers.push({ name: 'app', image, imagePullPolicy: 'Never', command: ['sleep', '2'] });
  await cp.client.create(podPath(), { metadata: { name }, spec: { nodeName: node.name, restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers } });
  await podWhen('proxy running', (p) => Boolean(state(p, 'proxy')?.running));
  if (kind === 'quiet') await sleep(2500);
  else await podWhen('app terminated', (p) => Boolean(state(p, 'app')?.terminated));
  const sent = Date.now();
  const stop = { name: 'stop', image, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'sleep 1'], targetContainerName: 'proxy' };
  await cp.client.patch(podPath(name, 'ephemeralcontainers'), { spec: { ephemeralContainers: [stop] } }, ContentType.StrategicMergePatch);
  const pod = await podWhen('a stop container id', (p) => Boolean(p.status?.ephemeralContainerStatuses?.[0]?.containerID));
  const id = (pod.status?.ephemeralContainerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, '');
  const started = node.containerTimes(id)?.startedAtMs;
  if (!started) throw new Error(`pod ${namespace}/${name}: containerd has no start time for the stop container ${id}`);
  const update = readKubeletLog(node.kubeletLogTail(20_000), sent).updates.get(`${namespace}/${name}`)?.[0];
  if (update === undefined) throw new Error(`pod ${namespace}/${name}: the kubelet's log has no SyncLoop UPDATE of it after the request`);
  await cp.client.delete(podPath(name), { gracePeriodSeconds: 0 });
  return { updateMs: update - sent, startedMs: started - sent };
}

/** `pods` pods per case, one at a time, alternating the cases, in `namespace` (which must exist). */
export async function measureStartWait(cp: ControlPlane, node: RealNode, namespace: string, pods: number): Promise<Record<StartCase, StartTiming[]>> {
  const timings: Record<StartCase, StartTiming[]> = { quiet: [], 'after an exit': [] };
  for (let n = 0; n < pods; n++) {
    for (const kind of START_CASES) timings[kind].push(await startOnce(cp, node, namespace, kind, `${kind === 'quiet' ? 'quiet' : 'exited'}-${n}`));
  }
  return timings;
}

/** p50 of the starts after an exit minus p50 of the quiet starts: the wait a container added right after an exit meets, ms. */
export function startWaitMs(timings: Record<StartCase, StartTiming[]>): number {
  const p50 = (kind: StartCase): number => percentile(timings[kind].map((t) => t.startedMs).sort((a, b) => a - b), 50);
  return p50('after an exit') - p50('quiet');
}
