/**
 * @podlife/pod-conditions against a real kube-apiserver and etcd, with the harness's simulated
 * kubelet playing the node. Who computes `Ready`: the simulated kubelet, as a real kubelet does —
 * True only when every container is ready and every `spec.readinessGates` condition is True; it
 * recomputes on every pod change, so the gate controller's write is what flips it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it, before, after } from 'mocha';
import type { V1Pod } from '@kubernetes/client-node';
import { Manager, resourcePath, type KubeClient } from '@podlife/core';
import {
  PodWaitError,
  ReadinessGate,
  networkConditionsController,
  podCondition,
  setPodCondition,
  waitForPodCondition,
} from '@podlife/pod-conditions';
import { sharedControlPlane, startControlPlane, type ControlPlane } from '../support/control-plane.js';
import { SimulatedKubelet, SCRIPT_ANNOTATION, type PodScript } from '../support/kubelet.js';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const cliPath = fileURLToPath(new URL('../../packages/controller/src/cli/podlife.ts', import.meta.url));

/** Runs the `podlife` CLI from source, as a user would, against the given kubeconfig. */
function podlife(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', cliPath, ...args], { env: { ...process.env, KUBECONFIG: kubeconfig } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const gateType = 'example.com/warm';
const podPath = (namespace: string, name?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace, name });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

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

async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.create('/api/v1/namespaces', { metadata: { name } });
  return name;
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

  describe('a readiness gate', () => {
    it('holds Ready False until the gate controller sets its condition True', async () => {
      let open = false;
      const manager = new Manager({ client: cp.client });
      const gate = new ReadinessGate({ conditionType: gateType, namespace: ns, evaluate: () => ({ status: open, reason: open ? 'Warm' : 'Cold' }) });
      const controller = gate.register(manager);
      await manager.start();
      try {
        await cp.client.create(podPath(ns), podSpec('gated', { gate: true, script: { sandboxDelayMs: 100, default: { readyAfterMs: 200 } } }));
        const containersReady = await waitForPodCondition(cp.client, ns, 'gated', 'ContainersReady', { timeoutMs: 30_000 });
        assert.equal(podCondition(containersReady, 'ContainersReady')?.status, 'True');
        // The gate has been evaluated (False) and the kubelet keeps Ready False because of it.
        const held = await waitForPodCondition(cp.client, ns, 'gated', gateType, { status: 'False', timeoutMs: 30_000 });
        await sleep(500);
        const still = await cp.client.get<V1Pod>(podPath(ns, 'gated'));
        assert.equal(podCondition(still, 'Ready')?.status, 'False', 'Ready while the gate is False');
        assert.equal(podCondition(held, gateType)?.reason, 'Cold');

        open = true;
        controller.enqueue(`${ns}/gated`);
        const ready = await waitForPodCondition(cp.client, ns, 'gated', 'Ready', { timeoutMs: 30_000 });
        assert.equal(podCondition(ready, gateType)?.status, 'True');
        assert.equal(podCondition(ready, gateType)?.reason, 'Warm');
      } finally {
        await manager.stop();
      }
    });
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

  describe('network conditions', () => {
    it('publishes IPv4Ready True and IPv6Ready False for an annotated single-stack pod', async () => {
      const manager = new Manager({ client: cp.client });
      networkConditionsController(manager, { namespace: ns });
      await manager.start();
      try {
        await cp.client.create(podPath(ns), podSpec('net', { annotations: { 'podlife.dev/network-conditions': 'true' } }));
        const pod = await waitForPodCondition(cp.client, ns, 'net', 'network.podlife.dev/IPv4Ready', { timeoutMs: 30_000 });
        assert.ok(pod.status?.podIP);
        // IPv6Ready was False (NotScheduled) from the start; wait for the reason to follow the sandbox.
        let reason: string | undefined;
        for (let i = 0; i < 100 && reason !== 'NoAddressOfFamily'; i++) {
          const now = await cp.client.get<V1Pod>(podPath(ns, 'net'));
          assert.equal(podCondition(now, 'network.podlife.dev/IPv6Ready')?.status, 'False');
          reason = podCondition(now, 'network.podlife.dev/IPv6Ready')?.reason;
          if (reason !== 'NoAddressOfFamily') await sleep(100);
        }
        assert.equal(reason, 'NoAddressOfFamily');
      } finally {
        await manager.stop();
      }
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
    it('prints the timeline of a started pod in stage order, with the diagnosis', async () => {
      await cp.client.create(podPath(ns), podSpec('explained', { script: { sandboxDelayMs: 300, default: { readyAfterMs: 700 } } }));
      await waitForPodCondition(cp.client, ns, 'explained', 'Ready', { timeoutMs: 30_000 });
      const json = await podlife(cp.kubeconfigPath, ['explain', 'explained', '-n', ns, '--output', 'json']);
      const text = await podlife(cp.kubeconfigPath, ['explain', `pod/explained`, '-n', ns, '--width', '80']);
      assert.equal(json.code, 0, json.stderr);
      assert.equal(text.code, 0, text.stderr);
      const x = JSON.parse(json.stdout) as { diagnosis: { cause: string }; timeline: { stages: { key: string; state: string; endMs: number }[] } };
      assert.equal(x.diagnosis.cause, 'Ready');
      const stages = x.timeline.stages;
      assert.ok(stages.every((s) => s.state === 'reached'));
      const at = (k: string): number => stages.find((s) => s.key === k)?.endMs ?? NaN;
      assert.ok(at('scheduled') <= at('sandbox') && at('sandbox') <= at('containersReady') && at('containersReady') <= at('ready'));
      assert.deepEqual(stages.map((s) => s.endMs), [...stages.map((s) => s.endMs)].sort((a, b) => a - b));
      assert.match(text.stdout, /^sandbox & network\s+\S+\s+ *█+$/m);
      assert.match(text.stdout, /The pod is ready\.\n$/);
    });

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
