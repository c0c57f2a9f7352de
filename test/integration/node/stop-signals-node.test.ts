/**
 * Container stop signals (KEP-4960, `lifecycle.stopSignal`) on real nodes, and a converted
 * sidecar's `signal:USR1` carried by them (ADR 0211): one control plane of the run's release with
 * the alpha ContainerStopSignals gate on (API server and kubelets; alpha and off by default in 1.34
 * and 1.37 alike), and two nodes that differ only in their runtime (docs/adr/0213):
 * - containerd v2 (the pinned build): its CRI plugin sends the container's stop signal and reports
 *   it in the container status, so the kubelet's stop arrives as SIGUSR1;
 * - the host's containerd 1.6: it ignores the stop signal, the kubelet reports none in effect and
 *   stops with TERM; podlife says so (a StopSignalNotApplied Warning, `podlife explain`).
 *
 * What arrived is what the container itself wrote, on a hostPath folder of its node, read after
 * the pod is gone.
 *
 * @releases every — container stop signals (an alpha gate) on each release's API server and
 *   kubelet.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { createLogger, isNotFound, resourcePath } from '@podlife/core';
import { ControllerApp } from '@podlife/controller';
import { nativeMechanismNotes } from '@podlife/keystone';
import { type ControlPlane, keystoneFlags, localWebhook, type LocalWebhook, nativeKey, nodeLeftovers, type RealNode, roleKey, startControlPlane, startNode, stopKey, waitFor } from '@podlife/testbed';

const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });

describe('stop signals on real nodes (ContainerStopSignals on): containerd v2 delivers them, containerd 1.6 does not', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  /** containerd v2: honours lifecycle.stopSignal. */
  let v2: RealNode;
  /** The host's containerd 1.6: ignores it. */
  let v16: RealNode;
  let app: ControllerApp;
  let hook: LocalWebhook | undefined;
  const ns = `stop-signals-${randomBytes(3).toString('hex')}`;
  const hookName = `podlife-stop-signals-${randomBytes(3).toString('hex')}`;

  const recordsDir = (node: RealNode) => join(node.dir, 'records');
  /** What the container wrote to /rec/<file> on its node, or undefined when it wrote nothing. */
  const record = (node: RealNode, file: string) => (existsSync(join(recordsDir(node), file)) ? readFileSync(join(recordsDir(node), file), 'utf8').trim() : undefined);
  const busybox = (name: string, script: string, extra: Partial<V1Container> = {}): V1Container => ({
    name, image: v2.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script], volumeMounts: [{ name: 'rec', mountPath: '/rec' }], ...extra,
  });
  const recVolume = (node: RealNode) => ({ name: 'rec', hostPath: { path: recordsDir(node), type: 'Directory' } });
  const eventNotes = async (name: string) => (await cp.client.get<{ items: { type?: string; reason?: string; note?: string }[] }>(
    resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }), { fieldSelector: `regarding.name=${name}` })).items.map((e) => `${e.type} ${e.reason}: ${e.note}`);
  const getPod = (name: string) => cp.client.get<V1Pod>(podsPath(ns, name));
  const gone = (name: string) => waitFor(`pod ${name} gone`, async () => (await getPod(name).then(() => false, isNotFound)) || undefined, { timeoutMs: 60_000 });

  before(async function () {
    this.timeout(900_000);
    cp = await startControlPlane({ controllerManager: true, scheduler: true, apiServerArgs: ['--feature-gates=ContainerStopSignals=true'] });
    v2 = await startNode(cp, { name: 'node-signals-v2', containerd: 'v2', featureGates: { ContainerStopSignals: true } });
    v16 = await startNode(cp, { name: 'node-signals-16', containerd: 'host', featureGates: { ContainerStopSignals: true } });
    for (const node of [v2, v16]) mkdirSync(recordsDir(node));
    await cp.client.create('/api/v1/namespaces', { metadata: { name: ns } });
    hook = await localWebhook(cp.client, hookName);
    app = new ControllerApp({
      flags: keystoneFlags({ namespaces: [ns], webhookPort: 0, tlsCertFile: hook.certFile, tlsKeyFile: hook.keyFile }),
      config: { execCommands: {}, ephemeralContainerImage: v2.images.busybox, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [ns], containerStopSignals: true },
      client: cp.client,
      kubeConfig: cp.kubeConfig,
      logger: createLogger('stop-signals', { level: 'warn' }),
      bindAddress: '127.0.0.1',
    });
    await app.start();
    await hook.register(app.webhook!.port, [ns]);
  });

  after(async () => {
    await app?.stop();
    await hook?.remove();
    await v2?.stop();
    await v16?.stop();
    await cp?.stop();
  });

  /**
   * A pod whose PID 1 traps USR1 only (TERM, untrapped, does nothing to a PID 1) and writes what it
   * got, with `lifecycle.stopSignal: SIGUSR1`; deleted once running. Returns the status while it ran.
   */
  async function stopPlainPod(node: RealNode, name: string): Promise<V1Pod> {
    await cp.client.create<V1Pod>(podsPath(ns), {
      metadata: { name },
      spec: {
        nodeName: node.name,
        os: { name: 'linux' },
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 4,
        enableServiceLinks: false,
        volumes: [recVolume(node)],
        containers: [busybox('app', `trap 'echo USR1 > /rec/${name}; exit 0' USR1; sleep 3600 & wait`, { lifecycle: { stopSignal: 'SIGUSR1' } })],
      },
    });
    const running = await waitFor(`${name} running`, async () => {
      const p = await getPod(name);
      return p.status?.containerStatuses?.[0]?.state?.running && p;
    }, { timeoutMs: 60_000 });
    assert.equal(running.spec?.containers[0]?.lifecycle?.stopSignal, 'SIGUSR1', 'kept by an API server with the gate on');
    await cp.client.delete(podsPath(ns, name));
    await gone(name);
    return running;
  }

  it('containerd v2: the kubelet stops a container with its lifecycle.stopSignal (SIGUSR1 reached PID 1) and reports it in the status', async () => {
    assert.match(v2.containerdVersion, /^v2\./);
    const running = await stopPlainPod(v2, 'plain-v2');
    assert.equal(record(v2, 'plain-v2'), 'USR1', `containerd ${v2.containerdVersion} did not deliver SIGUSR1 to the container`);
    assert.equal(running.status?.containerStatuses?.[0]?.stopSignal, 'SIGUSR1', 'the status reports the stop signal in effect');
  });

  it('containerd 1.6: the same pod gets TERM, which its PID 1 ignores, and the status reports no stop signal', async () => {
    assert.match(v16.containerdVersion, /^1\.6\./);
    const running = await stopPlainPod(v16, 'plain-16');
    assert.equal(running.status?.containerStatuses?.[0]?.stopSignal, undefined, `containerd ${v16.containerdVersion} reports a stop signal in effect`);
    assert.equal(record(v16, 'plain-16'), undefined, 'no USR1 arrived: the container ran until the kubelet killed it at the end of its grace period');
  });

  /** A pod whose sidecar's stop spec is `signal:USR1`, which the webhook converts to a native sidecar. */
  const sidecarPod = (name: string, node?: RealNode) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { 'podlife.dev/admission': 'enabled' }, annotations: { [roleKey('proxy')]: 'sidecar', [stopKey('proxy')]: 'signal:USR1' } },
    spec: {
      ...(node ? { nodeName: node.name } : {}),
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 5,
      enableServiceLinks: false,
      volumes: [recVolume(node ?? v2)],
      containers: [
        busybox('app', 'sleep 4'),
        // Exits 0 on USR1 (its stop spec), 143 on TERM; writes which one came.
        busybox('proxy', `trap 'echo USR1 > /rec/${name}-proxy; exit 0' USR1; trap 'echo TERM > /rec/${name}-proxy; exit 143' TERM; sleep 3600 & wait`),
      ],
    },
  });

  /** Creates the converted pod on `node`, checks the conversion, and returns it once its sidecar runs. */
  async function convertedAndRunning(node: RealNode, name: string): Promise<V1Pod> {
    const created = await waitFor('the webhook in the admission chain', async () => {
      const dry = await cp.client.create<V1Pod>(podsPath(ns), sidecarPod(`dry-${randomBytes(3).toString('hex')}`), { dryRun: 'All' });
      return dry.spec?.initContainers?.length ? dry : undefined;
    }, { timeoutMs: 20_000 }).then(() => cp.client.create<V1Pod>(podsPath(ns), sidecarPod(name, node)));
    assert.deepEqual(created.spec?.initContainers?.map((c) => [c.name, c.restartPolicy, c.lifecycle?.stopSignal]), [['proxy', 'Always', 'SIGUSR1']], 'kept by an API server with the gate on');
    assert.equal(created.spec?.os?.name, 'linux', 'the webhook named the OS, which the API server requires next to a stop signal');
    assert.equal(created.metadata?.annotations?.[nativeKey('proxy')], 'sidecar,stop-signal');
    return waitFor(`${name}: the native sidecar running`, async () => {
      const p = await getPod(name);
      return p.status?.initContainerStatuses?.[0]?.state?.running && p;
    }, { timeoutMs: 60_000 });
  }

  const finished = (name: string) => waitFor(`${name} finished`, async () => {
    const p = await getPod(name);
    return p.status?.initContainerStatuses?.[0]?.state?.terminated && (p.status.phase === 'Succeeded' || p.status.phase === 'Failed') && p;
  }, { timeoutMs: 60_000 });

  it('containerd v2: signal:USR1 becomes lifecycle.stopSignal, and when the app exits the kubelet stops the sidecar with SIGUSR1', async () => {
    const running = await convertedAndRunning(v2, 'usr1-v2');
    assert.equal(running.status?.initContainerStatuses?.[0]?.stopSignal, 'SIGUSR1', 'the kubelet reports the stop signal in effect');
    assert.ok(nativeMechanismNotes(running).includes('container proxy: stop signal SIGUSR1; the kubelet reports SIGUSR1 in effect'), nativeMechanismNotes(running).join('\n'));

    const done = await finished('usr1-v2');
    assert.equal(record(v2, 'usr1-v2-proxy'), 'USR1', 'the sidecar itself got SIGUSR1');
    assert.equal(done.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode, 0, 'its USR1 handler exited 0');
    assert.equal(done.status?.phase, 'Succeeded');
    assert.deepEqual((await eventNotes('usr1-v2')).filter((n) => /StopSignalNotApplied/.test(n)), [], 'no Warning where the signal is in effect');
  });

  it('containerd 1.6: the same conversion; the kubelet reports no stop signal in effect, podlife warns, and the sidecar gets TERM', async () => {
    const running = await convertedAndRunning(v16, 'usr1-16');
    const reported = running.status?.initContainerStatuses?.[0]?.stopSignal;
    assert.equal(reported, undefined, `containerd ${v16.containerdVersion} reports a stop signal in effect (${reported})`);
    const warning = await waitFor('the StopSignalNotApplied Warning', async () => (await eventNotes('usr1-16')).find((n) => /^Warning StopSignalNotApplied: /.test(n)), { timeoutMs: 30_000 })
      .catch(async (err: Error) => Promise.reject(new Error(`${err.message}\nEvents: ${JSON.stringify(await eventNotes('usr1-16'))}`)));
    assert.match(warning, /sidecar proxy asks for stop signal SIGUSR1 and node node-signals-16 reports none in effect/);
    assert.ok(nativeMechanismNotes(running).some((n) => /^container proxy: stop signal SIGUSR1; the kubelet reports no stop signal in effect/.test(n)), nativeMechanismNotes(running).join('\n'));

    const done = await finished('usr1-16');
    assert.equal(record(v16, 'usr1-16-proxy'), 'TERM', 'the sidecar got TERM, not USR1');
    assert.equal(done.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode, 143, 'stopped with TERM: the runtime did not apply SIGUSR1');
    assert.equal(done.status?.phase, 'Succeeded', 'a native sidecar\'s exit code does not count');
  });

  it('containerd v2: stop() leaves nothing behind', async () => {
    await v2.stop();
    assert.deepEqual(nodeLeftovers(v2), []);
  });
});
