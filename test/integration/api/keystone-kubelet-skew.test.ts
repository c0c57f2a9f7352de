/**
 * Keystone against kubelet version skew, on the simulated kubelet: only what one real node cannot
 * show. `native-sidecars: auto` converts sidecars at admission only when every node's kubelet is
 * >= 1.29; the simulated kubelet registers nodes that claim any version, here one at 1.28.
 * Everything podlife does to a container is proven on the real node in node/keystone-node.test.ts.
 *
 * @releases every — native-sidecar conversion decisions against kubelets of other releases (skew).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { createLogger, resourcePath } from '@podlife/core';
import { ControllerApp, type ControllerConfig, type ControllerFlags } from '@podlife/controller';
import { type ControlPlane, createNamespace, keystoneFlags, localWebhook, type LocalWebhook, podOf, podTemplate, type PodTemplate, SimulatedKubelet, startControlPlane, waitFor } from '@podlife/testbed';

const config: ControllerConfig = { execCommands: {}, ephemeralContainerImage: undefined, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [] };

const flags = keystoneFlags;

const podsPath = (ns: string, name?: string, subresource?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name, subresource });

describe('keystone native sidecars and kubelet version skew (real API server, simulated kubelets)', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let kubelet: SimulatedKubelet;
  let ns: string;

  async function createPod(name: string, template: PodTemplate, query?: Record<string, string>): Promise<V1Pod> {
    return cp.client.create<V1Pod>(podsPath(ns), podOf(name, template), query);
  }

  async function startApp(over: Partial<ControllerFlags> = {}): Promise<ControllerApp> {
    const a = new ControllerApp({
      flags: flags({ namespaces: [ns], ...over }),
      config,
      client: cp.client,
      logger: createLogger('e2e', { level: 'warn' }),
      bindAddress: '127.0.0.1',
    });
    await a.start();
    return a;
  }

  before(async function () {
    this.timeout(180_000);
    cp = await startControlPlane({ controllerManager: true });
    kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['node-a', 'node-b'] });
    await kubelet.start();
    ns = await createNamespace(cp.client, 'kubelet-skew');
  });

  after(async () => {
    await cp?.client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    await kubelet?.stop();
    await cp?.stop();
  });

  describe('native sidecars at admission (the API server calls the webhook over TLS)', () => {
    let webhookApp: ControllerApp;
    let webhook: LocalWebhook | undefined;
    const labels = { 'podlife.dev/admission': 'enabled' };
    const template = () =>
      podTemplate({ containers: [{ name: 'app', image: 'app:1' }, { name: 'proxy', image: 'proxy:1' }], roles: { proxy: 'sidecar' }, labels, script: { containers: { app: { runMs: 60_000 } } } });
    const converted = (p: V1Pod) => p.spec?.initContainers?.some((c) => c.name === 'proxy' && c.restartPolicy === 'Always') ?? false;
    const dryRunPod = async () => createPod(`dry-${randomBytes(3).toString('hex')}`, template(), { dryRun: 'All' });

    before(async () => {
      webhook = await localWebhook(cp.client, 'podlife-e2e');
      webhookApp = await startApp({ controllers: ['keystone'], dryRun: true, webhookPort: 0, tlsCertFile: webhook.certFile, tlsKeyFile: webhook.keyFile });
      await webhook.register(webhookApp.webhook!.port, [ns]);
    });
    after(async () => {
      await cp.client.delete('/api/v1/nodes/node-old').catch(() => undefined);
      await webhookApp?.stop();
      await webhook?.remove();
    });

    it('converts the sidecar to a native one when every node runs kubelet >= 1.29', async () => {
      // The API server picks a new webhook configuration up within a moment.
      await waitFor('the webhook in the admission chain', async () => converted(await dryRunPod()), { timeoutMs: 20_000 });
      const pod = await createPod('native', template());
      assert.deepEqual(pod.spec?.containers.map((c) => c.name), ['app']);
      assert.deepEqual(pod.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['proxy', 'Always']]);
    });

    it('leaves the pod as it is when one node runs an older kubelet', async () => {
      await kubelet.registerNode({ name: 'node-old', kubeletVersion: 'v1.28.9' });
      await waitFor('the webhook to see the old node', async () => !converted(await dryRunPod()), { timeoutMs: 20_000 });
      const pod = await createPod('not-native', template());
      assert.deepEqual(pod.spec?.containers.map((c) => c.name), ['app', 'proxy']);
      assert.equal(pod.spec?.initContainers, undefined);
      await cp.client.delete('/api/v1/nodes/node-old');
    });
  });
});
