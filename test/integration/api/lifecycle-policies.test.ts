/**
 * Lifecycle policies against a real API server (DESIGN 3.9, ADR 0268-0270): the CRD refuses bad
 * policies naming the field, a tenant cannot create or change one, and podlife's webhook applies
 * policies to pods nobody annotated, after a test injector that adds the sidecar (podlife runs
 * first, sees no sidecar, and runs again: reinvocation), for the shape of each injector; two
 * overlapping policies give the same outcome every time and a Warning Event naming both.
 *
 * @releases newest — CRD validation (CEL) and webhook reinvocation are GA and alike on every supported release.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'mocha';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { ApiError, ContentType, KubeClient, resourcePath, silentLogger } from '@podlife/core';
import { ControllerApp, defaultConfig, parseFlags, policyWebhookEntry, webhookEntry, type ControllerFlags } from '@podlife/controller';
import { lifecyclePolicyCrd, POLICY_PATH, roleNotes, type LifecyclePolicy } from '@podlife/keystone';
import { type ControlPlane, createNamespace, INJECTOR_SHAPES, localWebhook, type LocalWebhook, SAW_POLICIES_ANNOTATION, SHAPE_ANNOTATION, sharedControlPlane, testInjector, type TestInjector, waitFor } from '@podlife/testbed';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const podsPath = (ns: string, name?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });
const policyPath = (name?: string): string => (name ? `${POLICY_PATH}/${name}` : POLICY_PATH);

/** The stop each preset gives the sidecar its injector adds. */
const PRESET_STOPS: Record<string, Record<string, string>> = {
  'istio-proxy': { 'istio-proxy': 'preset:istio' },
  'linkerd-proxy': { 'linkerd-proxy': 'preset:linkerd' },
  envoy: { envoy: 'preset:envoy' },
  'cloud-sql-proxy': { 'cloud-sql-proxy': 'preset:cloudsql-proxy' },
  daprd: { daprd: 'preset:dapr' },
  'vault-agent': { 'vault-agent': 'signal:TERM' },
  'consul-dataplane': { 'consul-dataplane': 'signal:TERM' },
  'otel-collector': { 'otc-container': 'signal:TERM' },
  'fluent-bit': { 'fluent-bit': 'signal:TERM' },
};

function flags(extra: string[]): ControllerFlags {
  const parsed = parseFlags(['--controllers=keystone', '--metrics-port=0', '--health-port=0', '--log-level=warn', ...extra]);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.flags;
}

function policy(name: string, spec: Record<string, unknown>): LifecyclePolicy {
  return { apiVersion: 'podlife.dev/v1alpha1', kind: 'LifecyclePolicy', metadata: { name }, spec: spec as never };
}

function plainPod(name: string, shape?: string): V1Pod {
  return {
    metadata: { name, ...(shape ? { annotations: { [SHAPE_ANNOTATION]: shape } } : {}) },
    spec: { restartPolicy: 'Never', containers: [{ name: 'job', image: 'example.invalid/job:1' }] },
  };
}

async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  assert.fail('the API server accepted it');
}

describe('lifecycle policies on a real API server', function () {
  let cp: ControlPlane;
  let client: KubeClient;
  let team: string;
  let ns: string;
  let other: string;
  let hook: LocalWebhook | undefined;
  let injector: TestInjector | undefined;
  let app: ControllerApp | undefined;
  const run = randomBytes(3).toString('hex');
  const hookName = `a-podlife-policies-${run}`;
  const created: string[] = [];

  async function createPolicy(p: LifecyclePolicy): Promise<void> {
    await client.create(policyPath(), p);
    created.push(p.metadata!.name!);
  }

  before(async function () {
    this.timeout(120_000);
    cp = await sharedControlPlane();
    client = cp.client;
    await client.create(CRDS, lifecyclePolicyCrd).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    });
    await waitFor('the LifecyclePolicy CRD served', async () => client.get(policyPath()).then(() => true, () => false), { timeoutMs: 30_000 });
    team = `team-${run}`;
    ns = await createNamespace(client, 'policies', { team, 'podlife.dev/policies': 'enabled' });
    other = await createNamespace(client, 'policies-unlabelled', { team });
    hook = await localWebhook(client, `podlife-policies-${run}`);
    const config = { ...defaultConfig, namespaces: [ns, other], lifecyclePolicies: true, execCommands: { drain: ['/bin/true'] } };
    app = new ControllerApp({ flags: { ...flags(['--webhook-port=1', `--tls-cert-file=${hook.certFile}`, `--tls-key-file=${hook.keyFile}`]), webhookPort: 0 }, config, client, logger: silentLogger(), bindAddress: '127.0.0.1' });
    await app.start();
    // podlife's configuration sorts before the injector's, so the API server calls podlife first.
    const clientConfig = { url: `https://127.0.0.1:${app.webhook!.port}/mutate-pods`, caBundle: hook.caBundle };
    const o = { namespace: 'podlife-system', namespaces: [ns, other] };
    await client.create(CONFIGURATIONS, { metadata: { name: hookName }, webhooks: [webhookEntry(clientConfig, o), policyWebhookEntry(clientConfig, o)] });
    injector = await testInjector(client, `z-injector-${run}`, [ns, other]);
  });

  after(async function () {
    this.timeout(60_000);
    for (const name of created) await client?.delete(policyPath(name)).catch(() => undefined);
    await client?.delete(`${CONFIGURATIONS}/${hookName}`).catch(() => undefined);
    await injector?.stop();
    await app?.stop();
    await hook?.remove();
  });

  describe('the CRD refuses bad policies, naming the field', () => {
    const selector = () => ({ matchLabels: { team } });
    for (const [what, spec, field] of [
      ['an unknown preset', { namespaceSelector: selector(), presets: ['nginx'] }, 'spec.presets[0]'],
      ['a bad glob', { namespaceSelector: selector(), containers: [{ name: 'x', imageRepository: 'Istio/*', role: 'sidecar' }] }, 'spec.containers[0].imageRepository'],
      ['a glob of stars only', { namespaceSelector: selector(), containers: [{ name: 'x', imageRepository: '*', role: 'sidecar' }] }, 'spec.containers[0].imageRepository'],
      ['an image field', { namespaceSelector: selector(), containers: [{ name: 'x', containerName: 'x', role: 'sidecar', image: 'evil:1' }] }, 'spec.containers[0].image'],
      ['a command field', { namespaceSelector: selector(), containers: [{ name: 'x', containerName: 'x', role: 'sidecar', command: ['sh'] }] }, 'spec.containers[0].command'],
      ['an unknown stop preset', { namespaceSelector: selector(), containers: [{ name: 'x', containerName: 'x', role: 'sidecar', stop: 'preset:nope' }] }, 'spec.containers[0].stop'],
      ['a selector of every namespace', { namespaceSelector: {}, presets: ['istio-proxy'] }, 'spec.namespaceSelector'],
      ['a selector naming kube-system', { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['kube-system'] }] }, presets: ['istio-proxy'] }, 'spec.namespaceSelector'],
    ] as const) {
      it(`refuses ${what} (${field})`, async function () {
        this.timeout(20_000);
        const err = await refusal(client.create(policyPath(), policy(`bad-${run}`, spec)));
        assert.equal(err.status, 422, err.message);
        assert.ok(err.message.includes(field), err.message);
      });
    }
  });

  it('a tenant with every right in its namespace (and the admin role) cannot create or change a policy', async function () {
    this.timeout(40_000);
    await client.create(resourcePath({ version: 'v1', resource: 'serviceaccounts', namespace: ns }), { metadata: { name: 'tenant' } });
    // Everything a Role can grant in its namespace: a namespaced grant never reaches a cluster-scoped policy.
    await client.create(resourcePath({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', namespace: ns }), {
      metadata: { name: 'tenant-all' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    });
    for (const [name, roleRef] of [
      ['tenant-all', { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'tenant-all' }],
      ['tenant-admin', { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' }],
    ] as const) {
      await client.create(resourcePath({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', namespace: ns }), {
        metadata: { name },
        roleRef,
        subjects: [{ kind: 'ServiceAccount', name: 'tenant', namespace: ns }],
      });
    }
    const kc = new KubeConfig();
    kc.loadFromFile(await cp.kubeconfigFor(`system:serviceaccount:${ns}:tenant`, ['system:serviceaccounts', `system:serviceaccounts:${ns}`]));
    const tenant = await KubeClient.fromKubeConfig(kc);
    try {
      // The binding is in force (the tenant may list pods) before the refusals mean anything.
      await waitFor('the tenant binding in force', async () => tenant.get(podsPath(ns)).then(() => true), { timeoutMs: 20_000 });
      await createPolicy(policy(`tenant-target-${run}`, { namespaceSelector: { matchLabels: { team: 'nobody' } }, presets: ['envoy'] }));
      const create = await refusal(tenant.create(policyPath(), policy(`tenant-${run}`, { namespaceSelector: { matchLabels: { team } }, presets: ['istio-proxy'] })));
      assert.equal(create.status, 403, create.message);
      const change = await refusal(tenant.patch(policyPath(`tenant-target-${run}`), { spec: { enforce: true } }, ContentType.MergePatch));
      assert.equal(change.status, 403, change.message);
    } finally {
      tenant.close();
    }
  });

  it('applies a policy to a plain pod after the injector added its sidecar: podlife ran first, then again', async function () {
    this.timeout(40_000);
    await createPolicy(policy(`mesh-${run}`, { namespaceSelector: { matchLabels: { team } }, presets: ['istio-proxy'] }));
    const marked = (p: V1Pod) => p.metadata?.annotations?.['role.podlife.dev/istio-proxy'] === 'sidecar';
    await waitFor('the policy in the webhook', async () => marked(await client.create<V1Pod>(podsPath(ns), plainPod(`probe-${randomBytes(3).toString('hex')}`, 'istio-proxy'), { dryRun: 'All' })), { timeoutMs: 20_000 });
    const pod = await client.create<V1Pod>(podsPath(ns), plainPod('mesh-job', 'istio-proxy'));
    const a = pod.metadata?.annotations ?? {};
    assert.equal(a['stop.podlife.dev/istio-proxy'], 'preset:istio');
    assert.equal(a['policy.podlife.dev/istio-proxy'], `mesh-${run}/istio-proxy`);
    assert.equal(a['podlife.dev/policies'], `mesh-${run}`);
    assert.equal(a[SAW_POLICIES_ANNOTATION], 'none', 'podlife ran before the injector and found nothing to mark');
    assert.equal(pod.metadata?.labels?.['podlife.dev/managed'], 'true');
    assert.deepEqual(pod.spec?.initContainers?.map((c) => c.name), ['istio-init'], "the injector's init container is left where it put it");
  });

  it('marks the sidecar of every injector shape with its preset ("well-known")', async function () {
    this.timeout(40_000);
    await createPolicy(policy(`well-known-${run}`, { namespaceSelector: { matchLabels: { team } }, presets: ['well-known'], podSelector: { matchLabels: { shapes: 'all' } } }));
    await waitFor('the well-known policy in force', async () => {
      const probe = { ...plainPod(`probe-${randomBytes(3).toString('hex')}`, 'fluent-bit'), metadata: { name: `probe-${randomBytes(3).toString('hex')}`, labels: { shapes: 'all' }, annotations: { [SHAPE_ANNOTATION]: 'fluent-bit' } } };
      return (await client.create<V1Pod>(podsPath(ns), probe, { dryRun: 'All' })).metadata?.annotations?.['role.podlife.dev/fluent-bit'] === 'sidecar';
    }, { timeoutMs: 20_000 });
    for (const shape of Object.keys(INJECTOR_SHAPES)) {
      const pod = await client.create<V1Pod>(podsPath(ns), { ...plainPod(`shape-${shape}`), metadata: { name: `shape-${shape}`, labels: { shapes: 'all' }, annotations: { [SHAPE_ANNOTATION]: shape } } }, { dryRun: 'All' });
      const a = pod.metadata?.annotations ?? {};
      for (const [container, stop] of Object.entries(PRESET_STOPS[shape] ?? {})) {
        assert.equal(a[`role.podlife.dev/${container}`], 'sidecar', `${shape}: ${container}`);
        assert.equal(a[`stop.podlife.dev/${container}`], stop, `${shape}: ${container}`);
      }
      assert.equal(a['role.podlife.dev/job'], undefined, `${shape}: the job stays a main container`);
    }
  });

  it("the pod's own annotations win over a policy that does not enforce, and the record says so", async function () {
    this.timeout(20_000);
    const own = { ...plainPod('own-stop', 'istio-proxy') };
    own.metadata!.annotations = { ...own.metadata!.annotations, 'stop.podlife.dev/istio-proxy': 'signal:INT', 'role.podlife.dev/istio-proxy': 'sidecar', 'podlife.dev/native-sidecars': 'false' };
    const pod = await client.create<V1Pod>(podsPath(ns), own, { dryRun: 'All' });
    assert.equal(pod.metadata?.annotations?.['stop.podlife.dev/istio-proxy'], 'signal:INT');
    assert.equal(pod.metadata?.annotations?.['policy.podlife.dev/istio-proxy'], `mesh-${run}/istio-proxy:pod`);
    assert.deepEqual(roleNotes(pod), [
      `istio-proxy is a sidecar, stopped by signal:INT: from the pod's own annotations, which won over policy mesh-${run}, match istio-proxy (set enforce: true on the policy to make it win)`,
    ]);
  });

  it('two overlapping policies: the same outcome on every run, and a Warning Event naming both', async function () {
    this.timeout(40_000);
    // Sorts after mesh-<run>: mesh's preset:istio wins the istio-proxy container.
    const second = `zz-mesh-${run}`;
    await createPolicy(policy(second, { namespaceSelector: { matchLabels: { team } }, containers: [{ name: 'proxy', containerName: 'istio-proxy', role: 'sidecar', stop: 'signal:TERM' }] }));
    await waitFor('both policies in the webhook', async () => {
      const p = await client.create<V1Pod>(podsPath(ns), plainPod(`probe-${randomBytes(3).toString('hex')}`, 'istio-proxy'), { dryRun: 'All' });
      return p.metadata?.annotations?.['podlife.dev/policies'] === `mesh-${run}`;
    }, { timeoutMs: 20_000 });
    for (let i = 0; i < 3; i++) {
      const p = await client.create<V1Pod>(podsPath(ns), plainPod(`overlap-${i}`, 'istio-proxy'), { dryRun: 'All' });
      assert.equal(p.metadata?.annotations?.['stop.podlife.dev/istio-proxy'], 'preset:istio');
      assert.equal(p.metadata?.annotations?.['policy.podlife.dev/istio-proxy'], `mesh-${run}/istio-proxy`);
    }
    const events = await waitFor('the overlap Warning Event', async () => {
      const list = await client.get<{ items: { reason?: string; type?: string; note?: string; regarding?: { name?: string } }[] }>('/apis/events.k8s.io/v1/namespaces/default/events');
      const found = list.items.filter((e) => e.reason === 'LifecyclePoliciesOverlap' && e.regarding?.name === second);
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 20_000 });
    assert.equal(events[0]?.type, 'Warning');
    assert.match(events[0]?.note ?? '', new RegExp(`policies mesh-${run} and ${second} both select namespace\\(s\\) .*${ns}.* and match istio-proxy; mesh-${run} applies`));
    const status = await client.get<LifecyclePolicy>(policyPath(second));
    const overlapping = (status.status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === 'Overlapping');
    assert.equal(overlapping?.status, 'True');
  });

  it('status counts the namespaces, names the unlabelled one, and refuses what only the controller can judge', async function () {
    this.timeout(30_000);
    const status = await waitFor('the mesh policy status', async () => {
      const p = await client.get<LifecyclePolicy>(policyPath(`mesh-${run}`));
      return p.status?.matchedNamespaces === 2 ? p.status : undefined;
    }, { timeoutMs: 20_000 });
    assert.equal(status.unlabelledNamespaces, 1);
    const accepted = (status.conditions as { type: string; status: string; message: string }[]).find((c) => c.type === 'Accepted');
    assert.equal(accepted?.status, 'True');
    assert.match(accepted?.message ?? '', /1 selected namespace\(s\) lack the label podlife.dev\/policies=enabled/);
    // Not in this namespace's pods: the unlabelled namespace never reaches the webhook.
    const unreached = await client.create<V1Pod>(podsPath(other), plainPod('unreached', 'istio-proxy'), { dryRun: 'All' });
    assert.equal(unreached.metadata?.annotations?.['podlife.dev/policies'], undefined);

    await createPolicy(policy(`unknown-exec-${run}`, { namespaceSelector: { matchLabels: { team } }, containers: [{ name: 'x', containerName: 'x', role: 'sidecar', stop: 'exec:nope' }] }));
    const bad = await waitFor('the unknown exec reported', async () => {
      const p = await client.get<LifecyclePolicy>(policyPath(`unknown-exec-${run}`));
      return (p.status?.conditions as { type: string; status: string; message: string }[] | undefined)?.find((c) => c.type === 'Accepted' && c.status === 'False');
    }, { timeoutMs: 20_000 });
    assert.match(bad.message, /spec\.containers\[0\]\.stop: no command "nope"/);
  });

  it("an enforcing policy wins over the pod's own annotations, and explain names it", async function () {
    this.timeout(30_000);
    // Sorts before mesh-<run>, so its match claims istio-proxy first; only pods labelled strict=yes.
    // Last in this file: while it exists it overlaps the others, and its deletion reaches the controller later.
    const strict = `a-strict-${run}`;
    await createPolicy(policy(strict, { namespaceSelector: { matchLabels: { team } }, podSelector: { matchLabels: { strict: 'yes' } }, enforce: true, containers: [{ name: 'proxy', containerName: 'istio-proxy', role: 'sidecar', stop: 'signal:TERM' }] }));
    const own = (name: string): V1Pod => {
      const p = plainPod(name, 'istio-proxy');
      p.metadata!.labels = { strict: 'yes' };
      // Not made native, whatever the nodes of the cluster allow: the note then has one form.
      p.metadata!.annotations = { ...p.metadata!.annotations, 'role.podlife.dev/istio-proxy': 'sidecar', 'stop.podlife.dev/istio-proxy': 'signal:INT', 'podlife.dev/native-sidecars': 'false' };
      return p;
    };
    const pod = await waitFor('the enforcing policy in the webhook', async () => {
      const p = await client.create<V1Pod>(podsPath(ns), own(`strict-${randomBytes(3).toString('hex')}`), { dryRun: 'All' });
      return p.metadata?.annotations?.['stop.podlife.dev/istio-proxy'] === 'signal:TERM' ? p : undefined;
    }, { timeoutMs: 20_000 });
    assert.equal(pod.metadata?.annotations?.['policy.podlife.dev/istio-proxy'], `${strict}/proxy`);
    assert.equal(pod.metadata?.annotations?.['podlife.dev/policies'], strict);
    assert.deepEqual(roleNotes(pod), [`istio-proxy is a sidecar, stopped by signal:TERM: from policy ${strict}, match proxy`]);
    // Pods without the label keep their own keys: the policy selects pods, not the namespace.
    const unselected = await client.create<V1Pod>(podsPath(ns), { ...own('not-strict'), metadata: { ...own('not-strict').metadata, labels: {} } }, { dryRun: 'All' });
    assert.equal(unselected.metadata?.annotations?.['stop.podlife.dev/istio-proxy'], 'signal:INT');
    await client.delete(policyPath(strict));
    created.splice(created.indexOf(strict), 1);
  });
});

