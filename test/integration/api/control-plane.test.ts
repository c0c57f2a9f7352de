/**
 * The test harness is the real thing: the pinned kube-apiserver validates, authorizes and stores;
 * the real Job controller creates pods; the simulated kubelet plays only the node's part; and
 * nothing outlives the harness.
 *
 * @releases every — the control plane serves the pinned release, and its own Job controller (which
 *   differs by release) creates the pods.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig, type V1Job, type V1Pod, type V1PodCondition } from '@kubernetes/client-node';
import { ApiError, ContentType, KubeClient, resourcePath } from '@podlife/core';
import { pinnedVersions } from '../../../scripts/control-plane-assets.mjs';
import { type ControlPlane, createNamespace, exitCodeForSignal, isAlive, parseScriptAnnotation, type PodScript, recordPod, SCRIPT_ANNOTATION, sharedControlPlane, signalSentToPid1, SimulatedKubelet, startControlPlane, waitFor } from '@podlife/testbed';

const podsPath = (namespace: string, name?: string, subresource?: string): string =>
  resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource });

function condition(pod: V1Pod | undefined, type: string): V1PodCondition | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type);
}

async function clientFor(kubeconfigPath: string): Promise<KubeClient> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return KubeClient.fromKubeConfig(kc);
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  assert.fail('the API server accepted the request');
}

function pod(name: string, spec: Partial<NonNullable<V1Pod['spec']>> = {}, script?: PodScript): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(script ? { annotations: { [SCRIPT_ANNOTATION]: JSON.stringify(script) } } : {}) },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }], ...spec },
  };
}

describe('local control plane', function () {
  let cp: ControlPlane;

  before(async function () {
    this.timeout(600_000);
    cp = await sharedControlPlane();
  });

  it('serves /version as the pinned Kubernetes release', async function () {
    if (process.env.KUBEBUILDER_ASSETS) this.skip(); // binaries chosen by the user: any version
    const version = await cp.client.get<{ gitVersion: string; major: string; minor: string }>('/version');
    const pinned = pinnedVersions().kubernetes;
    assert.equal(version.gitVersion, pinned);
    assert.equal(`v${version.major}.${version.minor}.`, pinned.slice(0, pinned.lastIndexOf('.') + 1));
    assert.equal(cp.version, pinned);
  });

  it("rejects an invalid Pod with the API server's own validation (422 Invalid, naming the field)", async () => {
    const ns = await createNamespace(cp.client, 'validation');
    const invalid = pod('invalid', { containers: [{ name: 'Not_A_DNS_Label', image: '' }] });
    const err = await rejection(cp.client.create(podsPath(ns), invalid));
    assert.equal(err.status, 422);
    assert.equal(err.reason, 'Invalid');
    assert.match(err.message, /spec\.containers\[0\]\.name/);
    assert.match(err.message, /spec\.containers\[0\]\.image/);
  });

  it('refuses a user that RBAC grants nothing (403 Forbidden)', async () => {
    const ns = await createNamespace(cp.client, 'rbac');
    const alice = await clientFor(await cp.kubeconfigFor('alice', ['team-a']));
    try {
      const err = await rejection(alice.get(podsPath(ns)));
      assert.equal(err.status, 403);
      assert.equal(err.reason, 'Forbidden');
      assert.match(err.message, /User "alice" cannot list resource "pods"/);
    } finally {
      alice.close();
    }
  });

  it('lets a user do exactly what a RoleBinding to its group grants', async () => {
    const ns = await createNamespace(cp.client, 'rbac');
    const rbac = (resource: string): string => resourcePath({ group: 'rbac.authorization.k8s.io', version: 'v1', resource, namespace: ns });
    await cp.client.create(rbac('roles'), {
      metadata: { name: 'pod-reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    });
    await cp.client.create(rbac('rolebindings'), {
      metadata: { name: 'team-a-reads-pods' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'team-a' }],
    });
    const bob = await clientFor(await cp.kubeconfigFor('bob', ['team-a']));
    try {
      const list = await waitFor('RBAC to allow the list', () => bob.get<{ items: unknown[] }>(podsPath(ns)));
      assert.deepEqual(list.items, []);
      const err = await rejection(bob.create(podsPath(ns), pod('p')));
      assert.equal(err.status, 403);
    } finally {
      bob.close();
    }
  });

  it('runs a Job through the real Job controller to Complete when the simulated kubelet finishes its container', async () => {
    const ns = await createNamespace(cp.client, 'job');
    const kubelet = new SimulatedKubelet(cp.client, { nodeNames: [`node-${ns}`] });
    await kubelet.start();
    try {
      const script: PodScript = { containers: { work: { runMs: 500, exitCode: 0 } } };
      const job: V1Job = {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'once' },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { annotations: { [SCRIPT_ANNOTATION]: JSON.stringify(script) } },
            spec: { restartPolicy: 'Never', nodeSelector: { 'kubernetes.io/hostname': `node-${ns}` }, containers: [{ name: 'work', image: 'registry.example/work:1' }] },
          },
        },
      };
      const jobs = resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns });
      await cp.client.create(jobs, job);
      const done = await waitFor('the Job to be Complete', async () => {
        const j = await cp.client.get<V1Job>(`${jobs}/once`);
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
      }, { timeoutMs: 60_000 });
      assert.equal(done.status?.succeeded, 1);
      const pods = await cp.client.get<{ items: V1Pod[] }>(podsPath(ns), { labelSelector: 'job-name=once' });
      assert.equal(pods.items.length, 1);
      const jobPod = pods.items[0];
      assert.equal(jobPod?.metadata?.ownerReferences?.[0]?.kind, 'Job');
      assert.equal(jobPod?.metadata?.ownerReferences?.[0]?.controller, true);
      assert.equal(jobPod?.status?.phase, 'Succeeded');
      assert.equal(jobPod?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    } finally {
      await kubelet.stop();
    }
  });
});

describe('simulated kubelet', function () {
  let cp: ControlPlane;
  let kubelet: SimulatedKubelet;
  let ns: string;
  const node = `sim-${process.pid}`;

  before(async function () {
    this.timeout(600_000);
    cp = await sharedControlPlane();
    kubelet = new SimulatedKubelet(cp.client, { nodeNames: [node] });
    await kubelet.start();
  });
  after(async () => {
    await kubelet?.stop();
  });
  beforeEach(async () => {
    ns = await createNamespace(cp.client, 'kubelet');
  });

  const onNode = { nodeSelector: { 'kubernetes.io/hostname': node } };
  const getPod = (name: string): Promise<V1Pod> => cp.client.get<V1Pod>(podsPath(ns, name));

  it('binds a pending pod to its node and reports it Running and Ready', async () => {
    await cp.client.create(podsPath(ns), pod('web', onNode));
    const ready = await waitFor('Ready=True', async () => {
      const p = await getPod('web');
      return condition(p, 'Ready')?.status === 'True' ? p : undefined;
    });
    assert.equal(ready.spec?.nodeName, node);
    assert.equal(ready.status?.phase, 'Running');
    assert.equal(condition(ready, 'PodScheduled')?.status, 'True');
    assert.equal(condition(ready, 'PodReadyToStartContainers')?.status, 'True');
    assert.equal(condition(ready, 'Initialized')?.status, 'True');
    assert.equal(condition(ready, 'ContainersReady')?.status, 'True');
    assert.ok(ready.status?.podIP);
  });

  it('keeps Ready=False until every readiness gate condition is True', async () => {
    await cp.client.create(podsPath(ns), pod('gated', { ...onNode, readinessGates: [{ conditionType: 'example.com/warm' }] }));
    const waiting = await waitFor('ContainersReady=True', async () => {
      const p = await getPod('gated');
      return condition(p, 'ContainersReady')?.status === 'True' ? p : undefined;
    });
    assert.equal(condition(waiting, 'Ready')?.status, 'False');
    assert.equal(condition(waiting, 'Ready')?.reason, 'ReadinessGatesNotReady');
    await cp.client.patch(podsPath(ns, 'gated', 'status'), {
      status: { conditions: [{ type: 'example.com/warm', status: 'True', lastTransitionTime: new Date().toISOString() }] },
    }, ContentType.StrategicMergePatch);
    await waitFor('Ready=True once the gate is True', async () => condition(await getPod('gated'), 'Ready')?.status === 'True');
  });

  it('ends a container that an ephemeral container signals, with the scripted exit code', async () => {
    const script: PodScript = { containers: { app: { runMs: 200 }, proxy: { exitOnSignal: { TERM: 0 } } } };
    await cp.client.create(podsPath(ns), pod('sidecar', {
      ...onNode, restartPolicy: 'Never',
      containers: [{ name: 'app', image: 'registry.example/app:1' }, { name: 'proxy', image: 'registry.example/proxy:1' }],
    }, script));
    const appDone = await waitFor('app to exit while proxy keeps the pod Running', async () => {
      const p = await getPod('sidecar');
      const app = p.status?.containerStatuses?.find((c) => c.name === 'app');
      return app?.state?.terminated ? p : undefined;
    });
    assert.equal(appDone.status?.phase, 'Running');
    const current = await getPod('sidecar');
    await cp.client.patch(podsPath(ns, 'sidecar', 'ephemeralcontainers'), {
      spec: { ephemeralContainers: [...(current.spec?.ephemeralContainers ?? []),
        { name: 'stopper', image: 'registry.example/busybox:1', command: ['kill', '-TERM', '1'], targetContainerName: 'proxy' }] },
    }, ContentType.StrategicMergePatch);
    const done = await waitFor('the pod to succeed', async () => {
      const p = await getPod('sidecar');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    assert.equal(done.status?.containerStatuses?.find((c) => c.name === 'proxy')?.state?.terminated?.exitCode, 0);
    assert.equal(done.status?.ephemeralContainerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  });

  it('runs an init container once to completion before the app, never restarting it', async () => {
    await cp.client.create(podsPath(ns), pod('initialised', {
      ...onNode,
      initContainers: [{ name: 'setup', image: 'registry.example/setup:1' }],
      containers: [{ name: 'app', image: 'registry.example/app:1' }],
    }, { containers: { setup: { runMs: 100 } } }));
    const ready = await waitFor('Ready=True', async () => {
      const p = await getPod('initialised');
      return condition(p, 'Ready')?.status === 'True' ? p : undefined;
    });
    assert.equal(condition(ready, 'Initialized')?.status, 'True');
    const setup = ready.status?.initContainerStatuses?.[0];
    assert.equal(setup?.state?.terminated?.exitCode, 0);
    assert.equal(setup?.restartCount, 0);
  });

  it('runs a native sidecar beside the app and stops it once the app is done', async () => {
    await cp.client.create(podsPath(ns), pod('native', {
      ...onNode, restartPolicy: 'Never',
      initContainers: [{ name: 'proxy', image: 'registry.example/proxy:1', restartPolicy: 'Always' }],
      containers: [{ name: 'app', image: 'registry.example/app:1' }],
    }, { containers: { app: { runMs: 300 } } }));
    const done = await waitFor('the pod to succeed', async () => {
      const p = await getPod('native');
      return p.status?.phase === 'Succeeded' ? p : undefined;
    });
    assert.equal(done.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
    assert.equal(done.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode, 143);
    assert.equal(condition(done, 'Ready')?.reason, 'PodCompleted');
  });

  it('stops containers on deletion and confirms it with a zero grace period', async () => {
    const script: PodScript = { containers: { app: { signalExitDelayMs: 300 } } };
    await cp.client.create(podsPath(ns), pod('doomed', onNode, script));
    await waitFor('Running', async () => (await getPod('doomed')).status?.phase === 'Running');
    const recording = recordPod(cp.client, ns, 'doomed');
    try {
      await cp.client.delete(podsPath(ns, 'doomed'), { gracePeriodSeconds: 30 });
      await waitFor('the pod to be gone', async () => recording.deleted);
      const last = recording.versions.at(-1);
      assert.ok(last?.metadata?.deletionTimestamp);
      assert.equal(last?.metadata?.deletionGracePeriodSeconds, 0, 'confirmed with a zero grace period');
      const terminated = recording.versions.find((p) => p.status?.containerStatuses?.[0]?.state?.terminated);
      assert.equal(terminated?.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 143);
      assert.equal(terminated?.status?.phase, 'Failed');
    } finally {
      recording.stop();
    }
  });

  it('stops remaining containers when someone else sets a terminal phase, keeping that phase', async () => {
    await cp.client.create(podsPath(ns), pod('ended', { ...onNode, restartPolicy: 'Never' }));
    await waitFor('Running', async () => (await getPod('ended')).status?.phase === 'Running');
    await cp.client.patch(podsPath(ns, 'ended', 'status'), { status: { phase: 'Failed', reason: 'Terminated', message: 'ended by a test' } }, ContentType.MergePatch);
    const stopped = await waitFor('the container to be stopped', async () => {
      const p = await getPod('ended');
      return p.status?.containerStatuses?.[0]?.state?.terminated ? p : undefined;
    });
    assert.equal(stopped.status?.phase, 'Failed');
    assert.equal(stopped.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 143);
  });
});

describe('fault injection', function () {
  let cp: ControlPlane;
  let ns: string;
  const configMaps = (): string => resourcePath({ version: 'v1', resource: 'configmaps', namespace: ns });

  before(async function () {
    this.timeout(180_000);
    // Without the watch cache, watches are served by etcd, so compaction shows through as 410.
    cp = await startControlPlane({ watchCache: false });
    ns = await createNamespace(cp.client, 'faults');
  });
  after(async () => {
    await cp?.stop();
  });

  it('compactEtcd() makes an older resourceVersion 410 Gone', async () => {
    const created = await cp.client.create<{ metadata: { resourceVersion: string } }>(configMaps(), { metadata: { name: 'c' }, data: { n: '0' } });
    for (const n of ['1', '2']) await cp.client.patch(`${configMaps()}/c`, { data: { n } }, ContentType.MergePatch);
    await cp.compactEtcd();
    const res = await cp.client.stream({ path: configMaps(), query: { watch: 1, resourceVersion: created.metadata.resourceVersion } });
    let text = '';
    for await (const chunk of res) {
      text += (chunk as Buffer).toString('utf8');
      if (text.includes('\n')) break;
    }
    res.destroy();
    const event = JSON.parse(text.slice(0, text.indexOf('\n'))) as { type: string; object: { code?: number } };
    assert.equal(event.type, 'ERROR');
    assert.equal(event.object.code, 410, JSON.stringify(event.object));
  });

  it('restartApiServer() brings the same server back with its data', async () => {
    await cp.client.create(configMaps(), { metadata: { name: 'kept' } });
    await cp.restartApiServer();
    const kept = await cp.client.get<{ metadata: { name: string } }>(`${configMaps()}/kept`);
    assert.equal(kept.metadata.name, 'kept');
  });

  it('pauseApiServer() makes requests hang until resumeApiServer()', async () => {
    cp.pauseApiServer();
    try {
      await assert.rejects(cp.client.request({ path: '/readyz', timeoutMs: 1_000 }), /timed out/);
    } finally {
      cp.resumeApiServer();
    }
    await waitFor('the API server to answer again', () => cp.client.request({ path: '/readyz', timeoutMs: 1_000 }).then(() => true));
  });
});

describe('harness teardown', function () {
  it('leaves no process and no temporary folder behind when the test process is killed', async function () {
    this.timeout(180_000);
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', fileURLToPath(new URL('../../support/fixtures/start-and-hang.ts', import.meta.url))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const started = await new Promise<{ pids: number[]; kubeconfigPath: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))) as { pids: number[]; kubeconfigPath: string });
      });
      child.on('exit', (code) => reject(new Error(`the child exited (${code}) before starting its control plane`)));
    });
    assert.equal(started.pids.length, 2);
    child.kill('SIGKILL'); // no exit handler runs: only the reaper can clean up
    await waitFor('every process to be gone', async () => started.pids.every((pid) => !isAlive(pid)), { timeoutMs: 10_000 });
    await waitFor('the temporary folder to be removed', async () => !existsSync(started.kubeconfigPath), { timeoutMs: 5_000 });
  });

  it('leaves no process and no temporary folder behind after stop()', async function () {
    this.timeout(180_000);
    const cp = await startControlPlane({ controllerManager: true });
    const pids = cp.pids();
    assert.equal(pids.length, 3); // etcd, kube-apiserver, kube-controller-manager
    assert.ok(pids.every(isAlive));
    await cp.stop();
    assert.deepEqual(pids.filter(isAlive), []);
    assert.equal(existsSync(cp.kubeconfigPath), false);
  });
});

describe('simulated kubelet script conventions', () => {
  it('reads the signal an ephemeral container sends to PID 1 from its command', () => {
    assert.equal(signalSentToPid1(['kill', '-TERM', '1'], undefined), 'TERM');
    assert.equal(signalSentToPid1(['kill', '1'], undefined), 'TERM');
    assert.equal(signalSentToPid1(['kill'], ['-s', 'INT', '1']), 'INT');
    assert.equal(signalSentToPid1(['sh', '-c', 'kill -15 1'], undefined), 'TERM');
    assert.equal(signalSentToPid1(['sh', '-c', 'kill -SIGQUIT 1 && sleep 1'], undefined), 'QUIT');
    // A script that takes the signal as a positional parameter, as podlife's stop container does.
    assert.equal(signalSentToPid1(['/bin/sh', '-c', 'kill -s "$1" 1 || exit $?; exec sleep 9', 'podlife-stop', 'INT', '2'], undefined), 'INT');
  });

  it('ignores commands that do not signal PID 1', () => {
    assert.equal(signalSentToPid1(['kill', '-TERM', '12'], undefined), undefined);
    assert.equal(signalSentToPid1(['sh'], undefined), undefined);
    assert.equal(signalSentToPid1(undefined, undefined), undefined);
  });

  it('exits 128+N on signal N unless the script says otherwise, and never ignores KILL', () => {
    assert.equal(exitCodeForSignal({}, 'TERM'), 143);
    assert.equal(exitCodeForSignal({ exitOnSignal: { TERM: 0 } }, 'TERM'), 0);
    assert.equal(exitCodeForSignal({ exitOnSignal: { TERM: null } }, 'TERM'), undefined);
    assert.equal(exitCodeForSignal({ exitOnSignal: { KILL: null } }, 'KILL'), 137);
  });

  it('reports a malformed script annotation instead of throwing', () => {
    assert.match(parseScriptAnnotation('{not json').problem ?? '', /sim\.podlife\.dev\/script is not JSON/);
    assert.match(parseScriptAnnotation('[1]').problem ?? '', /must be a JSON object/);
    assert.deepEqual(parseScriptAnnotation('{"sandboxDelayMs":5}').script, { sandboxDelayMs: 5 });
  });
});
