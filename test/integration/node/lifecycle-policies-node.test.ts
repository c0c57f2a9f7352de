/**
 * Lifecycle policies on a real node (DESIGN 3.9, ADR 0268-0270): in a namespace one policy covers,
 * a test injector adds each injector's sidecar to a plain Job (no podlife annotation or label),
 * as its template shapes it, with a local stand-in that behaves as the real sidecar does on its
 * quit endpoint or signal (`quitserver` exits 0 only when its endpoint is POSTed and 143 on
 * SIGTERM; the signal presets' stand-ins exit 0 on TERM). Nothing is pulled.
 *
 * Both routes run: the signal presets are made native sidecars by the webhook (the kubelet stops
 * them), the quit-endpoint presets have no native form and podlife stops them (exec is impossible
 * in the distroless stand-in, so an ephemeral busybox container POSTs on the loopback). Every Job
 * completes, every sidecar exits 0, and `podlife explain`'s notes name the policy.
 *
 * @releases newest — the policy path is admission and the stops already proven per release by keystone-node.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { V1Container, V1Job, V1Pod } from '@kubernetes/client-node';
import { ApiError, createLogger, resourcePath } from '@podlife/core';
import { ControllerApp, policyWebhookEntry, webhookEntry } from '@podlife/controller';
import { lifecyclePolicyCrd, POLICY_PATH, roleNotes } from '@podlife/keystone';
import { podOutcome } from '@podlife/pod-conditions';
import { type ControlPlane, createNamespace, INJECTOR_SHAPES, keystoneFlags, localWebhook, type LocalWebhook, type RealNode, SHAPE_ANNOTATION, sharedRealCluster, testInjector, type TestInjector, waitFor } from '@podlife/testbed';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const podsPath = (ns: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns });
const jobsPath = (ns: string, name?: string) => resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns, name });

/** Each quit-endpoint preset's stand-in listens where the real sidecar's endpoint is. */
const QUIT_ENDPOINTS: Record<string, string> = {
  'istio-proxy': '15020/quitquitquit',
  'linkerd-proxy': '4191/shutdown',
  envoy: '9901/quitquitquit',
  'cloud-sql-proxy': '9091/quitquitquit',
  daprd: '3500/v1.0/shutdown',
};

describe('lifecycle policies on a real node: plain Jobs with injected sidecars complete', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let node: RealNode;
  let ns: string;
  let hook: LocalWebhook | undefined;
  let injector: TestInjector | undefined;
  let app: ControllerApp | undefined;
  const run = randomBytes(3).toString('hex');
  const policyName = `jobs-${run}`;
  const hookName = `a-podlife-policies-node-${run}`;

  /** The injector's containers, with local stand-ins in place of its images. */
  function standIn(c: V1Container, init: boolean): V1Container {
    const base = { name: c.name, imagePullPolicy: 'Never' as const, ...(c.ports ? { ports: c.ports } : {}) };
    if (init) return { ...base, image: node.images.busybox, command: ['true'] };
    const quit = QUIT_ENDPOINTS[c.name];
    if (quit) return { ...base, image: node.images.quitserver, args: ['-listen', quit] };
    return { ...base, image: node.images.busybox, command: ['sh', '-c', "trap 'exit 0' TERM; sleep 3600 & wait"] };
  }

  before(async function () {
    this.timeout(300_000);
    ({ cp, node } = await sharedRealCluster());
    await cp.client.create(CRDS, lifecyclePolicyCrd).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    });
    await waitFor('the LifecyclePolicy CRD served', async () => cp.client.get(POLICY_PATH).then(() => true, () => false));
    ns = await createNamespace(cp.client, 'policy-jobs', { team: `batch-${run}`, 'podlife.dev/policies': 'enabled' });
    hook = await localWebhook(cp.client, `podlife-policies-node-${run}`);
    app = new ControllerApp({
      flags: keystoneFlags({ namespaces: [ns], webhookPort: 0, tlsCertFile: hook.certFile, tlsKeyFile: hook.keyFile }),
      config: { execCommands: {}, ephemeralContainerImage: node.images.busybox, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [ns], lifecyclePolicies: true },
      client: cp.client,
      kubeConfig: cp.kubeConfig,
      logger: createLogger('lifecycle-policies-node', { level: 'warn' }),
      bindAddress: '127.0.0.1',
    });
    await app.start();
    const clientConfig = { url: `https://127.0.0.1:${app.webhook!.port}/mutate-pods`, caBundle: hook.caBundle };
    await cp.client.create(CONFIGURATIONS, { metadata: { name: hookName }, webhooks: [webhookEntry(clientConfig, { namespace: 'podlife-system', namespaces: [ns] }), policyWebhookEntry(clientConfig, { namespace: 'podlife-system', namespaces: [ns] })] });
    injector = await testInjector(cp.client, `z-injector-node-${run}`, [ns], standIn);
    await cp.client.create(POLICY_PATH, { apiVersion: 'podlife.dev/v1alpha1', kind: 'LifecyclePolicy', metadata: { name: policyName }, spec: { namespaceSelector: { matchLabels: { team: `batch-${run}` } }, ownerKinds: ['Job'], presets: ['well-known'] } });
    // The webhook's caches have the policy once a dry-run pod owned by a Job comes back marked.
    await waitFor('the policy in the webhook', async () => {
      const probe: V1Pod = {
        metadata: { name: `probe-${randomBytes(3).toString('hex')}`, annotations: { [SHAPE_ANNOTATION]: 'fluent-bit' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'x', uid: '00000000-0000-0000-0000-000000000000', controller: true }] },
        spec: { containers: [{ name: 'job', image: node.images.busybox }] },
      };
      const p = await cp.client.create<V1Pod>(podsPath(ns), probe, { dryRun: 'All' });
      return p.metadata?.annotations?.['podlife.dev/policies'] === policyName;
    }, { timeoutMs: 20_000 });
  });

  after(async function () {
    this.timeout(60_000);
    await cp?.client.delete(`${POLICY_PATH}/${policyName}`).catch(() => undefined);
    await cp?.client.delete(`${CONFIGURATIONS}/${hookName}`).catch(() => undefined);
    await injector?.stop();
    await app?.stop();
    await hook?.remove();
  });

  it('a Job per preset, run together: each completes, its sidecar exits 0, and explain names the policy', async function () {
    const shapes = Object.keys(INJECTOR_SHAPES);
    await Promise.all(
      shapes.map((shape) =>
        cp.client.create(jobsPath(ns), {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: `job-${shape}` },
          spec: {
            backoffLimit: 0,
            template: {
              // Only what a user writes for the injector; nothing of podlife's.
              metadata: { annotations: { [SHAPE_ANNOTATION]: shape } },
              // A budget a loaded node's ephemeral container start fits in: the stop, not the deletion fallback, is under test.
              spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 30, enableServiceLinks: false, containers: [{ name: 'job', image: node.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', 'sleep 2; echo done'] }] },
            },
          },
        }),
      ),
    );
    const failures: string[] = [];
    await Promise.all(
      shapes.map(async (shape) => {
        const job = await waitFor(`Job job-${shape} finished`, async () => {
          const j = await cp.client.get<V1Job>(jobsPath(ns, `job-${shape}`));
          return j.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') && j;
        }, { timeoutMs: 90_000, intervalMs: 250 }).catch((err: Error) => err);
        const pods = await cp.client.get<{ items: V1Pod[] }>(podsPath(ns), { labelSelector: `job-name=job-${shape}` });
        const pod = pods.items[0];
        const describe = JSON.stringify([...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])].map((s) => [s.name, s.state]));
        if (job instanceof Error) return void failures.push(`${shape}: ${job.message}; ${describe}`);
        if (!job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True')) return void failures.push(`${shape}: Job failed; ${describe}`);
        const sidecars = INJECTOR_SHAPES[shape]!.sidecars.map((c) => c.name);
        for (const name of sidecars) {
          const st = [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])].find((s) => s.name === name);
          if (st?.state?.terminated?.exitCode !== 0) failures.push(`${shape}: ${name} did not exit 0: ${JSON.stringify(st?.state)}`);
        }
        // The route each sidecar took: native (the kubelet stopped it) or stopped by podlife (an ephemeral POST).
        for (const name of sidecars) {
          const native = pod?.spec?.initContainers?.some((c) => c.name === name && c.restartPolicy === 'Always') === true;
          const byPodlife = pod?.spec?.ephemeralContainers?.some((e) => e.targetContainerName === name) === true;
          if (QUIT_ENDPOINTS[name] ? native || !byPodlife : !native) {
            const events = await cp.client.get<{ items: { reason?: string; note?: string }[] }>(resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }), { fieldSelector: `regarding.name=${pod?.metadata?.name}` });
            failures.push(`${shape}: ${name} took the wrong route (native ${native}, stopped by podlife ${byPodlife}); ephemeral ${JSON.stringify(pod?.spec?.ephemeralContainers?.map((e) => e.name))}; annotations ${JSON.stringify(pod?.metadata?.annotations)}; events ${JSON.stringify(events.items.map((e) => `${e.reason}: ${e.note}`))}; ${describe}`);
          }
        }
        if (pod?.metadata?.annotations?.['podlife.dev/policies'] !== policyName) failures.push(`${shape}: no policy record`);
        const notes = pod ? roleNotes(pod) : [];
        if (!sidecars.every((s) => notes.some((n) => n.startsWith(s) && n.includes(`policy ${policyName}`)))) failures.push(`${shape}: explain does not name the policy: ${JSON.stringify(notes)}`);
        if (pod && podOutcome(pod).outcome !== 'succeeded') failures.push(`${shape}: podOutcome ${JSON.stringify(podOutcome(pod))}`);
      }),
    );
    assert.equal(failures.length, 0, `\n${failures.join("\n")}`);
  });
});
