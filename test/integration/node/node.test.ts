/**
 * The real node itself: what the suites that run on it rely on. A kubelet built from the pinned
 * kubernetes module registers and turns Ready, pods run real containers on a bridge that has no
 * way off this machine, a missing image fails locally, and a node leaves nothing behind, whether
 * it is stopped or its test process is killed outright.
 *
 * @releases every — the harness on each release: its kubelet registers, runs pods and reports that
 *   release; every release-dependent suite stands on it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { containerLog, createNamespace, isAlive, nodeLeftovers, type RealCluster, sharedRealCluster, startControlPlane, startNode, waitFor } from '@podlife/testbed';

describe('a real node (containerd, runc, CNI bridge, kubelet)', function () {
  this.timeout(180_000);
  let cluster: RealCluster;
  let ns: string;

  const pods = () => `/api/v1/namespaces/${ns}/pods`;
  const getPod = (name: string) => cluster.cp.client.get<V1Pod>(`${pods()}/${name}`);

  before(async function () {
    this.timeout(600_000); // a cold machine builds the kubelet and the images first
    cluster = await sharedRealCluster();
    ns = await createNamespace(cluster.cp.client, 'node');
  });

  after(async () => {
    await cluster?.cp.client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  });

  it('registers a Ready node that runs the pinned kubelet, addressed on its bridge, with no taint left', async () => {
    const node = await cluster.cp.client.get<V1Node>(`/api/v1/nodes/${cluster.node.name}`);
    assert.equal(node.status?.nodeInfo?.kubeletVersion, cluster.cp.version);
    assert.equal(node.status?.nodeInfo?.containerRuntimeVersion?.startsWith('containerd://'), true);
    assert.deepEqual(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, cluster.node.ip);
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    await waitFor('the not-ready taint to be lifted', async () => {
      const n = await cluster.cp.client.get<V1Node>(`/api/v1/nodes/${cluster.node.name}`);
      return (n.spec?.taints ?? []).length === 0;
    });
  });

  it('runs real containers whose pods have an address on the bridge and no default route', async () => {
    await cluster.cp.client.create(pods(), {
      metadata: { name: 'routes' },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: cluster.node.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', 'ip route; echo done'] }],
      },
    });
    await waitFor('the pod to succeed', async () => (await getPod('routes')).status?.phase === 'Succeeded', { timeoutMs: 60_000 });
    const pod = await getPod('routes');
    const [prefix] = cluster.node.podSubnet.split('.0/24');
    assert.ok(pod.status?.podIP?.startsWith(`${prefix}.`), `pod IP ${pod.status?.podIP} is on ${cluster.node.podSubnet}`);
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'PodReadyToStartContainers')?.status, 'False'); // the sandbox is gone once the pod is done
    const log = await containerLog(cluster.cp.client, ns, 'routes', 'c');
    assert.match(log, /^done$/m);
    const routes = log.split('\n').filter((l) => l && l !== 'done');
    assert.deepEqual(routes.map((r) => r.split(' ')[0]), [cluster.node.podSubnet], `only the bridge's subnet is routed: ${JSON.stringify(routes)}`);
  });

  it('fails a missing image locally with a real ErrImagePull, never reaching a registry', async () => {
    await cluster.cp.client.create(pods(), {
      metadata: { name: 'no-image' },
      spec: { containers: [{ name: 'c', image: 'registry.example/podlife/absent:1', imagePullPolicy: 'Always' }] },
    });
    let waiting: { reason?: string; message?: string } | undefined;
    await waitFor('the pull to fail', async () => {
      waiting = (await getPod('no-image')).status?.containerStatuses?.[0]?.state?.waiting;
      return waiting?.reason === 'ErrImagePull' || waiting?.reason === 'ImagePullBackOff';
    }, { timeoutMs: 60_000 });
    // The kubelet's Event quotes the pull error: it went to the loopback endpoint, nowhere else.
    const event = await waitFor('the kubelet\'s pull-failure Event', async () => {
      const list = await cluster.cp.client.get<{ items: { reason?: string; message?: string; involvedObject?: { name?: string } }[] }>(`/api/v1/namespaces/${ns}/events`);
      return list.items.find((e) => e.involvedObject?.name === 'no-image' && e.reason === 'Failed' && /Failed to pull image/.test(e.message ?? ''));
    });
    assert.match(event.message ?? '', /127\.0\.0\.1:9/, `the pull went to the loopback endpoint: ${event.message}`);
  });
});

describe('real node teardown', function () {
  this.timeout(300_000);

  it('leaves no process, mount, cgroup, interface or file behind after stop()', async () => {
    const cp = await startControlPlane({ controllerManager: true, scheduler: true });
    try {
      const node = await startNode(cp, { name: 'teardown' });
      await cp.client.create('/api/v1/namespaces/default/pods', {
        metadata: { name: 'still-running' },
        spec: { containers: [{ name: 'c', image: node.images.busybox, imagePullPolicy: 'Never', command: ['sleep', '3600'] }] },
      });
      await waitFor('the pod to run', async () => (await cp.client.get<V1Pod>('/api/v1/namespaces/default/pods/still-running')).status?.phase === 'Running', { timeoutMs: 60_000 });
      assert.equal(node.runningContainerIds().length, 2, 'the sandbox and the container run');
      assert.ok(nodeLeftovers(node).length > 0, 'a running node is visible to the leak check');
      await node.stop();
      assert.deepEqual(nodeLeftovers(node), []);
    } finally {
      await cp.stop();
    }
  });

  it('leaves nothing behind when the test process is killed with a pod running', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', fileURLToPath(new URL('../../support/fixtures/start-node-and-hang.ts', import.meta.url))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const started = await new Promise<{ dir: string; bridge: string; pids: number[]; containers: number }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as { dir: string; bridge: string; pids: number[]; containers: number });
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before its node ran a pod`)));
    });
    assert.equal(started.containers, 2);
    assert.ok(nodeLeftovers(started).length > 0);
    child.kill('SIGKILL'); // no exit handler runs: only the reaper can clean up
    await waitFor('every component to be gone', async () => started.pids.every((pid) => !isAlive(pid)), { timeoutMs: 20_000 });
    await waitFor('the node to leave nothing behind', async () => nodeLeftovers(started).length === 0, { timeoutMs: 30_000 });
  });
});
