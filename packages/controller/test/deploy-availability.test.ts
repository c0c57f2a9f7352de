import assert from 'node:assert/strict';
import { controllerPermissions, defaultDeployOptions, deployFiles, type KubeManifest } from '../src/index.js';

type PodSpec = {
  priorityClassName?: string;
  tolerations?: { key?: string; operator?: string; effect?: string }[];
  topologySpreadConstraints?: { topologyKey: string; whenUnsatisfiable: string }[];
};

const all = (o = defaultDeployOptions): KubeManifest[] => deployFiles(o).flatMap((f) => f.manifests);
const find = (kind: string, o = defaultDeployOptions) => all(o).filter((m) => m.kind === kind);
const podSpec = (o = defaultDeployOptions): PodSpec => (find('Deployment', o)[0] as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

/** Whether a toleration list tolerates a taint, by the scheduler's rules. */
function tolerates(tolerations: PodSpec['tolerations'], taint: { key: string; effect: string }): boolean {
  return (tolerations ?? []).some(
    (t) => (t.effect === undefined || t.effect === taint.effect) && (t.operator === 'Exists' ? t.key === undefined || t.key === taint.key : t.key === taint.key),
  );
}

describe('deploy manifests: the controller runs where it is needed', () => {
  it('tolerates the readiness taints named, with either effect, and the control plane', () => {
    const keys = ['readiness.k8s.io/NetworkReady', 'readiness.k8s.io/gpu', 'readiness.k8s.io/CSIReady'];
    const tolerations = podSpec({ ...defaultDeployOptions, readinessTaints: keys }).tolerations;
    for (const key of keys) {
      for (const effect of ['NoSchedule', 'NoExecute']) assert.ok(tolerates(tolerations, { key, effect }), `${key}:${effect}`);
    }
    assert.ok(tolerates(podSpec().tolerations, { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }));
  });

  it('tolerates no taint it was not told of: pools set apart for other workloads stay out of its reach (ADR 0257)', () => {
    for (const key of ['dedicated', 'sandbox.gke.io/runtime', 'readiness.k8s.io/NetworkReady']) {
      assert.equal(tolerates(podSpec().tolerations, { key, effect: 'NoSchedule' }), false, key);
    }
  });

  it('has a priority class it ships, below the system classes', () => {
    const [pc] = find('PriorityClass') as (KubeManifest & { value: number; globalDefault: boolean })[];
    assert.equal(podSpec().priorityClassName, pc?.metadata.name);
    assert.ok((pc?.value ?? 0) > 0 && (pc?.value ?? Infinity) <= 1_000_000_000);
    assert.equal(pc?.globalDefault, false);
  });

  it('has a PodDisruptionBudget over its pods that lets one go at a time', () => {
    const [pdb] = find('PodDisruptionBudget') as (KubeManifest & { spec: { maxUnavailable: number; selector: unknown } })[];
    const deployment = find('Deployment')[0] as unknown as { spec: { selector: unknown } };
    assert.equal(pdb?.metadata.namespace, defaultDeployOptions.namespace);
    assert.deepEqual(pdb?.spec.selector, deployment.spec.selector);
    assert.equal(pdb?.spec.maxUnavailable, 1);
  });

  it('spreads replicas over nodes and zones without ever becoming unschedulable for it', () => {
    const spread = podSpec().topologySpreadConstraints ?? [];
    assert.deepEqual(spread.map((c) => c.topologyKey).sort(), ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
    for (const c of spread) assert.equal(c.whenUnsatisfiable, 'ScheduleAnyway');
  });
});

describe('deploy manifests: the webhook port admits only the API server', () => {
  type Policy = KubeManifest & { spec: { policyTypes: string[]; ingress: { from?: { ipBlock?: { cidr: string } }[]; ports: { port: number }[] }[] } };
  const policy = (o = defaultDeployOptions) => find('NetworkPolicy', o)[0] as Policy;

  it('admits the given API server addresses, and nothing else, to port 9443', () => {
    const p = policy({ ...defaultDeployOptions, apiServerCidrs: ['10.0.0.10/32', '10.0.0.11/32'] });
    assert.deepEqual(p.spec.policyTypes, ['Ingress']);
    const webhookRules = p.spec.ingress.filter((r) => r.ports.some((x) => x.port === 9443));
    assert.equal(webhookRules.length, 1);
    assert.deepEqual(webhookRules[0]?.from, [{ ipBlock: { cidr: '10.0.0.10/32' } }, { ipBlock: { cidr: '10.0.0.11/32' } }]);
  });

  it('admits nobody to port 9443 until the addresses are set, nobody to metrics until a scraper is named; health stays open', () => {
    const p = policy();
    assert.equal(p.spec.ingress.some((r) => r.ports.some((x) => x.port === 9443)), false);
    assert.deepEqual(p.spec.ingress.flatMap((r) => r.ports.map((x) => x.port)).sort(), [8081]);
  });
});

describe('RBAC: pods/exec', () => {
  it('grants both get (WebSocket exec before 1.30) and create', () => {
    const exec = controllerPermissions.keystone.namespaced.find((r) => r.resources.includes('pods/exec'));
    assert.deepEqual([...(exec?.verbs ?? [])].sort(), ['create', 'get']);
  });
});
