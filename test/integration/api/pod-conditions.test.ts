/**
 * @podlife/pod-conditions against a real kube-apiserver and etcd, with the harness's simulated
 * kubelet playing the node, for what needs no real node. What the kubelet writes (the sandbox
 * condition, readiness gates, network conditions, explain on real failures) is tested on the real
 * node in pod-conditions-node.test.ts (ADR 0111). Left here:
 * - setPodCondition racing a writer that rewrites `Ready` on every gate flip (the simulated
 *   kubelet recomputes on every pod change, so 200 rounds take seconds; not yet moved);
 * - a wait rejected by a deletion, a missing pod, and a wait across an API server restart, which
 *   involve no kubelet behaviour.
 *
 * @releases newest — API-level waits with the simulated kubelet: GA pod status, alike on every
 *   release.
 */
import assert from 'node:assert/strict';
import { describe, it, before, after } from 'mocha';
import type { V1Pod } from '@kubernetes/client-node';
import { resourcePath, sleep, type KubeClient } from '@podlife/core';
import {
  PodWaitError,
  podCondition,
  setPodCondition,
  waitForPodCondition,
} from '@podlife/pod-conditions';
import { type ControlPlane, createNamespace, podlife, type PodScript, SCRIPT_ANNOTATION, sharedControlPlane, SimulatedKubelet, startControlPlane } from '@podlife/testbed';



const gateType = 'example.com/warm';
const podPath = (namespace: string, name?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace, name });

function podSpec(name: string, opts: { gate?: boolean; script?: PodScript; annotations?: Record<string, string> } = {}): V1Pod {
  return {
    metadata: {
      name,
      annotations: { ...(opts.script ? { [SCRIPT_ANNOTATION]: JSON.stringify(opts.script) } : {}), ...opts.annotations },
    },
    spec: {
      containers: [{ name: 'app', image: 'example.com/app:1' }],
      ...(opts.gate ? { readinessGates: [{ conditionType: gateType }] } : {}),
    },
  };
}

describe('pod conditions against a real API server', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  let kubelet: SimulatedKubelet;
  let ns: string;

  before(async function () {
    this.timeout(180_000);
    cp = await sharedControlPlane();
    kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['pc-node-1'] });
    await kubelet.start();
    ns = await createNamespace(cp.client, 'podcond');
  });

  after(async () => {
    await kubelet?.stop();
    await cp?.client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  });

  describe('setPodCondition racing the kubelet', () => {
    it('loses nothing over 200 concurrent rounds', async () => {
      await cp.client.create(podPath(ns), podSpec('race', { gate: true }));
      const running = await waitForPodCondition(cp.client, ns, 'race', 'ContainersReady', { timeoutMs: 30_000 });
      const kubeletTypes = ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady'];
      let stale = running;
      for (let i = 0; i < 200; i++) {
        const status = i % 2 === 0 ? 'True' : 'False';
        // Each flip of the gate makes the kubelet rewrite Ready; a second writer works from a stale
        // copy of the pod, so both race the kubelet and each other.
        const fresh = await cp.client.get<V1Pod>(podPath(ns, 'race'));
        const [a] = await Promise.all([
          setPodCondition(cp.client, fresh, { type: gateType, status, reason: 'Round', message: `round ${i}` }),
          setPodCondition(cp.client, stale, { type: 'example.com/round', status: 'True', reason: 'Round', message: `round ${i}` }),
        ]);
        stale = a.pod;
        const pod = await cp.client.get<V1Pod>(podPath(ns, 'race'));
        assert.equal(podCondition(pod, gateType)?.message, `round ${i}`);
        assert.equal(podCondition(pod, gateType)?.status, status);
        assert.equal(podCondition(pod, 'example.com/round')?.message, `round ${i}`);
        for (const t of kubeletTypes) assert.equal(podCondition(pod, t)?.status, 'True', `${t} after round ${i}`);
        assert.ok(podCondition(pod, 'Ready'), `Ready present after round ${i}`);
      }
      // The kubelet converges on the last gate value (round 199: False).
      await waitForPodCondition(cp.client, ns, 'race', 'Ready', { status: 'False', timeoutMs: 10_000 });
    });
  });

  describe('waitForPodCondition', () => {
    it('rejects with a clear error when the pod is deleted', async () => {
      await cp.client.create(podPath(ns), podSpec('doomed', { gate: true }));
      const wait = waitForPodCondition(cp.client, ns, 'doomed', gateType, { timeoutMs: 60_000 });
      await sleep(500);
      await cp.client.delete(podPath(ns, 'doomed'));
      await assert.rejects(wait, (e: unknown) => e instanceof PodWaitError && e.reason === 'Deleted');
    });
  });

  describe('podlife explain', () => {
    it('says a missing pod is not found, with exit code 1', async () => {
      const r = await podlife(cp.kubeconfigPath, ['explain', 'nope', '-n', ns]);
      assert.equal(r.code, 1);
      assert.match(r.stdout, new RegExp(`pod ${ns}/nope not found`));
    });
  });
});

describe('waitForPodCondition across an API server restart', function () {
  this.timeout(180_000);
  let cp: ControlPlane;

  before(async function () {
    this.timeout(180_000);
    cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  it('resolves after the API server restarted while it waited', async () => {
    const ns = await createNamespace(cp.client, 'podwait');
    await cp.client.create(podPath(ns), podSpec('waiting', { gate: true }));
    const wait = waitForPodCondition(cp.client, ns, 'waiting', gateType, { timeoutMs: 120_000, backoff: { minMs: 100, maxMs: 1000 } });
    let settled = false;
    void wait.then(() => (settled = true), () => (settled = true));
    await sleep(500);
    await cp.restartApiServer();
    assert.equal(settled, false, 'the wait must not end on a dropped connection');
    const pod = await cp.client.get<V1Pod>(podPath(ns, 'waiting'));
    await setPodCondition(cp.client, pod, { type: gateType, status: 'True', reason: 'AfterRestart' });
    const done = await wait;
    assert.equal(podCondition(done, gateType)?.reason, 'AfterRestart');
  });
});
