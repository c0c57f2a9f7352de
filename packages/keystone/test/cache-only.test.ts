import assert from 'node:assert/strict';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import type { KubeClient, KubeObject } from '@podlife/core';
import { describe, it } from 'mocha';
import type { ExecResult, PodApi, PodExecApi } from '../src/index.js';
import { KeystoneReconciler } from '../src/reconciler.js';
import { NO_HANDLER_EXIT } from '../src/stop-containers.js';
import { pod, T0, withConditionsPatch } from './fixtures.js';

/**
 * A reconciler over a pod store that plays the API server: its status writes land in `server`,
 * and its cache (`cache`) shows them only when a test says the watch delivered them.
 */
function controller(server: Map<string, V1Pod>, cache: Map<string, V1Pod>, clock: { now: number }, execResult: ExecResult) {
  const seen = { execs: [] as string[], deletes: [] as number[], phases: [] as string[], events: [] as string[], patches: 0 };
  const bump = (p: V1Pod): V1Pod => {
    p.metadata!.resourceVersion = String(Number(p.metadata!.resourceVersion ?? '0') + 1);
    server.set(`${p.metadata!.namespace}/${p.metadata!.name}`, p);
    return structuredClone(p);
  };
  const client = {
    async patch<T>(path: string, body: { status: { conditions: V1PodCondition[] } }): Promise<T> {
      seen.patches++;
      const [, , , , namespace, , name] = path.split('/');
      const current = withConditionsPatch(server.get(`${namespace}/${name}`)!, body.status.conditions);
      return bump(current) as T;
    },
  } as unknown as KubeClient;
  const pods: PodApi = {
    async addEphemeralContainer() {},
    async deletePod(_ref, grace) {
      seen.deletes.push(grace);
      return 'deleted';
    },
    async patchStatus(ref, ops) {
      const current = structuredClone(server.get(`${ref.namespace}/${ref.name}`)!);
      for (const op of ops) if (op.op === 'replace' || op.op === 'add') seen.phases.push((current.status!.phase = op.value as string));
      return bump(current);
    },
  };
  const exec: PodExecApi = {
    async exec(_ref, container) {
      seen.execs.push(container);
      return execResult;
    },
  };
  const reconciler = new KeystoneReconciler({
    client,
    getPod: (key) => cache.get(key),
    pods,
    exec,
    events: { event: async (_o: KubeObject, _type: string, reason: string) => void seen.events.push(reason) },
    now: () => clock.now,
    config: { minStageMs: 2000 },
  });
  return { reconciler, seen };
}

/**
 * Two controllers at the same time on the same server state: one that acted and keeps the pod its
 * write returned while its cache lags, and one started afresh whose cache alone shows that state.
 */
async function afterFirstPass(p: V1Pod, execResult: ExecResult) {
  p.metadata!.resourceVersion = '10';
  const key = `${p.metadata!.namespace}/${p.metadata!.name}`;
  const clock = { now: T0 + 2000 };
  const server = new Map([[key, structuredClone(p)]]);
  const lagging = new Map([[key, structuredClone(p)]]);
  const first = controller(server, lagging, clock, execResult);
  const firstPass = await first.reconciler.reconcile(key, new AbortController().signal);
  const caughtUp = new Map([[key, structuredClone(server.get(key)!)]]);
  const restarted = controller(server, caughtUp, clock, execResult);
  return { key, clock, first, restarted, firstPass };
}

const signal = () => new AbortController().signal;

describe('keystone reconciler: the cache alone decides the same (what it keeps beside the cache changes nothing)', () => {
  it('a stop in progress: the controller that acted and a restarted one neither repeat the stop nor differ on when to look again', async () => {
    const { key, clock, first, restarted, firstPass } = await afterFirstPass(pod().container('app').sidecar('proxy').finished('app', 0, T0 + 1000).build(), { exitCode: 0, stdout: '', stderr: '' });
    assert.deepEqual(first.seen.execs, ['proxy']);
    assert.deepEqual(firstPass, { requeueAfterMs: 29_000 });
    clock.now = T0 + 10_000;
    const a = await first.reconciler.reconcile(key, signal());
    const b = await restarted.reconciler.reconcile(key, signal());
    assert.deepEqual(a, { requeueAfterMs: 21_000 });
    assert.deepEqual(b, a);
    assert.deepEqual([first.seen.execs, restarted.seen.execs], [['proxy'], []], 'the stop the record lists is not sent again');
    assert.equal(restarted.seen.patches, 0);

    // At the end of the share both escalate the same way: the result recorded, then the pod deleted.
    clock.now = T0 + 31_000;
    await first.reconciler.reconcile(key, signal());
    await restarted.reconciler.reconcile(key, signal());
    assert.deepEqual(first.seen.phases, ['Succeeded']);
    assert.deepEqual(restarted.seen.phases, first.seen.phases);
    assert.deepEqual(restarted.seen.deletes, first.seen.deletes);
    assert.deepEqual(first.seen.deletes, [1]);
  });

  it('a PID 1 without a handler: both read the finding back from the record and escalate the same way', async () => {
    const noHandler: ExecResult = { exitCode: NO_HANDLER_EXIT, stdout: 'PID 1 has no handler for SIGTERM', stderr: '' };
    const { key, clock, first, restarted } = await afterFirstPass(pod().container('app').sidecar('proxy').finished('app', 0, T0 + 1000).build(), noHandler);
    assert.deepEqual([first.seen.deletes, first.seen.phases], [[], []], 'the pass that sent the stop decides no escalation');
    clock.now = T0 + 2100;
    await first.reconciler.reconcile(key, signal());
    await restarted.reconciler.reconcile(key, signal());
    for (const c of [first, restarted]) {
      assert.deepEqual(c.seen.phases, ['Succeeded']);
      assert.deepEqual(c.seen.deletes, [29]);
    }
    assert.deepEqual(first.seen.execs, ['proxy']);
    assert.deepEqual(restarted.seen.execs, []);
    assert.deepEqual(restarted.seen.events.filter((r) => r === 'StopFailed'), ['StopFailed'], 'the Warning that says why');
  });
});
