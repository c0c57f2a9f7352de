import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { excludedNamespaces } from '../src/app.js';
import {
  defaultDeployOptions,
  deployFiles,
  deploymentManifests,
  networkPolicyManifests,
  protectedNamespaces,
  reachPolicyManifests,
  webhookManifests,
  type DeployOptions,
  type KubeManifest,
} from '../src/deploy/manifests.js';
import { chartFiles } from '../src/deploy/chart.js';

/** What a stolen controller token reaches, as the generated manifests bound it (docs/adr/0257). */
const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const chart = chartFiles(readFileSync(`${deployDir}crds/nodereadinessrules.yaml`, 'utf8'));

type Toleration = { key?: string; operator?: string; effect?: string };
type ReachPolicy = KubeManifest & {
  spec: {
    failurePolicy: string;
    matchConstraints: { resourceRules: { operations: string[]; resources: string[] }[]; namespaceSelector: { matchExpressions: { values: string[] }[] } };
    matchConditions: { expression: string }[];
  };
};
type Rule = { from?: Record<string, unknown>[]; ports?: { port: number }[] };

const podSpec = (o: DeployOptions) =>
  (deploymentManifests(o)[0] as KubeManifest & { spec: { template: { spec: { tolerations: Toleration[]; nodeSelector?: Record<string, string> } } } }).spec.template.spec;
const ingress = (o: DeployOptions) => (networkPolicyManifests(o)[0] as KubeManifest & { spec: { ingress: Rule[] } }).spec.ingress;
const opens = (rules: Rule[], port: number) => rules.filter((r) => (r.ports ?? []).some((p) => p.port === port));

describe('the metrics port in the NetworkPolicy (issue 33, defect 3)', () => {
  it('is closed by default: no rule admits anything to 8080', () => {
    assert.deepEqual(opens(ingress(defaultDeployOptions), 8080), []);
    const shipped = parse(readFileSync(`${deployDir}networkpolicy.yaml`, 'utf8').split('\n---\n')[1]!) as { spec: { ingress: Rule[] } };
    assert.deepEqual(opens(shipped.spec.ingress, 8080), []);
  });

  it('admits only the peers the admin names', () => {
    const prometheus = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } };
    const rules = opens(ingress({ ...defaultDeployOptions, metricsFrom: [prometheus] }), 8080);
    assert.deepEqual(rules, [{ from: [prometheus], ports: [{ protocol: 'TCP', port: 8080 }] }]);
  });

  it('keeps the health port open (the kubelet probes it) and the webhook port to the API server only', () => {
    const rules = ingress({ ...defaultDeployOptions, apiServerCidrs: ['10.0.0.1/32'] });
    assert.deepEqual(opens(rules, 8081), [{ ports: [{ protocol: 'TCP', port: 8081 }] }]);
    assert.deepEqual(opens(rules, 9443), [{ from: [{ ipBlock: { cidr: '10.0.0.1/32' } }], ports: [{ protocol: 'TCP', port: 9443 }] }]);
  });

  it('the chart takes the peers from networkPolicy.metricsFrom, empty by default', () => {
    const values = parse(chart.find((f) => f.path === 'values.yaml')!.content) as { networkPolicy: { metricsFrom: unknown[] } };
    assert.deepEqual(values.networkPolicy.metricsFrom, []);
    assert.match(chart.find((f) => f.path === 'templates/networkpolicy.yaml')!.content, /\{\{- if \.Values\.networkPolicy\.metricsFrom \}\}\n {4}- from:\n\{\{- toYaml \.Values\.networkPolicy\.metricsFrom \| nindent 8 \}\}\n {6}ports:\n {8}- protocol: TCP\n {10}port: 8080\n/);
  });
});

describe('where a stolen controller token reaches (issue 33, defect 4; ADR 0257)', () => {
  it('the Deployment never tolerates every taint: the control plane, node trouble and the readiness taints named', () => {
    const tolerations = podSpec(defaultDeployOptions).tolerations;
    assert.ok(tolerations.every((t) => t.key !== undefined), `a toleration without a key tolerates every taint: ${JSON.stringify(tolerations)}`);
    assert.deepEqual(tolerations.map((t) => `${t.key}:${t.effect ?? '*'}`), ['node-role.kubernetes.io/control-plane:NoSchedule', 'node.kubernetes.io/not-ready:NoExecute', 'node.kubernetes.io/unreachable:NoExecute']);
    const named = podSpec({ ...defaultDeployOptions, readinessTaints: ['readiness.k8s.io/cni'] }).tolerations;
    assert.deepEqual(named.at(-1), { key: 'readiness.k8s.io/cni', operator: 'Exists' });
  });

  it('node placement is a value: nodeSelector in the manifests, nodeSelector and affinity in the chart', () => {
    assert.equal(podSpec(defaultDeployOptions).nodeSelector, undefined);
    assert.deepEqual(podSpec({ ...defaultDeployOptions, nodeSelector: { pool: 'system' } }).nodeSelector, { pool: 'system' });
    const values = parse(chart.find((f) => f.path === 'values.yaml')!.content) as Record<string, unknown>;
    assert.deepEqual([values.nodeSelector, values.affinity, values.readinessTaints], [{}, {}, []]);
    const template = chart.find((f) => f.path === 'templates/deployment.yaml')!.content;
    assert.match(template, /\{\{- if \.Values\.nodeSelector \}\}\n {6}nodeSelector:/);
    assert.match(template, /\{\{- if \.Values\.affinity \}\}\n {6}affinity:/);
  });

  it('exec, ephemeral containers, deletes and status writes are denied to its ServiceAccount in kube-system, kube-node-lease and its own namespace', () => {
    const [policy, binding] = reachPolicyManifests(defaultDeployOptions) as [ReachPolicy, KubeManifest & { spec: unknown }];
    assert.deepEqual(
      policy.spec.matchConstraints.resourceRules.map((r) => `${r.operations.join()} ${r.resources.join()}`),
      ['CONNECT pods/exec', 'UPDATE pods/ephemeralcontainers', 'DELETE pods', 'UPDATE pods/status'],
    );
    assert.deepEqual(policy.spec.matchConstraints.namespaceSelector.matchExpressions[0]?.values, ['kube-system', 'kube-node-lease', 'podlife-system']);
    assert.equal(policy.spec.matchConditions[0]?.expression, 'request.userInfo.username == "system:serviceaccount:podlife-system:podlife-controller"');
    assert.equal(policy.spec.failurePolicy, 'Fail');
    assert.deepEqual(binding.spec, { policyName: policy.metadata.name, validationActions: ['Deny'] });
    assert.ok(deployFiles().some((f) => f.name === 'reach.yaml' && f.manifests.length === 2));
    assert.match(readFileSync(`${deployDir}kustomization.yaml`, 'utf8'), /^ {2}- reach\.yaml$/m);
  });

  it('a namespace the admin lists is acted in: it leaves the protected list (and the policy goes when none is left)', () => {
    assert.deepEqual(protectedNamespaces({ namespace: 'podlife-system', namespaces: ['kube-system', 'shop'] }), ['kube-node-lease', 'podlife-system']);
    assert.deepEqual(reachPolicyManifests({ ...defaultDeployOptions, namespaces: ['kube-system', 'kube-node-lease', 'podlife-system'] }), []);
  });

  it('the webhook never sees kube-system, kube-node-lease or its own namespace unless they are listed', () => {
    const selector = (o: DeployOptions) => ((webhookManifests(o)[0] as KubeManifest & { webhooks: { namespaceSelector: unknown }[] }).webhooks[0]!.namespaceSelector);
    assert.deepEqual(selector(defaultDeployOptions), { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kube-node-lease', 'podlife-system'] }] });
    assert.deepEqual(selector({ ...defaultDeployOptions, namespaces: ['kube-system'] }), { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['kube-system'] }] });
  });

  it('the controller filters the same namespaces out when none are listed, and none when the admin lists them', () => {
    assert.deepEqual(excludedNamespaces([], 'podlife-system'), ['kube-system', 'kube-node-lease', 'podlife-system']);
    assert.deepEqual(excludedNamespaces(['kube-system', 'shop'], 'podlife-system'), []);
  });
});

describe('the webhook timeout (issue 33, defect 10)', () => {
  it('is 2 s: what an unreachable webhook costs each opted-in pod creation before it fails open, said where apiServerCidrs is set', () => {
    const hook = (webhookManifests(defaultDeployOptions)[0] as KubeManifest & { webhooks: { timeoutSeconds: number }[] }).webhooks[0]!;
    assert.equal(hook.timeoutSeconds, 2);
    assert.match(readFileSync(`${deployDir}networkpolicy.yaml`, 'utf8'), /waits the webhook's 2 s timeout/);
    assert.match(chart.find((f) => f.path === 'values.yaml')!.content, /waits the webhook's timeout \(2 s\)/);
    assert.match(readFileSync(`${deployDir}README.md`, 'utf8'), /waits the\s+webhook's timeout \(2 s\)/);
  });
});
