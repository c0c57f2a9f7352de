import assert from 'node:assert/strict';
import { evaluateNode, resolveRules } from '../src/index.js';
import { T0, node, rule } from './builders.js';

const NET = 'readiness.k8s.io/net';
const STORAGE = 'readiness.k8s.io/storage';
const net = () => rule('net').taint(NET).selector({ pool: 'w' }).conditions({ type: 'NetReady' });
const storage = () => rule('storage').taint(STORAGE).selector({ pool: 'w' }).conditions({ type: 'StorageReady' }).with({ after: ['net'] });
const worker = () => node().labels({ pool: 'w' }).taint(NET).taint(STORAGE).condition('StorageReady', 'True');

describe('rule ordering (after): a rule waits for another to release the node', () => {
  it('holds its taint while the rule it waits for still holds the node, and says which', () => {
    const d = evaluateNode(worker().condition('NetReady', 'False').build(), [net().build(), storage().build()], T0);
    assert.ok(!d.changes.some((c) => c.op === 'remove'));
    const g = d.gates.find((x) => x.gate === 'storage');
    assert.equal(g?.holding, true);
    assert.match(g?.message ?? '', /waiting \(spec\.after\): rule "net" still holds the node/);
    // Held, its taint is recorded as its own, so deleting the rule while it waits still strips it.
    assert.deepEqual(d.changes.filter((c) => c.op === 'adopt').map((c) => c.gate).sort(), ['net', 'storage']);
  });

  it('does not record a held taint it already owns a second time', () => {
    const n = worker().condition('NetReady', 'False').managed({ [`${NET}:NoSchedule`]: 'net', [`${STORAGE}:NoSchedule`]: 'storage' }).build();
    const d = evaluateNode(n, [net().build(), storage().build()], T0);
    assert.deepEqual(d.changes, []);
  });

  it('releases in the same patch as the rule it waits for, never before it', () => {
    const d = evaluateNode(worker().condition('NetReady', 'True').build(), [net().build(), storage().build()], T0);
    assert.deepEqual(d.changes.filter((c) => c.op === 'remove').map((c) => c.gate).sort(), ['net', 'storage']);
  });

  it('a chain waits all the way: c after storage after net', () => {
    const c = rule('c').taint('readiness.k8s.io/c').selector({ pool: 'w' }).conditions({ type: 'CReady' }).with({ after: ['storage'] });
    const n = worker().taint('readiness.k8s.io/c').condition('CReady', 'True').condition('NetReady', 'False').build();
    // Rule order in the set puts c first: the wait still propagates.
    const d = evaluateNode(n, [c.createdAt(T0 - 9e6).build(), net().build(), storage().build()], T0);
    assert.deepEqual(d.changes.filter((x) => x.op === 'remove'), []);
  });

  it('waits on a rule that is not in force, and says so', () => {
    const d = evaluateNode(worker().build(), [storage().build()], T0);
    assert.match(d.gates[0]?.message ?? '', /rule "net" is not in force/);
    assert.deepEqual(d.changes.filter((c) => c.op === 'remove'), []);
  });

  it('rules waiting on each other in a circle are rejected, naming the circle', () => {
    const set = resolveRules([net().with({ after: ['storage'] }).build(), storage().build()]);
    assert.deepEqual(set.active, []);
    assert.match(set.rejected.get('net')?.message ?? '', /circle \(net -> storage -> net\)/);
  });
});

describe('suspend: a rule that stops adding and removing', () => {
  it('adds nothing and removes nothing, and says it is suspended', () => {
    const r = rule('gpu').taint('readiness.k8s.io/gpu').selector({ pool: 'gpu' }).continuous('1s').with({ suspend: true }).build();
    const satisfied = evaluateNode(node().labels({ pool: 'gpu' }).taint('readiness.k8s.io/gpu').condition('GPUReady', 'True').build(), [r], T0);
    assert.deepEqual(satisfied.changes, []);
    assert.equal(satisfied.gates[0]?.holding, true);
    assert.match(satisfied.gates[0]?.message ?? '', /^suspended/);
    const failing = evaluateNode(node().labels({ pool: 'gpu' }).condition('GPUReady', 'False', { since: T0 - 60_000 }).build(), [r], T0);
    assert.deepEqual(failing.changes, []);
  });

  it('a node leaving its selector keeps the taint while suspended', () => {
    const r = rule('gpu').taint('readiness.k8s.io/gpu').selector({ pool: 'gpu' }).with({ suspend: true }).build();
    const d = evaluateNode(node().labels({ pool: 'cpu' }).taint('readiness.k8s.io/gpu').managed({ 'readiness.k8s.io/gpu:NoSchedule': 'gpu' }).build(), [r], T0);
    assert.deepEqual(d.changes, []);
  });

  it('unsuspended, the same node is released', () => {
    const r = rule('gpu').taint('readiness.k8s.io/gpu').selector({ pool: 'gpu' }).build();
    assert.equal(evaluateNode(node().labels({ pool: 'gpu' }).taint('readiness.k8s.io/gpu').condition('GPUReady', 'True').build(), [r], T0).changes[0]?.op, 'remove');
  });
});
