/**
 * The deploy manifests against a real API server: applied server-side, then the controller runs
 * as its ServiceAccount (a client certificate for `system:serviceaccount:<ns>:podlife-controller`,
 * which RBAC treats exactly like the account's token) through a full keystone scenario. Nothing
 * it needs may be denied, and namespace scoping must hold in RBAC, not only in the controller.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { ContentType, KubeClient, createLogger, resourcePath } from '@podlife/core';
import {
  ControllerApp,
  SERVICE_ACCOUNT,
  controllerPermissions,
  defaultDeployOptions,
  deployFiles,
  devCertificates,
  type ControllerFlags,
  type KubeManifest,
} from '@podlife/controller';
import { nodeReadinessRuleCrd } from '@podlife/node-readiness';
import { sharedControlPlane, type ControlPlane } from '../support/control-plane.js';
import { SimulatedKubelet, SCRIPT_ANNOTATION } from '../support/kubelet.js';
import { waitFor } from '../support/wait.js';

const plural: Record<string, string> = {
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  ConfigMap: 'configmaps',
  Deployment: 'deployments',
  Service: 'services',
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  CustomResourceDefinition: 'customresourcedefinitions',
  PriorityClass: 'priorityclasses',
  PodDisruptionBudget: 'poddisruptionbudgets',
  NetworkPolicy: 'networkpolicies',
};

function pathOf(m: KubeManifest): string {
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : [undefined, m.apiVersion];
  return resourcePath({ group, version: version as string, resource: plural[m.kind] as string, namespace: m.metadata.namespace, name: m.metadata.name });
}

async function applyServerSide(client: KubeClient, m: KubeManifest): Promise<void> {
  await client.patch(pathOf(m), JSON.stringify(m), ContentType.ApplyPatch, { fieldManager: 'podlife-deploy-test', force: true });
}

const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });

describe('deploy manifests and RBAC (real API server)', function () {
  this.timeout(120_000);
  const suffix = randomBytes(3).toString('hex');
  const system = `podlife-system-${suffix}`;
  const scoped = `rbac-in-${suffix}`;
  const outside = `rbac-out-${suffix}`;
  let cp: ControlPlane;
  let kubelet: SimulatedKubelet;
  let sa: KubeClient;
  let app: ControllerApp | undefined;
  let dir: string;
  const logLines: string[] = [];
  const applied: KubeManifest[] = [];

  const pod = (name: string, annotations: Record<string, string> = {}) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      annotations: {
        'role.podlife.dev/proxy': 'sidecar',
        [SCRIPT_ANNOTATION]: JSON.stringify({ containers: { app: { runMs: 300 }, proxy: { exitOnSignal: { TERM: 0 } } } }),
        ...annotations,
      },
    },
    spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'app:1' }, { name: 'proxy', image: 'proxy:1' }] },
  });

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
    kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['rbac-node'] });
    await kubelet.start();
    for (const name of [scoped, outside]) await cp.client.create('/api/v1/namespaces', { metadata: { name } });
    const crd = nodeReadinessRuleCrd as unknown as KubeManifest;
    await applyServerSide(cp.client, crd);
    await waitFor('the CRD established', async () =>
      ((await cp.client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(pathOf(crd))).status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True'));
    const options = { ...defaultDeployOptions, namespace: system, namespaces: [scoped] };
    for (const file of deployFiles(options)) {
      for (const m of file.manifests) {
        await applyServerSide(cp.client, m);
        applied.push(m);
      }
    }
    const kubeconfig = await cp.kubeconfigFor(`system:serviceaccount:${system}:${SERVICE_ACCOUNT}`, ['system:serviceaccounts', `system:serviceaccounts:${system}`]);
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    sa = await KubeClient.fromKubeConfig(kc);
    // The API server's RBAC cache takes a moment to see new bindings; start once they are in force.
    await waitFor('the RoleBinding in force', async () => sa.get(podsPath(scoped)).then(() => true));

    const certs = await devCertificates(['127.0.0.1']);
    dir = mkdtempSync(join(tmpdir(), 'podlife-rbac-'));
    writeFileSync(join(dir, 'tls.crt'), certs.certPem);
    writeFileSync(join(dir, 'tls.key'), certs.keyPem);
    const flags: ControllerFlags = {
      controllers: ['keystone', 'network-conditions', 'node-readiness'],
      namespaces: [scoped],
      dryRun: false,
      configPath: undefined,
      kubeconfig: undefined,
      context: undefined,
      leaderElect: true,
      leaderElectionNamespace: system,
      leaderElectionId: defaultDeployOptions.leaseName,
      webhookPort: 0,
      tlsCertFile: join(dir, 'tls.crt'),
      tlsKeyFile: join(dir, 'tls.key'),
      metricsPort: undefined,
      healthPort: undefined,
      logLevel: 'info',
      help: false,
    };
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    app = new ControllerApp({
      flags,
      config: { execCommands: {}, ephemeralContainerImage: 'stopper:1.0', keystoneLimit: 1, defaultStrategy: 'ephemeral', namespaces: [] },
      client: sa,
      kubeConfig: kc,
      logger: createLogger('rbac', { level: 'info', destination }),
      bindAddress: '127.0.0.1',
      identity: 'rbac-test',
    });
    await app.start();
  });

  afterEach(function () {
    // A failure here is usually a denied request: show what the controller logged.
    if (this.currentTest?.state === 'failed') console.error(logLines.slice(-20).join(''));
  });

  after(async () => {
    await app?.stop();
    sa?.close();
    await kubelet?.stop();
    for (const ns of [scoped, outside, system]) await cp.client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    for (const m of applied.filter((x) => !x.metadata.namespace && x.kind !== 'Namespace')) await cp.client.delete(pathOf(m)).catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every generated object is accepted by server-side apply', () => {
    assert.ok(applied.some((m) => m.kind === 'Role' && m.metadata.namespace === scoped));
    assert.ok(applied.some((m) => m.kind === 'MutatingWebhookConfiguration'));
    for (const kind of ['PriorityClass', 'PodDisruptionBudget', 'NetworkPolicy']) assert.ok(applied.some((m) => m.kind === kind), kind);
  });

  it('with the API server addresses set, every generated object passes a server-side dry-run apply', async () => {
    const options = { ...defaultDeployOptions, namespace: system, namespaces: [scoped], apiServerCidrs: ['10.0.0.10/32', '192.168.1.0/24'] };
    for (const file of deployFiles(options)) {
      for (const m of file.manifests) {
        await cp.client.patch(pathOf(m), JSON.stringify(m), ContentType.ApplyPatch, { fieldManager: 'podlife-deploy-test', force: true, dryRun: 'All' });
      }
    }
    const policy = await cp.client.get<{ spec: { ingress: { from?: unknown[] }[] } }>(pathOf(deployFiles(options).flatMap((f) => f.manifests).find((m) => m.kind === 'NetworkPolicy')!));
    assert.equal(policy.spec.ingress.some((r) => r.from !== undefined), false, 'a dry run changed nothing');
  });

  it('the Deployment\'s pods carry the priority class, tolerations and spreading (admitted by the API server)', async () => {
    const d = await cp.client.get<{ spec: { template: { spec: { priorityClassName?: string; tolerations?: unknown[]; topologySpreadConstraints?: unknown[] } } } }>(
      resourcePath({ group: 'apps', version: 'v1', resource: 'deployments', namespace: system, name: 'podlife-controller' }),
    );
    const spec = d.spec.template.spec;
    assert.equal(spec.priorityClassName, 'podlife-controller');
    assert.ok((spec.tolerations ?? []).length > 0);
    assert.equal((spec.topologySpreadConstraints ?? []).length, 2);
  });

  it('as its ServiceAccount, all three controllers run: lease, sidecar stopped, pod deleted, network conditions, rules watched — nothing denied', async () => {
    await waitFor('leadership', async () => app!.manager.isLeader(), { timeoutMs: 30_000 });
    await cp.client.create(podsPath(scoped), pod('stop-me'));
    await cp.client.create(podsPath(scoped), pod('end-me', { 'role.podlife.dev/app': 'keystone', 'role.podlife.dev/proxy': 'sidecar', 'podlife.dev/on-keystone-exit': 'TerminatePod' }));
    const stopped = await waitFor('the sidecar stopped', async () => {
      const p = await cp.client.get<V1Pod>(podsPath(scoped, 'stop-me'));
      return p.status?.conditions?.some((c) => c.type === 'podlife.dev/SidecarsStopped' && c.status === 'True') && p;
    });
    assert.deepEqual(stopped.spec?.ephemeralContainers?.map((e) => e.name), ['podlife-stop-proxy']);
    await waitFor('the keystone pod deleted', async () => {
      const p = await cp.client.get<V1Pod>(podsPath(scoped, 'end-me')).catch(() => undefined);
      return p === undefined || p.metadata?.deletionTimestamp !== undefined;
    });
    await cp.client.create(podsPath(scoped), { ...pod('networked', { [SCRIPT_ANNOTATION]: '{}', 'podlife.dev/network-conditions': 'true' }) });
    await waitFor('network conditions written', async () => {
      const p = await cp.client.get<V1Pod>(podsPath(scoped, 'networked'));
      return p.status?.conditions?.some((c) => c.type === 'network.podlife.dev/IPv4Ready' && c.status === 'True');
    });
    const events = await cp.client.get<{ items: { reason?: string }[] }>(resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: scoped }));
    assert.ok(events.items.some((e) => e.reason === 'StoppingContainer'), 'Events written');
    assert.ok(app!.manager.isReady(), 'pods and nodes listed and watched');
    // Search each log record without its timestamp, which may well contain the digits 403.
    const denied = logLines.filter((l) => {
      const { time: _time, ...record } = JSON.parse(l) as Record<string, unknown>;
      return /forbidden|\b403\b/i.test(JSON.stringify(record));
    });
    assert.deepEqual(denied, [], 'no request denied');
  });

  it('may use pods/exec in the scoped namespace (not exercised: the simulated kubelet has no exec)', async () => {
    for (const rule of controllerPermissions.keystone.namespaced) {
      for (const verb of rule.verbs) {
        for (const resource of rule.resources) {
          const [res, sub] = resource.split('/');
          const review = await cp.client.create<{ status: { allowed: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user: `system:serviceaccount:${system}:${SERVICE_ACCOUNT}`,
              groups: ['system:serviceaccounts', `system:serviceaccounts:${system}`, 'system:authenticated'],
              resourceAttributes: { namespace: scoped, group: rule.apiGroups[0], resource: res, subresource: sub, verb },
            },
          });
          assert.equal(review.status.allowed, true, `${verb} ${resource} in ${scoped}`);
        }
      }
    }
  });

  it('cannot delete, read or list pods in a namespace it is not scoped to', async () => {
    await cp.client.create(podsPath(outside), pod('not-mine'));
    await assert.rejects(sa.delete(podsPath(outside, 'not-mine')), (err: { status?: number }) => err.status === 403);
    await assert.rejects(sa.get(podsPath(outside, 'not-mine')), (err: { status?: number }) => err.status === 403);
    await assert.rejects(sa.get('/api/v1/pods'), (err: { status?: number }) => err.status === 403);
    await assert.rejects(sa.get('/api/v1/namespaces/kube-system/secrets'), (err: { status?: number }) => err.status === 403);
  });
});
