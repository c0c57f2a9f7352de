import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import { applyJsonPatch } from '@podlife/core/testing';
import { describe, it } from 'mocha';
import { evaluatePod, handleAdmissionReview, keepLifecycleFields, lifecycleMutator, planRestartInPlace, RESTART_ALL_CONTAINERS_FEATURE } from '../src/index.js';
import { candidateNodes } from '../src/node-features.js';
import { pod, T0 } from './fixtures.js';

const node = (name: string, opts: { version?: string; declares?: boolean; labels?: Record<string, string> } = {}): V1Node => ({
  metadata: { name, ...(opts.labels ? { labels: opts.labels } : {}) },
  status: {
    nodeInfo: { kubeletVersion: opts.version ?? 'v1.37.2' } as never,
    ...(opts.declares === false ? {} : { declaredFeatures: [RESTART_ALL_CONTAINERS_FEATURE, 'ExtendWebSocketsToKubelet'] }),
  },
});
const restartPod = () => pod().keystone('app').sidecar('proxy').annotate('podlife.dev/on-keystone-exit', 'RestartPod');
const rule = { action: 'RestartAllContainers', exitCodes: { operator: 'NotIn', values: [] } };

/** The pod as the API server stores it after the webhook's restart rule. */
function withRule(p: V1Pod, rules: unknown[] = [rule], policy = 'Never'): V1Pod {
  const containers = p.spec!.containers.map((c) => (c.name === 'app' ? { ...c, restartPolicy: policy, restartPolicyRules: rules as never } : c));
  return { ...p, spec: { ...p.spec!, containers } };
}
const kubeletCondition = (p: V1Pod, status: 'True' | 'False' = 'False'): V1Pod => ({
  ...p,
  status: { ...p.status, conditions: [...(p.status?.conditions ?? []), { type: 'AllContainersRestarting', status }] },
});

describe('on-keystone-exit: RestartPod at admission (KEP-5532 restart rule)', () => {
  it('adds restartPolicy and a RestartAllContainers rule on any exit to the keystone when every node declares the feature', () => {
    const plan = planRestartInPlace(restartPod().build(), { nodes: [node('a'), node('b')] });
    assert.deepEqual(plan.keystones, ['app']);
    assert.deepEqual(plan.ops, [
      { op: 'add', path: '/spec/containers/0/restartPolicy', value: 'Never' },
      { op: 'add', path: '/spec/containers/0/restartPolicyRules', value: [rule] },
    ]);
  });

  it('adds nothing, and says which node lacks it, when one candidate node does not declare it (an older kubelet)', () => {
    const plan = planRestartInPlace(restartPod().build(), { nodes: [node('new'), node('old', { version: 'v1.34.4', declares: false })] });
    assert.deepEqual(plan.ops, []);
    assert.match(plan.why ?? '', /node old may run the pod and does not declare it/);
    assert.match(plan.why ?? '', /TerminatePod/);
  });

  it('counts only the nodes the pod may run on: its nodeSelector leaves the old node out', () => {
    const p = restartPod().build();
    p.spec!.nodeSelector = { pool: 'new' };
    const nodes = [node('new', { labels: { pool: 'new' } }), node('old', { declares: false, labels: { pool: 'old' } })];
    assert.deepEqual(candidateNodes(p, nodes).map((n) => n.metadata?.name), ['new']);
    assert.deepEqual(planRestartInPlace(p, { nodes }).keystones, ['app']);
    p.spec!.nodeSelector = { pool: 'old' };
    assert.deepEqual(planRestartInPlace(p, { nodes }).ops, []);
  });

  it('no node at all means no rule', () => {
    assert.match(planRestartInPlace(restartPod().build(), { nodes: [] }).why ?? '', /no node may run the pod/);
  });

  it('leaves a keystone with its own restartPolicy alone, and is silent about one that already has the rule', () => {
    const own = restartPod().build();
    own.spec!.containers[0]!.restartPolicy = 'OnFailure';
    assert.match(planRestartInPlace(own, { nodes: [node('a')] }).why ?? '', /keystone app sets its own restartPolicy/);
    const again = planRestartInPlace(withRule(restartPod().build()), { nodes: [node('a')] });
    assert.deepEqual([again.ops, again.why], [[], undefined]);
  });

  it('does nothing for other on-keystone-exit values', () => {
    assert.deepEqual(planRestartInPlace(pod().keystone('app').annotate('podlife.dev/on-keystone-exit', 'TerminatePod').build(), { nodes: [node('a')] }), { ops: [], keystones: [] });
  });

  it('the webhook applies the rule before moving sidecars (indices of the incoming pod), records it, and warns on the fallback', () => {
    const mutate = lifecycleMutator(() => [node('a')]);
    const p = pod().sidecar('proxy').keystone('app').annotate('podlife.dev/on-keystone-exit', 'RestartPod').build();
    const review = (object: unknown) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object } });
    const out = handleAdmissionReview(review(p), { mutate });
    assert.ok(out.httpStatus === 200);
    const ops = JSON.parse(Buffer.from(out.review.response.patch ?? '', 'base64').toString()) as JsonPatchOp[];
    assert.deepEqual(ops.slice(0, 4).map((o) => `${o.op} ${o.from ?? ''} ${o.path}`), [
      'add  /spec/containers/1/restartPolicy',
      'add  /spec/containers/1/restartPolicyRules',
      'add  /spec/initContainers',
      'move /spec/containers/0 /spec/initContainers/0',
    ]);
    const after = applyJsonPatch(p, ops);
    assert.deepEqual(after.spec?.containers.map((c) => [c.name, c.restartPolicyRules?.length ?? 0]), [['app', 1]]);
    assert.deepEqual(after.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['proxy', 'Always']]);
    assert.deepEqual(ops.filter((o) => o.path.startsWith('/metadata/annotations/')).map((o) => [o.path, o.value]), [
      ['/metadata/annotations/native.podlife.dev~1app', 'restart-all-containers'],
      ['/metadata/annotations/native.podlife.dev~1proxy', 'sidecar'],
    ]);
    const fallback = handleAdmissionReview(review(p), { mutate: lifecycleMutator(() => [node('a', { declares: false })]) });
    assert.ok(fallback.httpStatus === 200);
    assert.match(fallback.review.response.warnings?.join(' ') ?? '', /RestartPod needs every node/);
  });
});

describe('on-keystone-exit: RestartPod when the keystone exits', () => {
  const opts = { nowMs: T0 + 1000 };

  it('leaves the pod to the kubelet when the keystone has the rule and the kubelet honours it (AllContainersRestarting present)', () => {
    for (const status of ['True', 'False'] as const) {
      const p = kubeletCondition(withRule(restartPod().finished('app', 3).build()), status);
      const d = evaluatePod(p, opts);
      assert.deepEqual([d.action, d.action === 'none' && d.why], ['none', 'restart-in-place']);
    }
  });

  it('the same under restartPolicy Always, where the restarted keystone shows its last termination', () => {
    const p = kubeletCondition(withRule(restartPod().restartPolicy('Always').restarted('app', 0).build(), [rule], 'Always'));
    assert.equal(evaluatePod(p, opts).action, 'none');
  });

  it('a keystone the kubelet restarted in place (its 137 RestartingAllContainers record, the exit itself never reported) is left alone, whatever the rule matches', () => {
    const only3 = { action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [3] } };
    const p = kubeletCondition(withRule(restartPod().restartPolicy('Always').restarted('app', 137).build(), [only3], 'Always'));
    p.status!.containerStatuses![0]!.lastState!.terminated!.reason = 'RestartingAllContainers';
    assert.equal(evaluatePod(p, opts).action, 'none');
    const never = kubeletCondition(withRule(restartPod().build()));
    never.status!.containerStatuses![0]!.lastState = { terminated: { exitCode: 137, reason: 'RestartingAllContainers' } };
    assert.equal(evaluatePod(never, opts).action, 'none', 'running again under restartPolicy Never: nothing ended');
  });

  it('falls back to TerminatePod when the keystone has no rule (the webhook did not add it)', () => {
    const d = evaluatePod(restartPod().finished('app', 0).build(), opts);
    assert.equal(d.action, 'delete');
    assert.ok(d.action === 'delete');
    assert.equal(d.why, 'RestartPodUnsupported');
    assert.equal(d.gracePeriodSeconds, 30);
    assert.match(d.updates[0]?.condition.message ?? '', /no RestartAllContainers restart rule.*TerminatePod/);
  });

  it('falls back when the rule is there but the kubelet ignores it (no AllContainersRestarting condition: an older node)', () => {
    const d = evaluatePod(withRule(restartPod().finished('app', 0).build()), opts);
    assert.ok(d.action === 'delete' && d.why === 'RestartPodUnsupported');
    assert.match(d.updates[0]?.condition.message ?? '', /ignores the keystone's RestartAllContainers rule/);
  });

  it('falls back when the first matching rule is not RestartAllContainers for this exit code', () => {
    const only1 = { action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [1] } };
    assert.equal(evaluatePod(kubeletCondition(withRule(restartPod().finished('app', 1).build(), [only1])), opts).action, 'none');
    assert.equal(evaluatePod(kubeletCondition(withRule(restartPod().finished('app', 0).build(), [only1])), opts).action, 'delete');
  });

  it('the cached view keeps the restart rules, so the controller decides the same on it', () => {
    const p = kubeletCondition(withRule(restartPod().finished('app', 3).build()));
    assert.deepEqual(evaluatePod(keepLifecycleFields(p), opts), evaluatePod(p, opts));
  });
});
