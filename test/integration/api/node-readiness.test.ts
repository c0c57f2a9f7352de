/**
 * Node readiness against a real API server with nodes that are only API objects: no kubelet,
 * the test plays the node agents and writes taints and conditions directly.
 *
 * What a real node can show — the kubelet registering with readiness taints, its status writes
 * next to an agent's conditions, the real scheduler holding and then binding a pod — is in
 * node-readiness-node.test.ts. This suite keeps what one real node on this machine cannot give:
 * several nodes in one pool at once (the circuit breaker's share, cleanup across nodes that leave
 * a selector), the CRD's validation, and fleets of thousands of nodes (bench/).
 *
 * @releases newest — taints, conditions and the CRD are GA APIs, alike on every release.
 */
import assert from 'node:assert/strict';
import type { V1NodeCondition } from '@kubernetes/client-node';
import { ApiError, ContentType, Manager, sleep } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import {
  CleanupFinalizer,
  CompletedAnnotation,
  ManagedTaintsAnnotation,
  nodeReadinessController,
  nodeReadinessRule,
  rulePath,
} from '@podlife/node-readiness';
import type { NodeReadinessRule, NodeReadinessRuleSpec } from '@podlife/node-readiness';
import { getNode, hasTaint, installRuleCrd, nodeCondition, nodePath, setNodeConditions, sharedControlPlane, waitFor } from '@podlife/testbed';

const condition = (type: string, status: string): V1NodeCondition => nodeCondition(type, status);
const setConditions = setNodeConditions;

async function createNode(client: KubeClient, name: string, labels: Record<string, string>, taints: { key: string; effect: string }[], conditions: V1NodeCondition[]): Promise<void> {
  await client.create(nodePath(), { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: { taints } });
  if (conditions.length > 0) await setConditions(client, name, conditions);
}

async function createRule(client: KubeClient, name: string, spec: NodeReadinessRuleSpec): Promise<NodeReadinessRule> {
  return client.create<NodeReadinessRule>(rulePath(), nodeReadinessRule(name, spec));
}

describe('node-readiness against a real API server', function () {
  let client: KubeClient;
  let manager: Manager;
  const nodes: string[] = [];

  before(async function () {
    const cp = await sharedControlPlane();
    client = cp.client;
    await installRuleCrd(client);
    manager = new Manager({ client });
    nodeReadinessController(manager, { statusResyncMs: 300 });
    await manager.start();
  });

  after(async function () {
    await manager?.stop();
    for (const n of nodes) await client.delete(nodePath(n)).catch(() => undefined);
  });

  async function node(name: string, labels: Record<string, string>, taints: { key: string; effect: string }[], conditions: V1NodeCondition[] = []): Promise<void> {
    nodes.push(name);
    await createNode(client, name, labels, taints, conditions);
  }

  describe('the CRD refuses bad rules', () => {
    const good: NodeReadinessRuleSpec = {
      conditions: [{ type: 'CelReady' }],
      enforcementMode: 'continuous',
      taint: { key: 'readiness.k8s.io/cel', effect: 'NoSchedule' },
      nodeSelector: { matchLabels: { pool: 'cel' } },
    };
    const refused = async (name: string, spec: unknown, message: RegExp) => {
      await assert.rejects(client.create(rulePath(), nodeReadinessRule(name, spec as NodeReadinessRuleSpec)), (err: unknown) => {
        assert.ok(err instanceof ApiError, String(err));
        assert.equal(err.status, 422);
        assert.match(err.message, message);
        return true;
      });
    };

    it('a taint key outside readiness.k8s.io/', () => refused('bad-prefix', { ...good, taint: { key: 'example.com/x', effect: 'NoSchedule' } }, /readiness\.k8s\.io/));
    it('an unknown effect', () => refused('bad-effect', { ...good, taint: { key: 'readiness.k8s.io/x', effect: 'Evict' } }, /effect/));
    it('NoExecute without allowNoExecute', () => refused('bad-noexecute', { ...good, taint: { key: 'readiness.k8s.io/x', effect: 'NoExecute' } }, /allowNoExecute/));
    it('an empty nodeSelector', () => refused('bad-selector', { ...good, nodeSelector: {} }, /select something/));
    it('a selector every node satisfies (Exists on kubernetes.io/hostname)', () =>
      refused('bad-hostname', { ...good, nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'Exists' }] } }, /select something/));
    it('a selector every node satisfies (Exists on kubernetes.io/os and kubernetes.io/arch)', () =>
      refused(
        'bad-os-arch',
        { ...good, nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'Exists' }, { key: 'kubernetes.io/arch', operator: 'Exists' }] } },
        /select something/,
      ));
    it('a debounce over 24h, naming the field', () => refused('bad-debounce', { ...good, debounce: '1000h' }, /spec\.debounce.*at most 24h/));
    it('a maxConditionAge over 24h, naming the field', () => refused('bad-max-age', { ...good, maxConditionAge: '25h' }, /spec\.maxConditionAge.*at most 24h/));
    it('accepts 24h, and Exists on a kubelet label next to a term that narrows it', async () => {
      await createRule(client, 'cel-bounds', { ...good, debounce: '24h', maxConditionAge: '1440m', nodeSelector: { matchLabels: { pool: 'cel' }, matchExpressions: [{ key: 'kubernetes.io/os', operator: 'Exists' }] } });
      await client.delete(rulePath('cel-bounds'));
    });
    it('bootstrap-only with anyOf', () => refused('bad-anyof', { ...good, enforcementMode: 'bootstrap-only', match: 'anyOf' }, /allOf/));
    it('bootstrap-only with defaultStatus', () =>
      refused('bad-default', { ...good, enforcementMode: 'bootstrap-only', conditions: [{ type: 'A', defaultStatus: 'True' }] }, /defaultStatus/));

    it('changing the taint of an existing rule', async () => {
      await createRule(client, 'cel-immutable', good);
      await assert.rejects(
        client.patch(rulePath('cel-immutable'), { spec: { taint: { key: 'readiness.k8s.io/other', effect: 'NoSchedule' } } }, ContentType.MergePatch),
        /immutable/,
      );
      await client.delete(rulePath('cel-immutable'));
    });
  });

  it('bootstrap-only: removes the taint once the condition is True, records the pass, never re-adds', async () => {
    const key = 'readiness.k8s.io/BootTest';
    await createRule(client, 'boot', { conditions: [{ type: 'BootReady' }], enforcementMode: 'bootstrap-only', taint: { key, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'boot' } } });
    await node('boot-1', { pool: 'boot' }, [{ key, effect: 'NoSchedule' }], [condition('BootReady', 'False')]);
    await waitFor('taint adopted', async () => (await getNode(client, 'boot-1')).metadata?.annotations?.[ManagedTaintsAnnotation]);
    assert.equal(hasTaint(await getNode(client, 'boot-1'), key), true);

    await setConditions(client, 'boot-1', [condition('BootReady', 'True')]);
    const released = await waitFor('taint removed', async () => {
      const n = await getNode(client, 'boot-1');
      return !hasTaint(n, key) && n;
    });
    assert.match(released.metadata?.annotations?.[CompletedAnnotation] ?? '', /"boot":/);

    await setConditions(client, 'boot-1', [condition('BootReady', 'False')]);
    await sleep(1500);
    assert.equal(hasTaint(await getNode(client, 'boot-1'), key), false);
  });

  it('continuous: removes on True, re-taints on an explicit False after the debounce, not on Unknown', async () => {
    const key = 'readiness.k8s.io/ContTest';
    await createRule(client, 'cont', { conditions: [{ type: 'ContReady' }], enforcementMode: 'continuous', debounce: '1s', taint: { key, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'cont' } } });
    await node('cont-1', { pool: 'cont' }, [{ key, effect: 'NoSchedule' }], [condition('ContReady', 'True')]);
    await node('cont-2', { pool: 'cont' }, [], [condition('ContReady', 'True')]);
    await node('cont-3', { pool: 'cont' }, [], [condition('ContReady', 'True')]);
    await waitFor('taint removed', async () => !hasTaint(await getNode(client, 'cont-1'), key));

    await setConditions(client, 'cont-1', [condition('ContReady', 'False')]);
    await setConditions(client, 'cont-2', [condition('ContReady', 'Unknown')]);
    await waitFor('taint re-added after the debounce', async () => hasTaint(await getNode(client, 'cont-1'), key), { timeoutMs: 10_000 });
    assert.equal(hasTaint(await getNode(client, 'cont-2'), key), false);

    await setConditions(client, 'cont-1', [condition('ContReady', 'True')]);
    await waitFor('taint removed again', async () => !hasTaint(await getNode(client, 'cont-1'), key));
  });

  it('circuit breaker: a condition going False on most nodes at once taints none of them', async () => {
    const key = 'readiness.k8s.io/BreakerTest';
    const names = ['brk-1', 'brk-2', 'brk-3', 'brk-4', 'brk-5', 'brk-6'];
    await createRule(client, 'breaker', { conditions: [{ type: 'BrkReady' }], enforcementMode: 'continuous', debounce: '2s', taint: { key, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'brk' } } });
    for (const n of names) await node(n, { pool: 'brk' }, [], [condition('BrkReady', 'True')]);
    await sleep(500);
    await Promise.all(names.slice(0, 5).map((n) => setConditions(client, n, [condition('BrkReady', 'False')])));

    const rule = await waitFor('breaker open in status', async () => {
      const r = await client.get<NodeReadinessRule>(rulePath('breaker'));
      return r.status?.conditions?.some((c) => c.type === 'CircuitBreakerOpen' && c.status === 'True') && r;
    }, { timeoutMs: 15_000 });
    assert.equal(rule.status?.failingNodes, 5);
    await sleep(3000);
    for (const n of names) assert.equal(hasTaint(await getNode(client, n), key), false, `${n} must not be tainted`);
    const events = await client.get<{ items: { reason?: string; regarding?: { name?: string } }[] }>('/apis/events.k8s.io/v1/events');
    assert.ok(events.items.some((e) => e.reason === 'CircuitBreakerOpen' && e.regarding?.name === 'breaker'), 'a CircuitBreakerOpen Event names the rule');
  });

  it('rule deletion leaves no managed taint behind, including on a node relabelled out of the selector', async () => {
    const key = 'readiness.k8s.io/DelTest';
    await createRule(client, 'del', { conditions: [{ type: 'DelReady' }], enforcementMode: 'continuous', taint: { key, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'del' } } });
    await node('del-1', { pool: 'del' }, [{ key, effect: 'NoSchedule' }], [condition('DelReady', 'False')]);
    await node('del-2', { pool: 'del' }, [{ key, effect: 'NoSchedule' }], [condition('DelReady', 'False')]);
    for (const n of ['del-1', 'del-2']) await waitFor(`${n} adopted`, async () => (await getNode(client, n)).metadata?.annotations?.[ManagedTaintsAnnotation]);
    await waitFor('finalizer added', async () => (await client.get<NodeReadinessRule>(rulePath('del'))).metadata?.finalizers?.includes(CleanupFinalizer));

    await client.patch(nodePath('del-2'), { metadata: { labels: { pool: 'elsewhere' } } }, ContentType.MergePatch);
    await client.delete(rulePath('del'));
    await waitFor('rule gone', async () => client.get(rulePath('del')).then(() => false, (e: unknown) => e instanceof ApiError && e.status === 404), { timeoutMs: 15_000 });
    for (const n of ['del-1', 'del-2']) {
      const got = await getNode(client, n);
      assert.equal(hasTaint(got, key), false, `${n} still carries ${key}`);
      assert.equal(got.metadata?.annotations?.[ManagedTaintsAnnotation], undefined);
    }
  });

  it('deleting a dry-run rule strips nothing', async () => {
    const key = 'readiness.k8s.io/DryTest';
    await createRule(client, 'dry', { conditions: [{ type: 'DryReady' }], enforcementMode: 'continuous', dryRun: true, taint: { key, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'dry' } } });
    await node('dry-1', { pool: 'dry' }, [{ key, effect: 'NoSchedule' }], [condition('DryReady', 'True')]);
    await waitFor('dry run reported', async () => (await client.get<NodeReadinessRule>(rulePath('dry'))).status?.wouldUntaintNodes === 1);
    assert.equal(hasTaint(await getNode(client, 'dry-1'), key), true);
    await client.delete(rulePath('dry'));
    await waitFor('rule gone', async () => client.get(rulePath('dry')).then(() => false, () => true));
    // DryReady is True, but the taint key's suffix (DryTest) names no True condition, so zero-config keeps off it too.
    await sleep(500);
    assert.equal(hasTaint(await getNode(client, 'dry-1'), key), true);
  });

  it('after: a rule releases a node only once the rule it names has released it there', async () => {
    const first = 'readiness.k8s.io/OrderFirst';
    const second = 'readiness.k8s.io/OrderSecond';
    await createRule(client, 'order-first', { conditions: [{ type: 'FirstReady' }], enforcementMode: 'bootstrap-only', taint: { key: first, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'order' } } });
    await createRule(client, 'order-second', { conditions: [{ type: 'SecondReady' }], enforcementMode: 'bootstrap-only', after: ['order-first'], taint: { key: second, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'order' } } });
    await node('order-1', { pool: 'order' }, [{ key: first, effect: 'NoSchedule' }, { key: second, effect: 'NoSchedule' }], [condition('FirstReady', 'False'), condition('SecondReady', 'True')]);
    await waitFor('both taints adopted', async () => /OrderSecond/.test((await getNode(client, 'order-1')).metadata?.annotations?.[ManagedTaintsAnnotation] ?? ''));
    // Its own condition is True, yet the rule it waits for still holds the node.
    await sleep(1500);
    const held = await getNode(client, 'order-1');
    assert.equal(hasTaint(held, first), true);
    assert.equal(hasTaint(held, second), true, 'order-second must wait for order-first');

    await setConditions(client, 'order-1', [condition('FirstReady', 'True'), condition('SecondReady', 'True')]);
    await waitFor('both released', async () => {
      const n = await getNode(client, 'order-1');
      return !hasTaint(n, first) && !hasTaint(n, second);
    });
  });

  it('suspend: a suspended rule neither removes nor adds its taint, and says so; unset, it does both', async () => {
    const key = 'readiness.k8s.io/SuspendTest';
    const spec: NodeReadinessRuleSpec = { conditions: [{ type: 'SuspReady' }], enforcementMode: 'continuous', debounce: '1s', suspend: true, taint: { key, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: 'susp' } } };
    await createRule(client, 'susp', spec);
    await node('susp-1', { pool: 'susp' }, [{ key, effect: 'NoSchedule' }], [condition('SuspReady', 'True')]);
    await node('susp-2', { pool: 'susp' }, [], [condition('SuspReady', 'False')]);
    await node('susp-3', { pool: 'susp' }, [], [condition('SuspReady', 'True')]);
    await node('susp-4', { pool: 'susp' }, [], [condition('SuspReady', 'True')]);
    const accepted = await waitFor('the rule reported suspended', async () => {
      const r = await client.get<NodeReadinessRule>(rulePath('susp'));
      return r.status?.conditions?.find((c) => c.type === 'Accepted' && /suspended/.test(c.message ?? ''));
    });
    assert.equal(accepted.status, 'True');
    // Past the debounce: a rule in force would have released susp-1 and tainted susp-2 by now.
    await sleep(2500);
    assert.equal(hasTaint(await getNode(client, 'susp-1'), key), true, 'suspended: susp-1 keeps its taint');
    assert.equal(hasTaint(await getNode(client, 'susp-2'), key), false, 'suspended: susp-2 is not tainted');

    await client.patch(rulePath('susp'), { spec: { suspend: false } }, ContentType.MergePatch);
    await waitFor('susp-1 released and susp-2 tainted', async () => !hasTaint(await getNode(client, 'susp-1'), key) && hasTaint(await getNode(client, 'susp-2'), key), { timeoutMs: 10_000 });
  });

  it('zero-config: removes readiness.k8s.io/<Type> once <Type> is True', async () => {
    await node('zc-1', {}, [{ key: 'readiness.k8s.io/ZeroCfgReady', effect: 'NoSchedule' }], [condition('ZeroCfgReady', 'False')]);
    await sleep(300);
    assert.equal(hasTaint(await getNode(client, 'zc-1'), 'readiness.k8s.io/ZeroCfgReady'), true);
    await setConditions(client, 'zc-1', [condition('ZeroCfgReady', 'True')]);
    const n = await waitFor('zero-config taint removed', async () => {
      const got = await getNode(client, 'zc-1');
      return !hasTaint(got, 'readiness.k8s.io/ZeroCfgReady') && got;
    });
    assert.match(n.metadata?.annotations?.[CompletedAnnotation] ?? '', /ZeroCfgReady/);
  });
});
