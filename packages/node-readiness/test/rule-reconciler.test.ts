import assert from 'node:assert/strict';
import { CleanupFinalizer } from '../src/index.js';
import { RuleReconciler } from '../src/rule-reconciler.js';
import type { NodeReadinessRuleStatus } from '../src/index.js';
import { GPU, T0, gpuNode, rule } from './builders.js';
import { metricValue, rig } from './fakes.js';
import type { Rig } from './fakes.js';

const reconciler = (r: Rig, enqueued: string[] = []) =>
  new RuleReconciler({ client: r.client, fleet: r.fleet, events: r.events, metrics: r.metrics, now: () => r.clock.now, enqueueNode: (n) => enqueued.push(n) });
const settle = () => new Promise((res) => setImmediate(res));
const statusWritten = (r: Rig): NodeReadinessRuleStatus => {
  const call = r.patch.getCalls().find((c) => String(c.args[0]).endsWith('/status'));
  assert.ok(call, 'status was written');
  return (call.args[1] as { status: NodeReadinessRuleStatus }).status;
};
const owned = { [`${GPU}:NoSchedule`]: 'gpu' };

describe('RuleReconciler', () => {
  it('adds the cleanup finalizer to a new rule', async () => {
    const r = rig([], [rule().build()], T0);
    await reconciler(r).reconcile('gpu');
    const [path, ops] = r.patch.firstCall.args as [string, { op: string; path: string; value: unknown }[]];
    assert.equal(path, '/apis/readiness.podlife.dev/v1alpha1/nodereadinessrules/gpu');
    assert.deepEqual(ops[1], { op: 'add', path: '/metadata/finalizers', value: [CleanupFinalizer] });
  });

  it('publishes counts (no node lists) and an Accepted condition', async () => {
    const nodes = [gpuNode('a').taint(GPU).build(), gpuNode('b').condition('GPUReady', 'True').build(), gpuNode('c').labels({ pool: 'cpu' }).build()];
    const r = rig(nodes, [rule().finalizer(CleanupFinalizer).build()], T0);
    await reconciler(r).reconcile('gpu');
    const s = statusWritten(r);
    assert.equal(s.matchedNodes, 2);
    assert.equal(s.taintedNodes, 1);
    assert.equal(s.satisfiedNodes, 1);
    assert.equal(s.missingNodes, 1);
    assert.deepEqual(s.conditions?.map((c) => [c.type, c.status]), [['Accepted', 'True'], ['CircuitBreakerOpen', 'False']]);
  });

  it('rejects an overlapping rule with a status condition and a Warning Event', async () => {
    const r = rig([], [rule('a').createdAt(T0 - 10).finalizer(CleanupFinalizer).build(), rule('b').createdAt(T0).finalizer(CleanupFinalizer).build()], T0);
    await reconciler(r).reconcile('b');
    await settle();
    const accepted = statusWritten(r).conditions?.find((c) => c.type === 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.equal(accepted?.reason, 'Overlapping');
    assert.deepEqual(r.events.list.map((e) => [e.type, e.reason, e.on]), [['Warning', 'OverlappingRule', 'b']]);
  });

  it('reports an open circuit breaker in status, a Warning Event and a metric', async () => {
    const failing = (n: string) => gpuNode(n).condition('GPUReady', 'False', { since: T0 - 60_000 }).build();
    const r = rig([failing('a'), failing('b'), gpuNode('c').condition('GPUReady', 'True').build()], [rule().continuous().finalizer(CleanupFinalizer).build()], T0);
    await reconciler(r).reconcile('gpu');
    await settle();
    assert.equal(statusWritten(r).conditions?.find((c) => c.type === 'CircuitBreakerOpen')?.status, 'True');
    assert.deepEqual(r.events.list.map((e) => e.reason), ['CircuitBreakerOpen']);
    assert.match(r.events.list[0]?.note ?? '', /2\/3 selected nodes/);
    assert.equal(await metricValue(r.registry, 'podlife_node_readiness_circuit_breaker_open', { rule: 'gpu' }), 1);
  });

  it('dry run: reports would-be changes in status and an Event', async () => {
    const r = rig([gpuNode('a').taint(GPU).condition('GPUReady', 'True').build()], [rule().dryRun().finalizer(CleanupFinalizer).build()], T0);
    await reconciler(r).reconcile('gpu');
    await settle();
    assert.equal(statusWritten(r).wouldUntaintNodes, 1);
    assert.deepEqual(r.events.list.map((e) => [e.reason, e.note]), [['DryRun', 'dry run: would taint 0 and untaint 1 of 1 selected nodes']]);
  });

  it('publishes nodes by state per rule as a gauge', async () => {
    const r = rig([gpuNode('a').taint(GPU).condition('GPUReady', 'Unknown').build()], [rule().finalizer(CleanupFinalizer).build()], T0);
    await reconciler(r).reconcile('gpu');
    assert.equal(await metricValue(r.registry, 'podlife_node_readiness_nodes', { rule: 'gpu', state: 'unknown' }), 1);
  });

  describe('deletion', () => {
    it('keeps the finalizer while any node holds a taint the rule owns, and hands those nodes over', async () => {
      const enqueued: string[] = [];
      const relabelled = gpuNode('moved').labels({ pool: 'cpu' }).taint(GPU).managed(owned).build();
      const r = rig([relabelled, gpuNode('other').build()], [rule().beingDeleted().finalizer(CleanupFinalizer).build()], T0);
      const out = await reconciler(r, enqueued).reconcile('gpu');
      assert.equal(r.patch.callCount, 0);
      assert.deepEqual(enqueued, ['moved']);
      assert.ok((out.requeueAfterMs ?? 0) > 0);
    });

    it('drops the finalizer once no node holds its taints', async () => {
      const r = rig([gpuNode('a').taint(GPU).build()], [rule().beingDeleted().finalizer('other', CleanupFinalizer).build()], T0);
      await reconciler(r).reconcile('gpu');
      const [, ops] = r.patch.firstCall.args as [string, { op: string; path: string; value: unknown }[]];
      assert.deepEqual(ops[1], { op: 'replace', path: '/metadata/finalizers', value: ['other'] });
    });

    it('a dry-run-only rule is released at once: it owns nothing, so it strips nothing', async () => {
      const enqueued: string[] = [];
      const r = rig([gpuNode('a').taint(GPU).condition('GPUReady', 'True').build()], [rule().dryRun().beingDeleted().finalizer(CleanupFinalizer).build()], T0);
      await reconciler(r, enqueued).reconcile('gpu');
      assert.deepEqual(enqueued, []);
      assert.equal(r.patch.callCount, 1);
      assert.match(String(r.patch.firstCall.args[0]), /nodereadinessrules\/gpu$/);
    });
  });
});
