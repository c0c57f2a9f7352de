/**
 * hostPID pods on a real node: their containers share the node's PID namespace, where PID 1 is
 * the node's own init, so a signal stop (`kill -s SIG 1` from inside the sidecar) would reach
 * the node. podlife refuses signal stops there and explains why; stops that are not signals
 * still stop the sidecar. In both, the node's PID 1 (the process this test's own PID namespace
 * has as PID 1, the one the kubelet's containers see) is the same process before and after.
 *
 * The refused pod's sidecar runs as a non-root uid, so that even a regression could not signal
 * the node's init: what it would have done shows in podlife's Events instead.
 *
 * @releases newest — what is checked is podlife's own validation and stop path; hostPID itself
 *   behaves alike on every supported release.
 * @real-node
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { CoreV1Event, V1Container, V1Pod } from '@kubernetes/client-node';
import { createLogger, isNotFound, resourcePath } from '@podlife/core';
import { ControllerApp } from '@podlife/controller';
import { containerLog, type ControlPlane, createNamespace, keystoneFlags, type RealNode, roleKey, sharedRealCluster, stopKey, waitFor } from '@podlife/testbed';

const NOBODY = 65534;

/** Start time of PID 1 in clock ticks since boot (field 22 of /proc/1/stat): another process at PID 1 has another. */
function pid1StartTime(stat: string): string {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? '';
}

const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });
const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
const state = (p: V1Pod, c: string) => p.status?.containerStatuses?.find((s) => s.name === c)?.state;

describe('hostPID pods on a real node: the node’s init is never signalled', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let node: RealNode;
  let ns: string;
  let app: ControllerApp;
  let hostPid1: string;

  before(async function () {
    this.timeout(600_000);
    ({ cp, node } = await sharedRealCluster());
    ns = await createNamespace(cp.client, 'host-pid');
    hostPid1 = pid1StartTime(readFileSync('/proc/1/stat', 'utf8'));
    app = new ControllerApp({
      flags: keystoneFlags({ namespaces: [ns] }),
      config: { execCommands: {}, ephemeralContainerImage: node.images.busybox, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [ns] },
      client: cp.client,
      kubeConfig: cp.kubeConfig,
      logger: createLogger('keystone-host-pid', { level: 'warn' }),
      bindAddress: '127.0.0.1',
    });
    await app.start();
  });

  after(async () => {
    await app?.stop();
  });

  afterEach(async () => {
    assert.equal(pid1StartTime(readFileSync('/proc/1/stat', 'utf8')), hostPid1, "the node's PID 1 is the process it was");
  });

  const busybox = (name: string, script: string, uid?: number): V1Container => ({
    name,
    image: node.images.busybox,
    imagePullPolicy: 'Never',
    command: ['sh', '-c', script],
    ...(uid !== undefined ? { securityContext: { runAsUser: uid, runAsGroup: uid } } : {}),
  });

  async function createHostPidPod(name: string, containers: V1Container[], annotations: Record<string, string>): Promise<V1Pod> {
    return cp.client.create<V1Pod>(podsPath(ns), {
      metadata: { name, annotations },
      spec: { hostPID: true, restartPolicy: 'Never', terminationGracePeriodSeconds: 2, enableServiceLinks: false, containers },
    });
  }

  async function podUntil(name: string, what: string, ok: (p: V1Pod) => boolean): Promise<V1Pod> {
    return waitFor(`${name}: ${what}`, async () => {
      const p = await cp.client.get<V1Pod>(podsPath(ns, name));
      return ok(p) ? p : undefined;
    }, { timeoutMs: 60_000, intervalMs: 200 });
  }

  async function podlifeEvents(name: string): Promise<CoreV1Event[]> {
    const list = await cp.client.get<{ items: CoreV1Event[] }>(resourcePath({ version: 'v1', resource: 'events', namespace: ns }));
    return list.items.filter((e) => e.involvedObject?.name === name && e.reportingComponent === 'podlife.dev/controller');
  }

  async function deletePod(name: string): Promise<void> {
    await cp.client.delete(podsPath(ns, name), { gracePeriodSeconds: 0 }).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));
  }

  it('a signal stop is refused and explained; nothing is run in the sidecar, which sees the node’s PID 1', async () => {
    const pod = await createHostPidPod(
      'signal',
      [busybox('app', 'sleep 2; exit 0'), busybox('proxy', 'cat /proc/1/stat; exec sleep 3600', NOBODY)],
      { [roleKey('proxy')]: 'sidecar', [stopKey('proxy')]: 'signal:INT' },
    );
    try {
      const invalid = await podUntil('signal', 'LifecycleValid=False, app exited', (p) => condition(p, 'podlife.dev/LifecycleValid')?.status === 'False' && state(p, 'app')?.terminated !== undefined);
      assert.match(condition(invalid, 'podlife.dev/LifecycleValid')?.message ?? '', /with hostPID, PID 1 is the node's own init/);
      // The sidecar really is in the node's PID namespace: its PID 1 is the node's.
      assert.equal(pid1StartTime(await containerLog(cp.client, ns, 'signal', 'proxy')), hostPid1);
      // Several reconciles' worth of time after the main container exited.
      await new Promise((r) => setTimeout(r, 3000));
      const after = await cp.client.get<V1Pod>(podsPath(ns, 'signal'));
      assert.ok(state(after, 'proxy')?.running, 'the sidecar was left running');
      assert.equal(condition(after, 'podlife.dev/SidecarsStopped'), undefined, 'no stop recorded');
      assert.deepEqual(after.spec?.ephemeralContainers ?? [], [], 'no stop container');
      const reasons = (await podlifeEvents('signal')).map((e) => e.reason);
      assert.ok(reasons.includes('InvalidLifecycleAnnotations'), `Events: ${reasons.join(', ')}`);
      assert.deepEqual(reasons.filter((r) => r === 'StoppingContainer' || r === 'StopFailed'), [], 'no stop was attempted');
      assert.equal(pod.metadata?.uid, after.metadata?.uid);
    } finally {
      await deletePod('signal');
    }
  });

  it('a preset: stop stops the sidecar over the pod loopback', async () => {
    await createHostPidPod(
      'preset',
      [
        // busybox nc has no -z: a GET that gets any HTTP answer (404 here) says the endpoint is up.
        busybox('app', "until wget -q -O /dev/null http://127.0.0.1:15020/ 2>&1 | grep -q 'HTTP/'; do sleep 0.1; done; sleep 1; exit 0"),
        { name: 'istio-proxy', image: node.images.quitserver, imagePullPolicy: 'Never', securityContext: { runAsUser: NOBODY, runAsGroup: NOBODY } },
      ],
      { [roleKey('istio-proxy')]: 'sidecar', [stopKey('istio-proxy')]: 'preset:istio' },
    );
    try {
      const pod = await podUntil('preset', 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
      assert.equal(state(pod, 'istio-proxy')?.terminated?.exitCode, 0, 'quit over the loopback (a signal would read 143)');
    } finally {
      await deletePod('preset');
    }
  });
});
