import assert from 'node:assert/strict';
import { ruleChangeAffectsNodes, slimNode } from '../src/controller.js';
import { summarizeRules } from '../src/summary.js';
import { GPU, T0, gpuNode, rule } from './builders.js';
import { rig } from './fakes.js';

describe('Fleet: counting for rule status', () => {
  const fleetOf = (n: number) =>
    Array.from({ length: n }, (_, i) => (i % 3 === 0 ? gpuNode(`n${i}`).taint(GPU).build() : gpuNode(`n${i}`).condition('GPUReady', 'True').build()));

  it('counts in slices to the same numbers as one full count', async () => {
    const nodes = fleetOf(1000);
    const r = rig(nodes, [rule().build()], T0);
    const counts = await r.fleet.countInSlices(0, 64);
    assert.deepEqual(counts, summarizeRules(nodes, r.fleet.ruleSet(), T0));
    assert.equal(counts.get('gpu')?.tainted, 334);
  });

  it('lets other work run between slices', async () => {
    const r = rig(fleetOf(1000), [rule().build()], T0);
    let ranDuring = false;
    const counting = r.fleet.countInSlices(0, 100).then(() => ranDuring);
    setImmediate(() => (ranDuring = true));
    assert.equal(await counting, true);
  });

  it('callers asking while a count runs share it', async () => {
    const r = rig(fleetOf(500), [rule().build()], T0);
    const [a, b] = await Promise.all([r.fleet.countInSlices(0, 50), r.fleet.countInSlices(0, 50)]);
    assert.equal(a, b);
  });

  it('reuses a count younger than maxAgeMs and counts again after', async () => {
    const r = rig(fleetOf(10), [rule().build()], T0);
    const first = await r.fleet.countInSlices(1000);
    r.clock.now += 500;
    assert.equal(await r.fleet.countInSlices(1000), first);
    r.clock.now += 1000;
    assert.notEqual(await r.fleet.countInSlices(1000), first);
  });
});

describe('ruleChangeAffectsNodes: which rule updates wake every node', () => {
  it('not a status write', () => {
    const before = rule().build();
    const after = { ...before, metadata: { ...before.metadata, resourceVersion: '99' }, status: { matchedNodes: 5000 } };
    assert.equal(ruleChangeAffectsNodes(before, after), false);
  });

  it('a spec change', () => {
    const before = rule().build();
    const after = rule().build();
    after.spec = { ...after.spec!, nodeSelector: { matchLabels: { pool: 'cpu' } } };
    assert.equal(ruleChangeAffectsNodes(before, after), true);
  });

  it('the rule being deleted', () => {
    assert.equal(ruleChangeAffectsNodes(rule().build(), rule().beingDeleted().build()), true);
  });
});

describe('slimNode: the node as the controller caches it', () => {
  const full = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', resourceVersion: '7', labels: { pool: 'gpu' }, annotations: { a: 'b' }, managedFields: [{ manager: 'kubelet' }] },
    spec: { taints: [{ key: 'readiness.k8s.io/GPUReady', effect: 'NoSchedule' }], unschedulable: true, podCIDR: '10.0.0.0/24', providerID: 'x' },
    status: {
      conditions: [{ type: 'GPUReady', status: 'True' }],
      nodeInfo: { kubeletVersion: 'v1.37.2' },
      images: [{ names: ['busybox'], sizeBytes: 1 }],
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      capacity: { cpu: '2' },
    },
  };

  it('keeps what the gates read: metadata without managedFields, taints, unschedulable, conditions, nodeInfo', () => {
    const slim = slimNode(full as never);
    assert.deepEqual(slim, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', resourceVersion: '7', labels: { pool: 'gpu' }, annotations: { a: 'b' } },
      spec: { taints: full.spec.taints, unschedulable: true },
      status: { conditions: full.status.conditions, nodeInfo: full.status.nodeInfo },
    });
  });

  it('adds nothing a node does not carry', () => {
    assert.deepEqual(slimNode({ metadata: { name: 'bare' } }), { apiVersion: undefined, kind: undefined, metadata: { name: 'bare' }, spec: {}, status: {} });
  });
});
