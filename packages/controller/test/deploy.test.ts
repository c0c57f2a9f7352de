import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deployFiles, renderYaml, rbacManifests, webhookManifests, defaultDeployOptions, type KubeManifest } from '../src/deploy/manifests.js';
import { controllerPermissions } from '../src/rbac/rules.js';
import { controllerNames } from '../src/options/flags.js';

const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const kinds = (ms: KubeManifest[]) => ms.map((m) => `${m.kind}/${m.metadata.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata.name}`);

describe('deploy manifests', () => {
  for (const file of deployFiles()) {
    it(`deploy/${file.name} is what the code generates (run scripts/render-deploy.ts after changing it)`, () => {
      assert.equal(readFileSync(deployDir + file.name, 'utf8'), renderYaml(file));
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
    assert.deepEqual(clusterRole.rules.flatMap((r) => r.resources), ['nodes']);
  });

  it('the webhook fails open and only sees opted-in pods', () => {
    const [config] = webhookManifests(defaultDeployOptions) as (KubeManifest & { webhooks: Record<string, unknown>[] })[];
    const hook = config?.webhooks[0];
    assert.equal(hook?.failurePolicy, 'Ignore');
    assert.deepEqual(hook?.objectSelector, { matchLabels: { 'podlife.dev/admission': 'enabled' } });
  });
});
