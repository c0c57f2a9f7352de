import assert from 'node:assert/strict';
import { ApiError } from '@podlife/core';
import { NodeReconciler } from '../src/node-reconciler.js';
import { GPU, T0, gpuNode, node, rule } from './builders.js';
import { apiError, metricValue, rig } from './fakes.js';
import type { Rig } from './fakes.js';

const reconciler = (r: Rig, removalEvents = false) =>
  new NodeReconciler({ client: r.client, fleet: r.fleet, events: r.events, metrics: r.metrics, now: () => r.clock.now, removalEvents });

describe('NodeReconciler', () => {
  it('node joining during cache warm-up: does nothing until both caches have synced', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').build()], [rule().build()], T0, false);
    r.nodes.synced = true;
    const out = await reconciler(r).reconcile('node-1');
    assert.equal(r.patch.callCount, 0);
    assert.ok((out.requeueAfterMs ?? 0) > 0);
  });

  it('writes one JSON patch to the node and records the removal latency', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True', { since: T0 - 2000 }).build()], [rule().build()], T0);
    await reconciler(r).reconcile('node-1');
    assert.equal(r.patch.callCount, 1);
    const [path, ops, contentType] = r.patch.firstCall.args as [string, { op: string }[], string];
    assert.equal(path, '/api/v1/nodes/node-1');
    assert.equal(contentType, 'application/json-patch+json');
    assert.equal(ops[0]?.op, 'test');
    assert.equal(await metricValue(r.registry, 'podlife_node_readiness_operations_total', { rule: 'gpu', operation: 'remove' }), 1);
    assert.equal(await metricValue(r.registry, 'podlife_node_readiness_taint_removal_seconds', { rule: 'gpu' }), 2);
  });

  it('completion annotation write failing: Warning Event, failure counted, error raised for a backed-off retry', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').build()], [rule().build()], T0);
    r.patch.rejects(apiError(500, 'InternalError', 'etcd timeout'));
    await assert.rejects(reconciler(r).reconcile('node-1'), /etcd timeout/);
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(r.events.list.map((e) => [e.type, e.reason, e.on]), [['Warning', 'ReadinessWriteFailed', 'node-1']]);
    assert.match(r.events.list[0]?.note ?? '', /remove readiness.k8s.io\/gpu:NoSchedule for rule "gpu"/);
    assert.equal(await metricValue(r.registry, 'podlife_node_readiness_failures_total', { rule: 'gpu', reason: 'WriteFailed' }), 1);
    assert.equal(await metricValue(r.registry, 'podlife_node_readiness_operations_total', { rule: 'gpu', operation: 'remove' }), 0);
  });

  it('a stale resourceVersion is not an error: it waits for the newer node', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').build()], [rule().build()], T0);
    r.patch.rejects(apiError(422, 'Invalid', 'the server rejected our request due to an error in our request'));
    const out = await reconciler(r).reconcile('node-1');
    assert.ok((out.requeueAfterMs ?? 0) > 0);
    assert.deepEqual(r.events.list, []);
  });

  it('does not write again from the cached version it already wrote from; decides afresh once the cache moves on', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').rv('7').build()], [rule().build()], T0);
    const rec = reconciler(r);
    await rec.reconcile('node-1');
    assert.equal(r.patch.callCount, 1);
    // Woken again before the watch delivered our write: the lock would fail, so nothing is sent.
    assert.deepEqual(await rec.reconcile('node-1'), {});
    assert.equal(r.patch.callCount, 1);
    // Someone put the taint back on a newer version: that one is decided like any other.
    r.nodes.store.set(gpuNode().taint(GPU).condition('GPUReady', 'True').rv('9').build());
    await rec.reconcile('node-1');
    assert.equal(r.patch.callCount, 2);
  });

  it('a real validation error (422 naming fields) is a failed write, not a stale one', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').build()], [rule().build()], T0);
    r.patch.rejects(new ApiError(422, 'Invalid', 'Node "node-1" is invalid', { details: { name: 'node-1', causes: [{ field: 'spec.taints' }] } }));
    await assert.rejects(reconciler(r).reconcile('node-1'), /is invalid/);
  });

  it('a node deleted meanwhile ends the reconcile quietly', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').build()], [rule().build()], T0);
    r.patch.rejects(apiError(404, 'NotFound'));
    assert.deepEqual(await reconciler(r).reconcile('node-1'), {});
  });

  it('writes nothing for a dry-run rule', async () => {
    const r = rig([gpuNode().taint(GPU).condition('GPUReady', 'True').build()], [rule().dryRun().build()], T0);
    await reconciler(r).reconcile('node-1');
    assert.equal(r.patch.callCount, 0);
  });

  it('requeues for the end of a debounce', async () => {
    const r = rig([gpuNode().condition('GPUReady', 'False', { since: T0 - 10_000 }).build()], [rule().continuous('30s').build()], T0);
    assert.deepEqual(await reconciler(r).reconcile('node-1'), { requeueAfterMs: 20_000 });
  });

  it('posts a Warning Event on the node when it adds a taint', async () => {
    const r = rig([gpuNode().condition('GPUReady', 'False', { since: T0 - 60_000 }).build(), gpuNode('node-2').condition('GPUReady', 'True').build(), gpuNode('node-3').condition('GPUReady', 'True').build()], [rule().continuous().build()], T0);
    await reconciler(r).reconcile('node-1');
    await new Promise((res) => setImmediate(res));
    assert.deepEqual(r.events.list.map((e) => [e.type, e.reason]), [['Warning', 'ReadinessTaintAdded']]);
  });

  describe('guardrails', () => {
    const failing = (name: string) => gpuNode(name).condition('GPUReady', 'False', { since: T0 - 60_000 }).build();
    const ready = (name: string) => gpuNode(name).condition('GPUReady', 'True').build();

    it('circuit breaker: adds no taint when more than maxTaintedPercent of selected nodes would carry it', async () => {
      const r = rig([failing('a'), failing('b'), failing('c'), ready('d')], [rule().continuous().build()], T0);
      const out = await reconciler(r).reconcile('a');
      assert.equal(r.patch.callCount, 0);
      assert.ok((out.requeueAfterMs ?? 0) > 0);
      assert.equal(await metricValue(r.registry, 'podlife_node_readiness_failures_total', { rule: 'gpu', reason: 'CircuitBreakerOpen' }), 1);
    });

    it('circuit breaker: removals go on while it is open', async () => {
      const tainted = gpuNode('t').taint(GPU).condition('GPUReady', 'True').managed({ [`${GPU}:NoSchedule`]: 'gpu' }).build();
      const r = rig([failing('a'), failing('b'), failing('c'), tainted], [rule().continuous().build()], T0);
      await reconciler(r).reconcile('t');
      assert.equal(r.patch.callCount, 1);
    });

    it('rate limit: additions beyond the burst wait for tokens', async () => {
      const nodes = [...Array.from({ length: 3 }, (_, i) => failing(`f${i}`)), ...Array.from({ length: 17 }, (_, i) => ready(`r${i}`))];
      const r = rig(nodes, [rule().continuous().guardrails({ additionBurst: 2, additionsPerMinute: 60 }).build()], T0);
      const rec = reconciler(r);
      await rec.reconcile('f0');
      await rec.reconcile('f1');
      const third = await rec.reconcile('f2');
      assert.equal(r.patch.callCount, 2);
      assert.equal(third.requeueAfterMs, 1000);
      r.clock.now += 1000;
      await rec.reconcile('f2');
      assert.equal(r.patch.callCount, 3);
    });
  });

  it('relabelled out of the selector: releases the rule\'s taint with a Normal Event and tells the rule', async () => {
    const released: string[] = [];
    const r = rig([node().labels({ pool: 'cpu' }).taint(GPU).managed({ [`${GPU}:NoSchedule`]: 'gpu' }).build()], [rule().continuous().build()], T0);
    await new NodeReconciler({ client: r.client, fleet: r.fleet, events: r.events, now: () => r.clock.now, onReleased: (n) => released.push(n) }).reconcile('node-1');
    await new Promise((res) => setImmediate(res));
    assert.equal(r.patch.callCount, 1);
    assert.deepEqual(released, ['gpu']);
    assert.deepEqual(r.events.list.map((e) => e.reason), ['ReadinessTaintReleased']);
  });
});
