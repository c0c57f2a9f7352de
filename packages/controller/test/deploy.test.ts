import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTROLLER_SIZES, deployFiles, deploymentManifests, renderYaml, rbacManifests, webhookManifests, defaultDeployOptions, type DeployOptions, type KubeManifest } from '../src/deploy/manifests.js';
import { controllerPermissions } from '../src/rbac/rules.js';
import { chartFiles } from '../src/deploy/chart.js';
import { observabilityFiles } from '../src/deploy/observability.js';
import { controllerNames } from '../src/options/flags.js';

const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const kinds = (ms: KubeManifest[]) => ms.map((m) => `${m.kind}/${m.metadata.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata.name}`);

describe('deploy manifests', () => {
  for (const file of deployFiles()) {
    it(`deploy/${file.name} is what the code generates (run scripts/render-deploy.ts after changing it)`, () => {
      assert.equal(readFileSync(deployDir + file.name, 'utf8'), renderYaml(file));
    });
  }

  const chartDir = join(deployDir, 'helm', 'podlife');
  const chart = chartFiles(readFileSync(join(deployDir, 'crds', 'nodereadinessrules.yaml'), 'utf8'));
  for (const file of chart) {
    it(`the chart's ${file.path} is what the code generates (run scripts/render-deploy.ts after changing it)`, () => {
      assert.equal(readFileSync(join(chartDir, file.path), 'utf8'), file.content);
    });
  }

  it('the chart holds no file the code does not generate', () => {
    const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [relative(chartDir, join(dir, e.name))]));
    assert.deepEqual(walk(chartDir).sort(), chart.map((f) => f.path).sort());
  });

  for (const file of observabilityFiles()) {
    it(`deploy/observability/${file.path} is what the code generates`, () => {
      assert.equal(readFileSync(join(deployDir, 'observability', file.path), 'utf8'), file.content);
    });
  }

  it('grants no wildcard and nothing on Secrets or ConfigMaps', () => {
    for (const name of controllerNames) {
      const { cluster, namespaced } = controllerPermissions[name];
      for (const rule of [...cluster, ...namespaced]) {
        assert.ok(![...rule.verbs, ...rule.resources, ...rule.apiGroups].includes('*'), `${name}: wildcard in ${JSON.stringify(rule)}`);
        assert.ok(!rule.resources.some((r) => r === 'secrets' || r === 'configmaps'), `${name}: ${rule.resources.join()}`);
      }
    }
  });

  it('binds one ClusterRole per enabled controller when cluster-wide', () => {
    const ms = rbacManifests({ ...defaultDeployOptions, controllers: ['keystone'] });
    assert.deepEqual(kinds(ms), [
      'ServiceAccount/podlife-system/podlife-controller',
      'ClusterRole/podlife-keystone',
      'ClusterRoleBinding/podlife-keystone',
      'Role/podlife-system/podlife-leader-election',
      'RoleBinding/podlife-system/podlife-leader-election',
    ]);
  });

  it('grants the pod rules through a Role in each scoped namespace, keeping only node rules cluster-wide', () => {
    const ms = rbacManifests({ ...defaultDeployOptions, controllers: ['keystone'], namespaces: ['a', 'b'] });
    assert.deepEqual(kinds(ms).slice(1, 7), [
      'ClusterRole/podlife-keystone',
      'ClusterRoleBinding/podlife-keystone',
      'Role/a/podlife-keystone',
      'RoleBinding/a/podlife-keystone',
      'Role/b/podlife-keystone',
      'RoleBinding/b/podlife-keystone',
    ]);
    const clusterRole = ms[1] as KubeManifest & { rules: { resources: string[] }[] };
    assert.deepEqual(clusterRole.rules.flatMap((r) => r.resources), ['nodes', 'namespaces', 'lifecyclepolicies', 'lifecyclepolicies/status']);
  });

  it('the webhook fails open and only sees opted-in pods', () => {
    const [config] = webhookManifests(defaultDeployOptions) as (KubeManifest & { webhooks: Record<string, unknown>[] })[];
    const hook = config?.webhooks[0];
    assert.equal(hook?.failurePolicy, 'Ignore');
    assert.deepEqual(hook?.objectSelector, { matchLabels: { 'podlife.dev/admission': 'enabled' } });
  });

  it('the webhook is called again when a later webhook changes the pod (reinvocationPolicy IfNeeded), in deploy/ and in the chart', () => {
    const [config] = webhookManifests(defaultDeployOptions) as (KubeManifest & { webhooks: Record<string, unknown>[] })[];
    assert.equal(config?.webhooks[0]?.reinvocationPolicy, 'IfNeeded');
    assert.match(readFileSync(join(deployDir, 'webhook.yaml'), 'utf8'), /^ {4}reinvocationPolicy: IfNeeded$/m);
    assert.match(chart.find((f) => f.path === 'templates/webhook.yaml')?.content ?? '', /^ {4}reinvocationPolicy: IfNeeded$/m);
  });
});

describe('deployment sizing', () => {
  const container = (o: DeployOptions) => {
    const d = deploymentManifests(o).find((m) => m.kind === 'Deployment') as KubeManifest & {
      spec: { template: { spec: { containers: { args: string[]; env: { name: string; value?: string }[]; resources: { requests: { memory: string }; limits: { memory: string } } }[] } } };
    };
    return d.spec.template.spec.containers[0]!;
  };

  it('the generated manifests default to a stated size, whose memory and heap cap they carry', () => {
    assert.equal(defaultDeployOptions.size, 'medium');
    const c = container(defaultDeployOptions);
    const size = CONTROLLER_SIZES.medium;
    assert.deepEqual([c.resources.requests.memory, c.resources.limits.memory], [size.memoryRequest, size.memoryLimit]);
    assert.deepEqual(c.env.find((e) => e.name === 'NODE_OPTIONS')?.value, `--max-old-space-size=${size.heapMiB} --max-semi-space-size=6`);
    assert.match(deployFiles().find((f) => f.name === 'deployment.yaml')?.comment ?? '', /Sized "medium": up to 25,000 pods and 1,000 nodes, with keystone/);
  });

  it('caps the V8 heap below the memory limit for every size', () => {
    const mib = (q: string): number => (q.endsWith('Gi') ? Number(q.slice(0, -2)) * 1024 : Number(q.slice(0, -2)));
    for (const [name, size] of Object.entries(CONTROLLER_SIZES)) {
      assert.ok(size.heapMiB < mib(size.memoryLimit), `${name}: heap ${size.heapMiB} MiB under limit ${size.memoryLimit}`);
      assert.ok(mib(size.memoryRequest) <= mib(size.memoryLimit), name);
    }
  });

  it('a managed size runs --managed-pods-only, and a size refuses controllers it was not measured with', () => {
    const managed = { ...defaultDeployOptions, size: 'large-managed' as const, controllers: ['keystone' as const] };
    assert.ok(container(managed).args.includes('--managed-pods-only'));
    assert.ok(!container(defaultDeployOptions).args.includes('--managed-pods-only'));
    assert.throws(() => deploymentManifests({ ...managed, controllers: ['keystone', 'network-conditions'] }), /measured without network-conditions/);
  });
});
