/**
 * Keystone end to end: the podlife controller against a real kube-apiserver, etcd and the real
 * Job controller, with the simulated kubelet running containers.
 *
 * Stops use the ephemeral-container strategy: pods/exec is served by a kubelet, and the simulated
 * one cannot run commands, so the exec strategy is covered by unit tests only. An ephemeral
 * container whose command is `kill -s SIG 1` makes the simulated kubelet signal its target.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { createLogger, isConflict, isNotFound, resourcePath, type KubeClient } from '@podlife/core';
import { ControllerApp, devCertificates, webhookEntry, type ControllerConfig, type ControllerFlags } from '@podlife/controller';
import { startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { SimulatedKubelet, SCRIPT_ANNOTATION, type PodScript } from '../support/kubelet.js';
import { waitFor } from '../support/wait.js';

const IMAGE = 'stopper:1.0';
const config: ControllerConfig = { execCommands: {}, ephemeralContainerImage: IMAGE, keystoneLimit: 1, defaultStrategy: 'ephemeral', namespaces: [] };

function flags(over: Partial<ControllerFlags>): ControllerFlags {
  return {
    controllers: ['keystone'],
    namespaces: [],
    dryRun: false,
    configPath: undefined,
    kubeconfig: undefined,
    context: undefined,
    leaderElect: false,
    leaderElectionNamespace: 'default',
    leaderElectionId: 'podlife-controller',
    webhookPort: undefined,
    tlsCertFile: undefined,
    tlsKeyFile: undefined,
    metricsPort: undefined,
    healthPort: undefined,
    logLevel: 'warn',
    help: false,
    ...over,
  };
}

interface ContainerDef {
  name: string;
  role?: 'keystone' | 'sidecar';
}

function podTemplate(opts: { containers: ContainerDef[]; annotations?: Record<string, string>; labels?: Record<string, string>; script: PodScript; grace?: number }) {
  const annotations: Record<string, string> = { [SCRIPT_ANNOTATION]: JSON.stringify(opts.script), ...opts.annotations };
  for (const c of opts.containers) if (c.role) annotations[`role.podlife.dev/${c.name}`] = c.role;
  return {
    metadata: { annotations, ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: opts.grace ?? 30,
      containers: opts.containers.map((c) => ({ name: c.name, image: `${c.name}:1` })),
    },
  };
}

const podsPath = (ns: string, name?: string, subresource?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name, subresource });
const getPod = (client: KubeClient, ns: string, name: string) => client.get<V1Pod>(podsPath(ns, name));
const terminated = (pod: V1Pod, c: string) => pod.status?.containerStatuses?.find((s) => s.name === c)?.state?.terminated;
const condition = (pod: V1Pod, type: string) => pod.status?.conditions?.find((c) => c.type === type);
const ephemeralNames = (pod: V1Pod) => (pod.spec?.ephemeralContainers ?? []).map((e) => e.name);

/** What a failed wait shows: podlife's conditions, container states and ephemeral containers. */
function describePod(p: V1Pod): string {
  const states = [...(p.status?.containerStatuses ?? []), ...(p.status?.ephemeralContainerStatuses ?? [])]
    .map((c) => `${c.name}:${Object.keys(c.state ?? {}).join()}${c.state?.terminated ? `(${c.state.terminated.exitCode})` : ''}`);
  return [
    `conditions: ${JSON.stringify(p.status?.conditions?.filter((c) => c.type.startsWith('podlife')))}`,
    `states: ${states.join(' ')}`,
    `ephemeral: ${ephemeralNames(p).join()}`,
  ].join('\n');
}

describe('keystone end to end (real API server, Job controller, simulated kubelet)', function () {
  this.timeout(120_000);
  // These scenarios race a real API server, the Job controller and the simulated kubelet on
  // wall-clock timing, so a failed test gets one more try; a failed wait prints the pod's podlife
  // conditions, container states and ephemeral containers, so a second failure says what went wrong.
  this.retries(1);
  let cp: ControlPlane;
  let kubelet: SimulatedKubelet;
  let ns: string;
  let app: ControllerApp | undefined;

  async function createPod(name: string, template: ReturnType<typeof podTemplate>, query?: Record<string, string>): Promise<V1Pod> {
    return createAfresh<V1Pod>(podsPath(ns), { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...template.metadata }, spec: template.spec }, query);
  }

  /** Creates an object; one left by an earlier try of the same test is deleted first. */
  async function createAfresh<T>(collection: string, body: { metadata: { name: string } } & Record<string, unknown>, query?: Record<string, string>): Promise<T> {
    try {
      return await cp.client.create<T>(collection, body, query);
    } catch (err) {
      if (!isConflict(err) || query?.dryRun) throw err;
      const path = `${collection}/${body.metadata.name}`;
      // Foreground: a Job is gone only once its pods are, so a label query sees only the new ones.
      await cp.client.delete(path, { gracePeriodSeconds: 0, propagationPolicy: 'Foreground' }).catch(() => undefined);
      await waitFor(`${path} deleted`, async () => (await cp.client.get(path).then(() => false, (e: unknown) => isNotFound(e))));
      return cp.client.create<T>(collection, body, query);
    }
  }

  async function startApp(over: Partial<ControllerFlags> = {}, extra: { identity?: string } = {}): Promise<ControllerApp> {
    const a = new ControllerApp({
      flags: flags({ namespaces: [ns], ...over }),
      config,
      client: cp.client,
      logger: createLogger('e2e', { level: 'warn' }),
      bindAddress: '127.0.0.1',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 300,
      ...extra,
    });
    await a.start();
    return a;
  }

  before(async function () {
    this.timeout(180_000);
    cp = await startControlPlane({ controllerManager: true });
    kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['node-a', 'node-b'] });
    await kubelet.start();
    ns = `keystone-e2e-${randomBytes(3).toString('hex')}`;
    await cp.client.create('/api/v1/namespaces', { metadata: { name: ns } });
  });

  after(async () => {
    await app?.stop();
    await cp?.client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    await kubelet?.stop();
    await cp?.stop();
  });

  describe('with one controller', () => {
    before(async () => {
      app = await startApp();
    });
    after(async () => {
      await app?.stop();
      app = undefined;
    });

    it('a Job whose pod has an app and a sidecar completes (ephemeral strategy)', async () => {
      const template = podTemplate({
        containers: [{ name: 'app' }, { name: 'proxy', role: 'sidecar' }],
        script: { containers: { app: { runMs: 500 }, proxy: { exitOnSignal: { TERM: 0 } } } },
      });
      await createAfresh(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns }), {
        metadata: { name: 'with-sidecar' },
        spec: { backoffLimit: 0, template },
      });
      const job = await waitFor('Job with-sidecar Complete', async () => {
        const j = await cp.client.get<V1Job>(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns, name: 'with-sidecar' }));
        assert.ok(!j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True'), `Job failed: ${JSON.stringify(j.status)}`);
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') && j;
      }, { timeoutMs: 60_000 });
      assert.equal(job.status?.succeeded, 1);
      const pods = await cp.client.get<{ items: V1Pod[] }>(podsPath(ns), { labelSelector: 'job-name=with-sidecar' });
      const name = (pods.items[0] as V1Pod).metadata!.name!;
      // The Job controller may see the pod succeed before podlife's last pass records the result.
      const pod = await waitFor('SidecarsStopped=True', async () => {
        const p = await getPod(cp.client, ns, name);
        return condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True' && p;
      });
      assert.deepEqual(ephemeralNames(pod), ['podlife-stop-proxy']);
    });

    it('completion: phase ends the Job as Succeeded even though the sidecar exits 143', async () => {
      const template = podTemplate({
        containers: [{ name: 'app' }, { name: 'proxy', role: 'sidecar' }],
        annotations: { 'podlife.dev/completion': 'phase' },
        script: { containers: { app: { runMs: 500 } } }, // proxy: 128+15 on TERM
      });
      await createAfresh(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns }), {
        metadata: { name: 'by-phase' },
        spec: { backoffLimit: 0, template },
      });
      await waitFor('Job by-phase Complete', async () => {
        const j = await cp.client.get<V1Job>(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns, name: 'by-phase' }));
        assert.ok(!j.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True'), `Job failed: ${JSON.stringify(j.status)}`);
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
      }, { timeoutMs: 60_000 });
      const pods = await cp.client.get<{ items: V1Pod[] }>(podsPath(ns), { labelSelector: 'job-name=by-phase' });
      const pod = pods.items[0] as V1Pod;
      assert.equal(pod.status?.phase, 'Succeeded');
      await waitFor('proxy terminated by the kubelet', async () => terminated(await getPod(cp.client, ns, pod.metadata!.name!), 'proxy'));
      assert.equal(terminated(await getPod(cp.client, ns, pod.metadata!.name!), 'proxy')?.exitCode, 143);
    });

    it('a keystone exit stops the other main containers first, then the sidecar', async () => {
      await createPod('keystone-exit', podTemplate({
        containers: [{ name: 'app', role: 'keystone' }, { name: 'worker' }, { name: 'proxy', role: 'sidecar' }],
        script: { containers: { app: { runMs: 500 } } },
      }));
      const pod = await waitFor('worker and proxy terminated', async () => {
        const p = await getPod(cp.client, ns, 'keystone-exit');
        return terminated(p, 'worker') && terminated(p, 'proxy') && condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True' && p;
      }).catch(async (err: Error) => {
        throw new Error(`${err.message}\n${describePod(await getPod(cp.client, ns, 'keystone-exit'))}`);
      });
      assert.equal(condition(pod, 'podlife.dev/KeystoneFinished')?.status, 'True');
      assert.deepEqual(ephemeralNames(pod).sort(), ['podlife-stop-proxy', 'podlife-stop-worker']);
      const at = (c: string) => Date.parse(String(terminated(pod, c)?.finishedAt));
      assert.ok(at('worker') <= at('proxy'), 'the main container stops before the sidecar');
    });

    it('TerminatePod deletes the pod with its own grace period', async () => {
      await createPod('terminate', podTemplate({
        containers: [{ name: 'app', role: 'keystone' }, { name: 'proxy', role: 'sidecar' }],
        annotations: { 'podlife.dev/on-keystone-exit': 'TerminatePod' },
        grace: 7,
        script: { containers: { app: { runMs: 300 }, proxy: { signalExitDelayMs: 3000 } } },
      }));
      const pod = await waitFor('pod terminating', async () => {
        const p = await getPod(cp.client, ns, 'terminate');
        return p.metadata?.deletionTimestamp && p;
      }, { intervalMs: 50 });
      assert.equal(pod.metadata?.deletionGracePeriodSeconds, 7);
      assert.deepEqual(ephemeralNames(pod), [], 'deleted, not stopped container by container');
    });

    describe('native sidecars at admission (the API server calls the webhook over TLS)', () => {
      let webhookApp: ControllerApp;
      let dir: string;
      const hookName = 'podlife-e2e';
      const labels = { 'podlife.dev/admission': 'enabled' };
      const template = () =>
        podTemplate({ containers: [{ name: 'app' }, { name: 'proxy', role: 'sidecar' }], labels, script: { containers: { app: { runMs: 60_000 } } } });
      const converted = (p: V1Pod) => p.spec?.initContainers?.some((c) => c.name === 'proxy' && c.restartPolicy === 'Always') ?? false;
      const dryRunPod = async () => createPod(`dry-${randomBytes(3).toString('hex')}`, template(), { dryRun: 'All' });

      before(async () => {
        const certs = await devCertificates(['127.0.0.1']);
        dir = mkdtempSync(join(tmpdir(), 'podlife-e2e-tls-'));
        writeFileSync(join(dir, 'tls.crt'), certs.certPem);
        writeFileSync(join(dir, 'tls.key'), certs.keyPem);
        webhookApp = await startApp({ controllers: ['keystone'], dryRun: true, webhookPort: 0, tlsCertFile: join(dir, 'tls.crt'), tlsKeyFile: join(dir, 'tls.key') });
        const url = `https://127.0.0.1:${webhookApp.webhook!.port}/mutate-pods`;
        await cp.client.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
          metadata: { name: hookName },
          webhooks: [webhookEntry({ url, caBundle: Buffer.from(certs.caPem).toString('base64') }, { namespace: 'podlife-system', namespaces: [ns] })],
        });
      });
      after(async () => {
        await cp.client.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${hookName}`).catch(() => undefined);
        await cp.client.delete('/api/v1/nodes/node-old').catch(() => undefined);
        await webhookApp?.stop();
        rmSync(dir, { recursive: true, force: true });
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

  describe('restarts and replicas', () => {
    const stoppingEvents = async (pod: string) => {
      const events = await cp.client.get<{ items: { reason?: string; note?: string; series?: { count?: number } }[] }>(
        resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }),
        { fieldSelector: `regarding.name=${pod}` },
      );
      return events.items.filter((e) => e.reason === 'StoppingContainer');
    };

    it('a controller killed mid-way is resumed by its successor without repeating a stop', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'podlife-e2e-cfg-'));
      const configFile = join(dir, 'config.yaml');
      writeFileSync(configFile, `ephemeralContainer:\n  image: ${IMAGE}\ndefaultStrategy: ephemeral\n`);
      const main = fileURLToPath(new URL('../../packages/controller/src/main.ts', import.meta.url));
      // node itself (not the tsx wrapper, which would outlive a SIGKILL in a child of its own).
      const run = (): ChildProcess =>
        spawn(process.execPath, ['--import=tsx', '--conditions=@podlife/source', main, `--kubeconfig=${cp.kubeconfigPath}`, `--namespace=${ns}`, `--config=${configFile}`, '--metrics-port=0', '--health-port=0', '--log-level=warn'], {
          stdio: ['ignore', 'ignore', 'inherit'],
        });
      let child = run();
      try {
        // Sidecars stop in reverse spec order: proxy-b first; it takes 4 s to exit after TERM.
        await createPod('resume', podTemplate({
          containers: [{ name: 'app', role: 'keystone' }, { name: 'proxy-a', role: 'sidecar' }, { name: 'proxy-b', role: 'sidecar' }],
          script: { containers: { app: { runMs: 1500 }, 'proxy-b': { signalExitDelayMs: 4000 } } },
        }));
        // Killed while proxy-b is stopping, once its stop is both issued and announced: the
        // StoppingContainer Event is written just after the ephemeral container is added, and a
        // kill between the two loses it (a successor takes the container as the record that the
        // stop was issued, and must not announce it a second time).
        await waitFor('the stop of proxy-b issued and announced', async () =>
          ephemeralNames(await getPod(cp.client, ns, 'resume')).includes('podlife-stop-proxy-b') &&
          (await stoppingEvents('resume')).some((e) => /container proxy-b /.test(e.note ?? '')), { timeoutMs: 60_000 });
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        child = run();
        const pod = await waitFor('both sidecars stopped', async () => {
          const p = await getPod(cp.client, ns, 'resume');
          return condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True' && p;
        }, { timeoutMs: 60_000 }).catch(async (err: Error) => {
          throw new Error(`${err.message}\n${describePod(await getPod(cp.client, ns, 'resume'))}`);
        });
        assert.deepEqual(ephemeralNames(pod).sort(), ['podlife-stop-proxy-a', 'podlife-stop-proxy-b'], 'no stop repeated, no escalation');
        const at = (c: string) => Date.parse(String(terminated(pod, c)?.finishedAt));
        assert.ok(at('proxy-b') <= at('proxy-a'), 'sidecars stop in reverse spec order');
        const stopping = await stoppingEvents('resume');
        assert.deepEqual(stopping.map((e) => /container (\S+)/.exec(e.note ?? '')?.[1]).sort(), ['proxy-a', 'proxy-b']);
        assert.ok(stopping.every((e) => (e.series?.count ?? 1) === 1), 'each stop announced once');
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('of two replicas with leader election, only the leader acts', async () => {
      const a = await startApp({ leaderElect: true, leaderElectionNamespace: ns }, { identity: 'replica-a' });
      const b = await startApp({ leaderElect: true, leaderElectionNamespace: ns }, { identity: 'replica-b' });
      try {
        await waitFor('a leader', async () => a.manager.isLeader() || b.manager.isLeader(), { timeoutMs: 20_000 });
        assert.notEqual(a.manager.isLeader(), b.manager.isLeader(), 'exactly one leader');
        const leader = a.manager.isLeader() ? 'replica-a' : 'replica-b';
        await createPod('two-replicas', podTemplate({
          containers: [{ name: 'app' }, { name: 'proxy', role: 'sidecar' }],
          script: { containers: { app: { runMs: 300 } } },
        }));
        const pod = await waitFor('the sidecar stopped', async () => {
          const p = await getPod(cp.client, ns, 'two-replicas');
          return condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True' && p;
        });
        assert.deepEqual(ephemeralNames(pod), ['podlife-stop-proxy']);
        const events = await cp.client.get<{ items: { reportingInstance?: string }[] }>(
          resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }),
          { fieldSelector: 'regarding.name=two-replicas' },
        );
        assert.ok(events.items.length > 0);
        assert.deepEqual([...new Set(events.items.map((e) => e.reportingInstance))], [leader]);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });
  });
});
