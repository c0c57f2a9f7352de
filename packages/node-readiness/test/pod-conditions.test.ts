import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { evaluateNode, explainNode, podList, renderNodeExplanation, slimPod } from '../src/index.js';
import type { NodeReadinessRule, RuleCondition } from '../src/index.js';
import { resolveRule } from '../src/rule.js';
import { T0, iso, node, rule } from './builders.js';

const CNI = 'readiness.k8s.io/cni';
const cniCondition: RuleCondition = { type: 'CNIAgentReady', pod: { namespace: 'kube-system', daemonSet: 'cni-agent' } };
const cniRule = (mode: 'continuous' | 'bootstrap' = 'continuous'): NodeReadinessRule => {
  const r = rule('cni').taint(CNI).selector({ pool: 'workers' }).conditions(cniCondition);
  return (mode === 'continuous' ? r.continuous('30s') : r.bootstrap()).build();
};
const workerNode = (hb = T0 - 5_000) => node('node-1').labels({ pool: 'workers' }).condition('Ready', 'True', { since: T0 - 600_000, heartbeat: hb });

/** A pod of DaemonSet cni-agent on node-1, Ready or not. */
function agentPod(opts: { ready: boolean; since?: number; ds?: string; node?: string; waiting?: string; deleting?: boolean } = { ready: true }): V1Pod {
  return {
    metadata: {
      name: `${opts.ds ?? 'cni-agent'}-x7k2`,
      namespace: 'kube-system',
      labels: { app: 'cni-agent' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: opts.ds ?? 'cni-agent', uid: 'u', controller: true }],
      ...(opts.deleting ? { deletionTimestamp: iso(T0) as unknown as Date } : {}),
    },
    spec: { nodeName: opts.node ?? 'node-1', containers: [] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: opts.ready ? 'True' : 'False', lastTransitionTime: iso(opts.since ?? T0 - 60_000) as unknown as Date }],
      containerStatuses: [
        { name: 'agent', ready: opts.ready, restartCount: opts.waiting ? 4 : 0, image: 'i', imageID: '', state: opts.waiting ? { waiting: { reason: opts.waiting } } : { running: {} } },
      ],
    },
  };
}
const pods = (...p: V1Pod[]) => podList(p, new Set(['kube-system/cni-agent']));

describe('pod conditions: readiness from the pod of a DaemonSet on the node', () => {
  it('the DaemonSet pod Ready releases the taint, with the time it turned Ready as the latency start', () => {
    const d = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(agentPod({ ready: true, since: T0 - 2000 })) });
    assert.equal(d.changes[0]?.op, 'remove');
    assert.equal(d.changes[0]?.satisfiedSinceMs, T0 - 2000);
  });

  it('pods of a namespace the controller could not list hold the taint, naming the Role that lets it', () => {
    const unlisted = { podsOn: () => [], daemonSetExists: () => undefined, namespaceListed: (ns: string) => ns !== 'kube-system' };
    const d = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: unlisted });
    assert.deepEqual(d.changes.map((c) => c.op), ['adopt']);
    assert.equal(d.gates[0]?.holding, true);
    assert.match(d.gates[0]?.message ?? '', /pods of namespace kube-system are not listed yet \(listing them needs the Role readinessPodNamespaces grants there\)/);
  });

  it('the pod not Ready holds the taint, naming the pod and why', () => {
    const d = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(agentPod({ ready: false, waiting: 'CrashLoopBackOff' })) });
    assert.deepEqual(d.changes.map((c) => c.op), ['adopt']);
    assert.equal(d.gates[0]?.holding, true);
    assert.match(d.gates[0]?.message ?? '', /pod kube-system\/cni-agent-x7k2 is not Ready: container agent waiting: CrashLoopBackOff \(4 restarts\)/);
  });

  it('continuous: a pod failing for the debounce re-taints the node; a shorter failure does not yet', () => {
    const released = () => workerNode().build();
    const long = evaluateNode(released(), [cniRule()], T0, { pods: pods(agentPod({ ready: false, since: T0 - 31_000 })) });
    assert.deepEqual(long.changes.map((c) => `${c.op} ${c.taint.key}`), [`add ${CNI}`]);
    const short = evaluateNode(released(), [cniRule()], T0, { pods: pods(agentPod({ ready: false, since: T0 - 10_000 })) });
    assert.deepEqual(short.changes, []);
    assert.equal(short.nextEvaluationAtMs, T0 + 20_000);
  });

  it('bootstrap-only never re-taints, whatever the pod does', () => {
    const d = evaluateNode(workerNode().build(), [cniRule('bootstrap')], T0, { pods: pods(agentPod({ ready: false, since: T0 - 3_600_000 })) });
    assert.deepEqual(d.changes, []);
  });

  it('a DaemonSet that does not exist holds the taint and says so; it never re-taints', () => {
    const none = podList([], new Set());
    const held = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: none });
    assert.equal(held.gates[0]?.state, 'missing');
    assert.equal(held.gates[0]?.holding, true);
    assert.match(held.gates[0]?.message ?? '', /DaemonSet kube-system\/cni-agent does not exist/);
    assert.deepEqual(evaluateNode(workerNode().build(), [cniRule()], T0, { pods: none }).changes, []);
  });

  it('no pod of the DaemonSet on this node yet: Missing, held, said so', () => {
    const d = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(agentPod({ ready: true, node: 'node-2' })) });
    assert.equal(d.gates[0]?.state, 'missing');
    assert.match(d.gates[0]?.message ?? '', /no pod of DaemonSet kube-system\/cni-agent on this node yet/);
  });

  it("another DaemonSet's Ready pod does not count", () => {
    const d = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(agentPod({ ready: true, ds: 'log-shipper' })) });
    assert.equal(d.gates[0]?.satisfied, false);
  });

  it('a terminating Ready pod is not Ready; its replacement, once Ready, is', () => {
    const old = agentPod({ ready: true, deleting: true });
    assert.equal(evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(old) }).gates[0]?.satisfied, false);
    const fresh = { ...agentPod({ ready: true }), metadata: { ...agentPod().metadata, name: 'cni-agent-new' } };
    assert.equal(evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(old, fresh) }).gates[0]?.satisfied, true);
  });

  it('a label selector picks the pod instead of a DaemonSet', () => {
    const r = rule('cni').taint(CNI).selector({ pool: 'workers' }).conditions({ type: 'CNIAgentReady', pod: { namespace: 'kube-system', selector: { matchLabels: { app: 'cni-agent' } } } }).build();
    assert.equal(evaluateNode(workerNode().taint(CNI).build(), [r], T0, { pods: pods(agentPod({ ready: true })) }).changes[0]?.op, 'remove');
  });

  it("staleness: with maxConditionAge, a pod on a node whose kubelet went silent is Unknown, never True", () => {
    const r = rule('cni').taint(CNI).selector({ pool: 'workers' }).conditions(cniCondition).continuous().maxAge('1m').build();
    const d = evaluateNode(workerNode(T0 - 120_000).taint(CNI).build(), [r], T0, { pods: pods(agentPod({ ready: true })) });
    assert.equal(d.gates[0]?.state, 'unknown');
    assert.deepEqual(d.changes.map((c) => c.op), ['adopt']);
    assert.match(d.gates[0]?.message ?? '', /stale: the node's heartbeat is 120s old/);
  });

  it('dry run: the would-be removal is reported, nothing is changed', () => {
    const r = rule('cni').taint(CNI).selector({ pool: 'workers' }).conditions(cniCondition).continuous().dryRun().build();
    const d = evaluateNode(workerNode().taint(CNI).build(), [r], T0, { pods: pods(agentPod({ ready: true })) });
    assert.deepEqual(d.changes, []);
    assert.deepEqual(d.dryRun.map((c) => c.op), ['remove']);
  });

  it('explain node names the pod it waits for and why it is not Ready', () => {
    const e = explainNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(agentPod({ ready: false, waiting: 'ImagePullBackOff' })) });
    assert.match(renderNodeExplanation(e), /HOLDING {2}rule cni[^\n]*\n {11}holding: CNIAgentReady is False: pod kube-system\/cni-agent-x7k2 is not Ready: container agent waiting: ImagePullBackOff/);
  });

  it('property: the gate is satisfied exactly when some non-terminating pod of the DaemonSet on the node is Ready', () => {
    const podArb = fc.record({ ready: fc.boolean(), deleting: fc.boolean(), ds: fc.constantFrom('cni-agent', 'other'), node: fc.constantFrom('node-1', 'node-2') });
    fc.assert(
      fc.property(fc.array(podArb, { maxLength: 4 }), (specs) => {
        const list = specs.map((s, i) => ({ ...agentPod(s), metadata: { ...agentPod(s).metadata, name: `p${i}` } }));
        const d = evaluateNode(workerNode().taint(CNI).build(), [cniRule()], T0, { pods: pods(...list) });
        const expected = specs.some((s) => s.ready && !s.deleting && s.ds === 'cni-agent' && s.node === 'node-1');
        assert.equal(d.gates[0]?.satisfied, expected);
      }),
    );
  });
});

describe('pod condition rules: validation', () => {
  const fields = (c: RuleCondition) => resolveRule(rule().conditions(c).build()).problems?.map((p) => p.field) ?? [];
  it('needs exactly one of daemonSet or selector', () => {
    assert.deepEqual(fields({ type: 'X', pod: { namespace: 'kube-system' } }), ['spec.conditions[0].pod']);
    assert.deepEqual(fields({ type: 'X', pod: { namespace: 'kube-system', daemonSet: 'a', selector: { matchLabels: { a: 'b' } } } }), ['spec.conditions[0].pod']);
  });
  it('refuses an empty selector and a bad namespace', () => {
    assert.deepEqual(fields({ type: 'X', pod: { namespace: 'kube-system', selector: {} } }), ['spec.conditions[0].pod.selector']);
    assert.deepEqual(fields({ type: 'X', pod: { namespace: 'Kube_System', daemonSet: 'a' } }), ['spec.conditions[0].pod.namespace']);
  });
});

describe('slimPod: what the pod cache keeps', () => {
  it('keeps owner, labels, node, phase, Ready and container states; drops the spec and the rest', () => {
    const full: V1Pod = {
      ...agentPod({ ready: true }),
      spec: { nodeName: 'node-1', containers: [{ name: 'agent', image: 'registry.example/agent:1', env: [{ name: 'A', value: 'x'.repeat(1000) }] }] },
    };
    full.metadata!.annotations = { big: 'y'.repeat(5000) };
    full.status!.conditions!.push({ type: 'PodScheduled', status: 'True' });
    const slim = slimPod(full);
    assert.equal(slim.spec?.nodeName, 'node-1');
    assert.deepEqual(slim.spec?.containers, []);
    assert.equal(slim.metadata?.annotations, undefined);
    assert.deepEqual(slim.status?.conditions?.map((c) => c.type), ['Ready']);
    assert.equal(slim.metadata?.ownerReferences?.[0]?.name, 'cni-agent');
    assert.ok(JSON.stringify(slim).length < 800, String(JSON.stringify(slim).length));
  });
});
