/**
 * A converted sidecar's `signal:USR1` as `lifecycle.stopSignal` (KEP-4960, ADR 0211) on a real
 * node: a control plane and a kubelet of the run's release with the alpha ContainerStopSignals
 * gate on, and podlife's webhook told so (`containerStopSignals: true`).
 *
 * What this host can show, asserted as it is: the API server keeps the stop signal next to the
 * `spec.os.name` the webhook adds (without the gate it drops the field), and the kubelet passes it
 * to the runtime. This host's containerd (Debian's 1.6) does not implement stop signals, so the
 * kubelet reports none in effect, and the kubelet stops the sidecar with TERM: podlife says so in
 * a Warning (StopSignalNotApplied) and in `podlife explain`, which is why the setting stays off by
 * default and is the admin's to turn on.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { createLogger, resourcePath } from '@podlife/core';
import { ControllerApp, devCertificates, webhookEntry } from '@podlife/controller';
import { nativeMechanismNotes } from '@podlife/keystone';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { startNode, type RealNode } from '../support/node.js';
import { keystoneFlags } from '../support/controller-flags.js';
import { waitFor } from '../support/wait.js';

const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });

describe('stop signals of converted sidecars on a real node (ContainerStopSignals on)', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let node: RealNode;
  let app: ControllerApp;
  let tlsDir: string;
  const ns = `stop-signals-${randomBytes(3).toString('hex')}`;
  const hookName = `podlife-stop-signals-${randomBytes(3).toString('hex')}`;

  const busybox = (name: string, script: string): V1Container => ({ name, image: node.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script] });
  const eventNotes = async (name: string) => (await cp.client.get<{ items: { type?: string; reason?: string; note?: string }[] }>(
    resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }), { fieldSelector: `regarding.name=${name}` })).items.map((e) => `${e.type} ${e.reason}: ${e.note}`);

  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane({ controllerManager: true, scheduler: true, apiServerArgs: ['--feature-gates=ContainerStopSignals=true'] });
    node = await startNode(cp, { name: 'node-signals', featureGates: { ContainerStopSignals: true } });
    await cp.client.create('/api/v1/namespaces', { metadata: { name: ns } });
    const certs = await devCertificates(['127.0.0.1']);
    tlsDir = mkdtempSync(join(tmpdir(), 'podlife-signals-tls-'));
    writeFileSync(join(tlsDir, 'tls.crt'), certs.certPem);
    writeFileSync(join(tlsDir, 'tls.key'), certs.keyPem);
    app = new ControllerApp({
      flags: keystoneFlags({ namespaces: [ns], webhookPort: 0, tlsCertFile: join(tlsDir, 'tls.crt'), tlsKeyFile: join(tlsDir, 'tls.key') }),
      config: { execCommands: {}, ephemeralContainerImage: node.images.busybox, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [ns], containerStopSignals: true },
      client: cp.client,
      kubeConfig: cp.kubeConfig,
      logger: createLogger('stop-signals', { level: 'warn' }),
      bindAddress: '127.0.0.1',
    });
    await app.start();
    await cp.client.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
      metadata: { name: hookName },
      webhooks: [webhookEntry({ url: `https://127.0.0.1:${app.webhook!.port}/mutate-pods`, caBundle: Buffer.from(certs.caPem).toString('base64') }, { namespace: 'podlife-system', namespaces: [ns] })],
    });
  });

  after(async () => {
    await cp?.client.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${hookName}`).catch(() => undefined);
    await app?.stop();
    if (tlsDir) rmSync(tlsDir, { recursive: true, force: true });
    await node?.stop();
    await cp?.stop();
  });

  it('signal:USR1 becomes lifecycle.stopSignal with spec.os.name; the node reports none in effect (containerd 1.6), and podlife warns', async () => {
    const spec = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { 'podlife.dev/admission': 'enabled' }, annotations: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'signal:USR1' } },
      spec: {
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 5,
        enableServiceLinks: false,
        containers: [
          busybox('app', 'sleep 4'),
          // Exits 0 on USR1 (its stop spec), 143 on TERM.
          busybox('proxy', "trap 'exit 0' USR1; trap 'exit 143' TERM; sleep 3600 & wait"),
        ],
      },
    });
    const created = await waitFor('the webhook in the admission chain', async () => {
      const dry = await cp.client.create<V1Pod>(podsPath(ns), spec(`dry-${randomBytes(3).toString('hex')}`), { dryRun: 'All' });
      return dry.spec?.initContainers?.length ? dry : undefined;
    }, { timeoutMs: 20_000 }).then(() => cp.client.create<V1Pod>(podsPath(ns), spec('usr1')));
    assert.deepEqual(created.spec?.initContainers?.map((c) => [c.name, c.restartPolicy, c.lifecycle?.stopSignal]), [['proxy', 'Always', 'SIGUSR1']], 'kept by an API server with the gate on');
    assert.equal(created.spec?.os?.name, 'linux', 'the webhook named the OS, which the API server requires next to a stop signal');
    assert.equal(created.metadata?.annotations?.['native.podlife.dev/proxy'], 'sidecar,stop-signal');

    const running = await waitFor('the native sidecar running', async () => {
      const p = await cp.client.get<V1Pod>(podsPath(ns, 'usr1'));
      return p.status?.initContainerStatuses?.[0]?.state?.running && p;
    }, { timeoutMs: 60_000 });
    const containerd = execFileSync('containerd', ['--version'], { encoding: 'utf8' }).trim();
    const reported = running.status?.initContainerStatuses?.[0]?.stopSignal;
    // Asserted as this host is: a runtime that implements stop signals would report SIGUSR1 here.
    assert.equal(reported, undefined, `${containerd} reports a stop signal in effect (${reported}): the rest of this test expects a runtime without them`);
    const warning = await waitFor('the StopSignalNotApplied Warning', async () => (await eventNotes('usr1')).find((n) => /^Warning StopSignalNotApplied: /.test(n)), { timeoutMs: 30_000 })
      .catch(async (err: Error) => Promise.reject(new Error(`${err.message}\nEvents: ${JSON.stringify(await eventNotes('usr1'))}`)));
    assert.match(warning, /sidecar proxy asks for stop signal SIGUSR1 and node node-signals reports none in effect/);
    assert.ok(nativeMechanismNotes(running).some((n) => /^container proxy: stop signal SIGUSR1; the kubelet reports no stop signal in effect/.test(n)), nativeMechanismNotes(running).join('\n'));

    // What that means: the kubelet ends the native sidecar after the app with TERM, not USR1.
    const done = await waitFor('the pod finished', async () => {
      const p = await cp.client.get<V1Pod>(podsPath(ns, 'usr1'));
      return p.status?.initContainerStatuses?.[0]?.state?.terminated && (p.status.phase === 'Succeeded' || p.status.phase === 'Failed') && p;
    }, { timeoutMs: 60_000 });
    assert.equal(done.status?.initContainerStatuses?.[0]?.state?.terminated?.exitCode, 143, 'stopped with TERM: the runtime did not apply SIGUSR1');
    assert.equal(done.status?.phase, 'Succeeded', 'a native sidecar\'s exit code does not count');
  });
});
