/**
 * The Helm chart deploy/helm/podlife, rendered by a real helm (built from helm.sh/helm/v4 by
 * scripts/go-tools.mjs): `helm lint`, and `helm template` compared object by object with what the
 * plain manifests' code makes of the same options — with default values, the objects of deploy/
 * except the differences the chart declares (CHART_DIFFERENCES). Then the rendered objects are
 * sent to a real API server as a strict server-side dry run, so every field must exist there.
 *
 * @releases every — the strict server-side dry run proves that every field the chart renders
 *   exists in each release's API.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, parse } from 'yaml';
import { ContentType, isNotFound, resourcePath } from '@podlife/core';
import {
  alertRuleGroups,
  CHART_DIFFERENCES,
  certManagerManifests,
  dashboard,
  defaultDeployOptions,
  deployFiles,
  serviceMonitorManifests,
  type DeployOptions,
  type KubeManifest,
} from '@podlife/controller';
import { ensureGoTool } from '../../../scripts/go-tools.mjs';
import { type ControlPlane, manifestPath, sharedControlPlane, startControlPlane } from '@podlife/testbed';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const chartDir = `${repo}deploy/helm/podlife`;
const NS = defaultDeployOptions.namespace;

type Manifest = KubeManifest & Record<string, unknown>;
const key = (m: KubeManifest) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;

function withoutHelmLabels(m: Manifest): Manifest {
  const copy = structuredClone(m);
  const labels = copy.metadata.labels;
  if (labels) for (const l of CHART_DIFFERENCES.helmLabels) delete labels[l];
  return copy;
}

const byKey = (ms: Manifest[]) => new Map(ms.map((m) => [key(m), m]));
/** The first object of a kind (and name), typed as the test reads it. */
function pick<T>(ms: Manifest[], kind: string, name?: string): T {
  const found = ms.find((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  assert.ok(found, `no ${kind}${name ? `/${name}` : ''} rendered`);
  return found as unknown as T;
}

describe('Helm chart deploy/helm/podlife (real helm, real API server)', function () {
  this.timeout(120_000);
  let helmPath = '';

  before(async function () {
    // The test command builds it beforehand; a single file run builds it here (minutes, once).
    this.timeout(30 * 60_000);
    helmPath = (await ensureGoTool('helm')).path;
  });

  function helm(args: string[]): { status: number; stdout: string; stderr: string } {
    const r = spawnSync(helmPath, args, { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: '/nonexistent-helm-cache', HELM_CONFIG_HOME: '/nonexistent-helm-config', HELM_DATA_HOME: '/nonexistent-helm-data' } });
    if (r.error) throw r.error;
    return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  }

  function template(set: string[] = [], extra: string[] = []): Manifest[] {
    const r = helm(['template', 'podlife', chartDir, '--namespace', NS, ...set.flatMap((s) => ['--set', s]), ...extra]);
    assert.equal(r.status, 0, `helm template ${set.join(' ')} failed: ${r.stderr}`);
    return documents(r.stdout);
  }

  function templateError(set: string[]): string {
    const r = helm(['template', 'podlife', chartDir, '--namespace', NS, ...set.flatMap((s) => ['--set', s])]);
    assert.notEqual(r.status, 0, `helm template ${set.join(' ')} should have failed`);
    return r.stderr;
  }

  const plain = (o: DeployOptions): Manifest[] =>
    deployFiles(o)
      .filter((f) => f.optIn !== true)
      .flatMap((f) => f.manifests as Manifest[])
      .filter((m) => !(CHART_DIFFERENCES.plainOnly as readonly string[]).includes(m.kind));

  /** Chart objects (Helm labels removed) against the expected ones, each named when it differs. */
  function assertSameObjects(chart: Manifest[], expected: Manifest[]): void {
    const got = byKey(chart.map(withoutHelmLabels));
    const want = byKey(expected);
    assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort());
    for (const [k, m] of want) assert.deepEqual(got.get(k), m, k);
  }

  it('helm lint --strict passes with the default values and with each certificate mode', () => {
    for (const set of [[], ['webhook.certificates=cert-manager'], ['webhook.certificates=manual', 'webhook.caBundle=Q0E='], ['serviceMonitor.enabled=true', 'prometheusRule.enabled=true', 'grafanaDashboard.enabled=true']]) {
      const r = helm(['lint', '--strict', chartDir, ...set.flatMap((s) => ['--set', s])]);
      assert.equal(r.status, 0, `helm lint ${set.join(' ')}: ${r.stdout}${r.stderr}`);
    }
  });

  it('with default values renders the objects of deploy/, but for a self-signed webhook certificate and no Namespace', () => {
    const chart = template();
    const secret = pick<Manifest & { data: Record<string, string> }>(chart, 'Secret');
    assert.equal(secret.metadata.name, 'podlife-webhook-tls');
    const webhook = pick<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(chart, 'MutatingWebhookConfiguration');
    const caBundle = webhook.webhooks[0]?.clientConfig.caBundle ?? '';
    assert.equal(caBundle, secret.data['ca.crt'], 'the caBundle is the CA of the Secret');
    const ca = new X509Certificate(Buffer.from(caBundle, 'base64'));
    const serving = new X509Certificate(Buffer.from(secret.data['tls.crt'] ?? '', 'base64'));
    assert.ok(serving.verify(ca.publicKey), 'the serving certificate is signed by the caBundle');
    assert.match(serving.subjectAltName ?? '', new RegExp(`DNS:podlife-controller\\.${NS}\\.svc(,|$)`));

    const expected = plain(defaultDeployOptions).map((m) => {
      if (m.kind !== 'MutatingWebhookConfiguration') return m;
      const copy = structuredClone(m) as Manifest & { webhooks: { clientConfig: Record<string, unknown> }[] };
      delete copy.metadata.annotations; // cert-manager's CA injection: not used with the chart's own pair
      for (const w of copy.webhooks) w.clientConfig.caBundle = caBundle; // every entry (opted-in pods, policy namespaces) trusts the same CA
      return copy;
    });
    assertSameObjects(chart.filter((m) => m.kind !== 'Secret'), expected);
  });

  it('with cert-manager renders deploy/ exactly, plus the Issuer and Certificate', () => {
    assertSameObjects(template(['webhook.certificates=cert-manager']), [...plain(defaultDeployOptions), ...(certManagerManifests(defaultDeployOptions) as Manifest[])]);
  });

  it('with cert-manager and an issuer of your own makes no Issuer and names yours', () => {
    const chart = template(['webhook.certificates=cert-manager', 'webhook.certManager.issuerRef.kind=ClusterIssuer', 'webhook.certManager.issuerRef.name=corp-ca']);
    assert.ok(!chart.some((m) => m.kind === 'Issuer'));
    assert.deepEqual(pick<{ spec: { issuerRef: unknown } }>(chart, 'Certificate').spec.issuerRef, { kind: 'ClusterIssuer', name: 'corp-ca' });
  });

  it('with other values renders what the plain generator makes of the same options', () => {
    const o: DeployOptions = {
      ...defaultDeployOptions,
      controllers: ['keystone', 'node-readiness'],
      namespaces: ['shop', 'batch', 'kube-system'],
      replicas: 3,
      size: 'large-managed',
      apiServerCidrs: ['192.0.2.10/32', '198.51.100.0/24'],
      metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { app: 'prometheus' } } }],
      readinessTaints: ['readiness.k8s.io/cni', 'readiness.k8s.io/gpu'],
      readinessPodNamespaces: ['kube-system', 'gpu-operator'],
      nodeSelector: { pool: 'system' },
    };
    const chart = template([
      'webhook.certificates=cert-manager',
      'controllers={keystone,node-readiness}',
      'namespaces={shop,batch,kube-system}',
      'replicas=3',
      'size=large-managed',
      'networkPolicy.apiServerCidrs={192.0.2.10/32,198.51.100.0/24}',
      'networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring',
      'networkPolicy.metricsFrom[0].podSelector.matchLabels.app=prometheus',
      'readinessTaints={readiness.k8s.io/cni,readiness.k8s.io/gpu}',
      'readinessPodNamespaces={kube-system,gpu-operator}',
      'nodeSelector.pool=system',
    ]);
    assertSameObjects(chart, [...plain(o), ...(certManagerManifests(o) as Manifest[])]);
  });

  it('the manual mode takes your CA, and refuses to render without one', () => {
    const chart = template(['webhook.certificates=manual', 'webhook.caBundle=Q0E=']);
    assert.ok(!chart.some((m) => m.kind === 'Secret' || m.kind === 'Certificate'));
    const webhook = pick<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(chart, 'MutatingWebhookConfiguration');
    assert.equal(webhook.webhooks[0]?.clientConfig.caBundle, 'Q0E=');
    assert.match(templateError(['webhook.certificates=manual']), /webhook.certificates=manual needs webhook.caBundle/);
  });

  it('a size refuses controllers it was not measured with, as the generator does', () => {
    assert.match(templateError(['size=large-keystone']), /size "large-keystone" was measured without network-conditions/);
  });

  it('the values schema refuses an unknown size, controller or certificate mode, naming the value', () => {
    assert.match(templateError(['size=huge']), /size/);
    assert.match(templateError(['controllers={keystone,sidecars}']), /controllers/);
    assert.match(templateError(['webhook.certificates=vault']), /certificates/);
    assert.match(templateError(['replicas=0']), /replicas/);
  });

  it('resources, heap, tolerations and priority class come from values when given', () => {
    const chart = template(['resources.requests.memory=1Gi', 'resources.limits.memory=2Gi', 'heapMiB=1536', 'tolerations[0].operator=Exists', 'priorityClass.create=false', 'priorityClass.name=system-cluster-critical', 'podDisruptionBudget.enabled=false', 'networkPolicy.enabled=false']);
    const spec = pick<{ spec: { template: { spec: Record<string, unknown> & { containers: { resources: unknown; env: { name: string; value?: string }[] }[] } } } }>(chart, 'Deployment').spec.template.spec;
    assert.deepEqual(spec.containers[0]?.resources, { requests: { memory: '1Gi' }, limits: { memory: '2Gi' } });
    assert.equal(spec.containers[0]?.env.find((e) => e.name === 'NODE_OPTIONS')?.value, '--max-old-space-size=1536 --max-semi-space-size=6');
    assert.deepEqual(spec.tolerations, [{ operator: 'Exists' }]);
    assert.equal(spec.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(chart.filter((m) => ['PriorityClass', 'PodDisruptionBudget', 'NetworkPolicy'].includes(m.kind)), []);
  });

  it('places the controller by affinity when given, and renders no reach policy when every protected namespace is listed', () => {
    const chart = template(['affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=pool', 'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists', `namespaces={kube-system,kube-node-lease,${NS}}`]);
    const spec = pick<{ spec: { template: { spec: { affinity?: unknown } } } }>(chart, 'Deployment').spec.template.spec;
    assert.deepEqual(spec.affinity, { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }] } } });
    assert.deepEqual(chart.filter((m) => m.kind.startsWith('ValidatingAdmissionPolicy')), []);
  });

  it('runs the image by digest and adds environment variables when given, refusing a malformed digest or name', () => {
    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
    const chart = template([`image.digest=${digest}`, 'extraEnv[0].name=HTTPS_PROXY', 'extraEnv[0].value=http://proxy:3128', 'extraEnv[1].name=KUBERNETES_SERVICE_PORT', 'extraEnv[1].value=6443']);
    const container = pick<{ spec: { template: { spec: { containers: { image: string; env: { name: string; value?: string }[] }[] } } } }>(chart, 'Deployment').spec.template.spec.containers[0]!;
    assert.equal(container.image, `podlife/podlife-controller@${digest}`);
    assert.deepEqual(container.env.slice(-2), [{ name: 'HTTPS_PROXY', value: 'http://proxy:3128' }, { name: 'KUBERNETES_SERVICE_PORT', value: '6443' }]);
    assert.match(templateError(['image.digest=latest']), /digest/);
    assert.match(templateError(['extraEnv[0].name=A B', 'extraEnv[0].value=x']), /name/);
  });

  it('renders the ServiceMonitor, the alerting rules and the dashboard when asked, with extra labels', () => {
    const chart = template(['serviceMonitor.enabled=true', 'serviceMonitor.labels.release=prom', 'prometheusRule.enabled=true', 'grafanaDashboard.enabled=true']);
    const sm = withoutHelmLabels(pick<Manifest>(chart, 'ServiceMonitor'));
    const [expectedSm] = serviceMonitorManifests(defaultDeployOptions) as Manifest[];
    assert.deepEqual(sm, { ...expectedSm!, metadata: { ...expectedSm!.metadata, labels: { ...expectedSm!.metadata.labels, release: 'prom' } } });
    const rule = pick<{ spec: { groups: unknown } }>(chart, 'PrometheusRule');
    assert.deepEqual(rule.spec.groups, alertRuleGroups());
    const cm = pick<Manifest & { data: Record<string, string> }>(chart, 'ConfigMap', 'podlife-dashboard');
    assert.equal(cm.metadata.labels?.grafana_dashboard, '1');
    assert.deepEqual(JSON.parse(cm.data['podlife.json'] ?? ''), dashboard());
  });

  it('ships the NodeReadinessRule and LifecyclePolicy CRDs as deploy/crds has them', () => {
    const crds = template([], ['--include-crds']).filter((m) => m.kind === 'CustomResourceDefinition');
    const byName = (a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }) => String(a.metadata?.name).localeCompare(String(b.metadata?.name));
    const files = ['nodereadinessrules.yaml', 'lifecyclepolicies.yaml'].map((f) => parse(readFileSync(`${repo}deploy/crds/${f}`, 'utf8')) as { metadata?: { name?: string } });
    assert.deepEqual([...crds].sort(byName), files.sort(byName));
  });

  it('every object it renders is accepted by a real API server (strict server-side dry run)', async () => {
    const cp = await sharedControlPlane();
    const ns = `podlife-chart-${randomBytes(3).toString('hex')}`;
    await cp.client.create(resourcePath({ version: 'v1', resource: 'namespaces' }), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    try {
      const r = helm(['template', 'podlife', chartDir, '--namespace', ns, '--set', `namespaces={${ns}}`, '--include-crds']);
      assert.equal(r.status, 0, r.stderr);
      const objects = documents(r.stdout);
      for (const m of objects) {
        await cp.client.patch(manifestPath(m), JSON.stringify(m), ContentType.ApplyPatch, { fieldManager: 'podlife-chart-test', force: true, dryRun: 'All', fieldValidation: 'Strict' });
      }
      assert.ok(objects.length >= 15, `${objects.length} objects`);
    } finally {
      await cp.client.delete(resourcePath({ version: 'v1', resource: 'namespaces', name: ns }));
    }
  });
});

function documents(text: string): Manifest[] {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new Error('helm printed no YAML documents');
  return docs.map((d) => d.toJS() as Manifest | null).filter((m): m is Manifest => m !== null);
}

/**
 * `helm install`, `upgrade` and `uninstall` against a real API server of its own (the chart's
 * cluster-scoped objects would collide with other suites' on the shared one). No node runs the
 * pods: this proves what Helm itself does with the chart — above all that the self-signed pair is
 * made once and kept across upgrades, which `helm template` (no cluster, no `lookup`) cannot show.
 */
describe('Helm chart install, upgrade and uninstall (real helm, private API server)', function () {
  this.timeout(180_000);
  let cp: ControlPlane | undefined;
  let helmPath = '';
  const ns = 'podlife-system';

  before(async function () {
    this.timeout(30 * 60_000);
    helmPath = (await ensureGoTool('helm')).path;
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  function helm(args: string[]): { status: number; out: string } {
    const r = spawnSync(helmPath, ['--kubeconfig', cp!.kubeconfigPath, ...args], { encoding: 'utf8', env: { ...process.env, HELM_CACHE_HOME: '/nonexistent-helm-cache', HELM_CONFIG_HOME: '/nonexistent-helm-config', HELM_DATA_HOME: '/nonexistent-helm-data' } });
    if (r.error) throw r.error;
    return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
  }

  const secretPath = resourcePath({ version: 'v1', resource: 'secrets', namespace: ns, name: 'podlife-webhook-tls' });
  const webhookPath = resourcePath({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations', name: 'podlife' });
  const caBundle = async () => (await cp!.client.get<{ webhooks: { clientConfig: { caBundle?: string } }[] }>(webhookPath)).webhooks[0]?.clientConfig.caBundle;

  it('installs; an upgrade keeps the webhook certificate and its caBundle; uninstall removes what it made but the CRD', async () => {
    const install = helm(['install', 'podlife', chartDir, '--namespace', ns, '--create-namespace']);
    assert.equal(install.status, 0, install.out);
    const first = await cp!.client.get<{ data: Record<string, string> }>(secretPath);
    assert.equal(await caBundle(), first.data['ca.crt']);
    const deployment = resourcePath({ group: 'apps', version: 'v1', resource: 'deployments', namespace: ns, name: 'podlife-controller' });
    assert.equal((await cp!.client.get<{ spec: { replicas: number } }>(deployment)).spec.replicas, 2);

    const upgrade = helm(['upgrade', 'podlife', chartDir, '--namespace', ns, '--set', 'replicas=3']);
    assert.equal(upgrade.status, 0, upgrade.out);
    const second = await cp!.client.get<{ data: Record<string, string> }>(secretPath);
    assert.deepEqual(second.data, first.data, 'the same key pair after the upgrade');
    assert.equal(await caBundle(), first.data['ca.crt']);
    assert.equal((await cp!.client.get<{ spec: { replicas: number } }>(deployment)).spec.replicas, 3);

    const uninstall = helm(['uninstall', 'podlife', '--namespace', ns, '--wait']);
    assert.equal(uninstall.status, 0, uninstall.out);
    for (const path of [secretPath, webhookPath, deployment, resourcePath({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', name: 'podlife-keystone' })]) {
      await assert.rejects(cp!.client.get(path), (err: unknown) => isNotFound(err), `${path} still exists`);
    }
    await cp!.client.get(resourcePath({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions', name: 'nodereadinessrules.readiness.podlife.dev' }));
  });
});
