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

    it('cluster-wide rate limit: rules together add no more than the cluster burst, then wait for its tokens', async () => {
      // Three rules, each within its own burst of 10; the cluster's burst of 20 stops the 21st addition.
      const pools = ['p0', 'p1', 'p2'];
      const nodes = pools.flatMap((pool) => [
        ...Array.from({ length: 10 }, (_, i) => node(`${pool}-f${i}`).labels({ pool }).condition('GPUReady', 'False', { since: T0 - 60_000 }).build()),
        ...Array.from({ length: 20 }, (_, i) => node(`${pool}-r${i}`).labels({ pool }).condition('GPUReady', 'True').build()),
      ]);
      const rules = pools.map((pool) => rule(pool).continuous().taint(`readiness.k8s.io/${pool}`).selector({ pool }).build());
      const r = rig(nodes, rules, T0);
      const rec = reconciler(r);
      const results = [];
      for (const pool of pools) for (let i = 0; i < 10; i++) results.push(await rec.reconcile(`${pool}-f${i}`));
      assert.equal(r.patch.callCount, 20);
      assert.equal(results[20]?.requeueAfterMs, 500, 'the 21st waits for the next cluster token (120 per minute)');
      assert.equal(await metricValue(r.registry, 'podlife_node_readiness_failures_total', { rule: 'p2', reason: 'ClusterRateLimited' }), 10);
      r.clock.now += 500;
      await rec.reconcile('p2-f0');
      assert.equal(r.patch.callCount, 21);
    });

    it('cluster-wide rate limit: configurable, and no rule raises it', async () => {
      const nodes = [...Array.from({ length: 5 }, (_, i) => failing(`f${i}`)), ...Array.from({ length: 20 }, (_, i) => ready(`r${i}`))];
      const r = rig(nodes, [rule().continuous().guardrails({ additionBurst: 100, additionsPerMinute: 6000 }).build()], T0, true, { additionBurst: 2, additionsPerMinute: 6 });
      const rec = reconciler(r);
      for (let i = 0; i < 5; i++) await rec.reconcile(`f${i}`);
      assert.equal(r.patch.callCount, 2);
    });

    it('a selector that in fact takes every node of the cluster is held to the cluster limit (50%), whatever maxTaintedPercent says', async () => {
      // Three of five nodes failing: 60%, within the rule's 100% but above the cluster's 50%.
      const all = [failing('a'), failing('b'), failing('c'), ready('d'), ready('e')];
      const r = rig(all, [rule().continuous().guardrails({ maxTaintedPercent: 100 }).build()], T0);
      await reconciler(r).reconcile('a');
      assert.equal(r.patch.callCount, 0);
      assert.equal(await metricValue(r.registry, 'podlife_node_readiness_failures_total', { rule: 'gpu', reason: 'CircuitBreakerOpen' }), 1);
      assert.match(r.fleet.breaker(r.fleet.ruleSet().active[0]!, 0).message, /the cluster's limit 50% \(the selector takes every node of the cluster\)/);
    });

    it('the same rule with one node of the cluster outside its selector keeps its own maxTaintedPercent', async () => {
      const r = rig([failing('a'), failing('b'), failing('c'), ready('d'), ready('e'), node('cpu').labels({ pool: 'cpu' }).build()], [rule().continuous().guardrails({ maxTaintedPercent: 100 }).build()], T0);
      await reconciler(r).reconcile('a');
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
