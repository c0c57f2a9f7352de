import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'mocha';
import { lifecyclePolicyCrd } from '@podlife/keystone';
import { policyCrdYaml, POLICY_CRD_FILE } from '../src/deploy/crds.js';
import { webhookManifests, defaultDeployOptions, type KubeManifest } from '../src/deploy/manifests.js';
import { controllerPermissions } from '../src/rbac/rules.js';

describe('the LifecyclePolicy CRD and its deploy parts', () => {
  it('deploy/crds/lifecyclepolicies.yaml is what the code generates (run scripts/render-deploy.ts after changing it)', () => {
    assert.equal(readFileSync(new URL(`../../../deploy/crds/${POLICY_CRD_FILE}`, import.meta.url), 'utf8'), policyCrdYaml());
  });

  it('is cluster-scoped with a status subresource, and refuses image and command fields by name', () => {
    assert.equal(lifecyclePolicyCrd.spec.scope, 'Cluster');
    assert.deepEqual(lifecyclePolicyCrd.spec.versions[0]?.subresources, { status: {} });
    const text = JSON.stringify(lifecyclePolicyCrd);
    for (const field of ['.image', '.command', '.args']) assert.ok(text.includes(`"fieldPath":"${field}"`), field);
  });

  it('the controller reads policies and writes only their status: nobody gets create or update through podlife', () => {
    const rules = controllerPermissions.keystone.cluster.filter((r) => r.apiGroups.includes('podlife.dev'));
    assert.deepEqual(rules.flatMap((r) => r.verbs).sort(), ['get', 'list', 'patch', 'watch']);
    assert.deepEqual(rules.find((r) => r.verbs.includes('patch'))?.resources, ['lifecyclepolicies/status']);
  });

  it('a second webhook entry reaches every pod of labelled namespaces, never the system ones, never twice', () => {
    const [config] = webhookManifests(defaultDeployOptions) as (KubeManifest & { webhooks: Record<string, unknown>[] })[];
    const entry = config?.webhooks[1] as { name: string; namespaceSelector: { matchLabels: Record<string, string>; matchExpressions: { values: string[] }[] }; objectSelector: unknown; reinvocationPolicy: string };
    assert.equal(entry.name, 'policies.podlife.dev');
    assert.deepEqual(entry.namespaceSelector.matchLabels, { 'podlife.dev/policies': 'enabled' });
    assert.ok(entry.namespaceSelector.matchExpressions[0]?.values.includes('kube-system'));
    assert.deepEqual(entry.objectSelector, { matchExpressions: [{ key: 'podlife.dev/admission', operator: 'NotIn', values: ['enabled'] }] });
    assert.equal(entry.reinvocationPolicy, 'IfNeeded');
  });
});
