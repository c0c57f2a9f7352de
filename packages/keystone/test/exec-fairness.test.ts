import assert from 'node:assert/strict';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { Controller, type KubeClient } from '@podlife/core';
import { describe, it } from 'mocha';
import sinon from 'sinon';
import { evaluatePod, stopByExec, type ExecResult, type PodApi, type PodExecApi, type PodRef, type StopDecision } from '../src/index.js';
import { KeystoneReconciler } from '../src/reconciler.js';
import { DEFERRED_RETRY_MS } from '../src/schedule.js';
import { guardExec } from '../src/strategies/api.js';
import { ExecSlots, limitExecPerNamespace } from '../src/strategies/exec-slots.js';
import { STOP_BUDGET_MS } from '../src/strategies/exec.js';
import { pod, T0 } from './fixtures.js';

const ok: ExecResult = { exitCode: 0, stdout: '', stderr: '' };
const quit = { kind: 'http', port: 8080, path: '/quit' } as const;

/** A transport whose commands hang like a `curl` that never returns: until their signal aborts (or never, `deaf`). */
function hanging(opts: { deaf?: boolean } = {}): PodExecApi & { calls: number; inFlight: number; maxInFlight: number } {
  const t = {
    calls: 0,
    inFlight: 0,
    maxInFlight: 0,
    exec(_pod: PodRef, _container: string, _command: readonly string[], signal?: AbortSignal): Promise<ExecResult> {
      t.calls++;
      t.inFlight++;
      t.maxInFlight = Math.max(t.maxInFlight, t.inFlight);
      return new Promise((resolve) => {
        if (opts.deaf) return;
        const end = () => {
          t.inFlight--;
          resolve({ exitCode: undefined, stdout: '', stderr: '', error: 'aborted' });
        };
        if (signal?.aborted) end();
        else signal?.addEventListener('abort', end, { once: true });
      });
    },
  };
  return t;
}

describe('an http: stop has one budget, whatever it tries', () => {
  it('a curl, wget and script that all hang take the budget once, not once each', async () => {
    const clock = sinon.useFakeTimers();
    try {
      const api = hanging();
      let settled = false;
      const attempt = stopByExec(api, { namespace: 'a', name: 'p' }, 'proxy', quit).then((r) => ((settled = true), r));
      await clock.tickAsync(STOP_BUDGET_MS);
      assert.equal(settled, true, 'the stop returned when its budget ran out');
      const r = await attempt;
      assert.equal(r.ok, false);
      assert.match(r.error ?? '', /no exit status within the stop's budget of 10000 ms/);
      assert.equal(api.calls, 1, 'nothing else tried once the budget is spent');
    } finally {
      clock.restore();
    }
  });

  it('holds even against a transport that ignores its signal', async () => {
    const clock = sinon.useFakeTimers();
    try {
      let settled = false;
      const attempt = stopByExec(hanging({ deaf: true }), { namespace: 'a', name: 'p' }, 'proxy', quit, {}, undefined, { budgetMs: 500 }).then(() => (settled = true));
      await clock.tickAsync(500);
      assert.equal(settled, true);
      await attempt;
    } finally {
      clock.restore();
    }
  });

  it('refuses a budget no timer can hold, naming it, with nothing run', async () => {
    for (const budgetMs of [0, -1, Number.NaN, 2 ** 31]) {
      const api = hanging();
      const r = await stopByExec(api, { namespace: 'a', name: 'p' }, 'proxy', quit, {}, undefined, { budgetMs });
      assert.match(r.error ?? '', /the stop's budget must be 1 to 2147483647 ms, got/);
      assert.equal(api.calls, 0);
    }
  });

  it("ends with the reconcile's own signal", async () => {
    const abort = new AbortController();
    const attempt = stopByExec(hanging(), { namespace: 'a', name: 'p' }, 'proxy', quit, {}, abort.signal);
    abort.abort();
    const r = await attempt;
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /aborted/);
  });
});

describe('exec slots: no namespace holds more than its share', () => {
  it('refuses a bad share, naming it', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) assert.throws(() => new ExecSlots(bad), /exec slots per namespace must be a whole number of at least 1, got/);
  });

  it('a call over the share returns at once, deferred, with nothing run; other namespaces are not affected', async () => {
    const transport = hanging();
    const api = limitExecPerNamespace(transport, new ExecSlots(2));
    const abort = new AbortController();
    const a = { namespace: 'tenant-a', name: 'p' };
    const held = [api.exec(a, 'proxy', ['curl'], abort.signal), api.exec(a, 'proxy', ['curl'], abort.signal)];
    const over = await api.exec(a, 'proxy', ['curl'], abort.signal);
    assert.equal(over.deferred, true);
    assert.match(over.error ?? '', /namespace tenant-a already has 2 commands in flight/);
    assert.equal(transport.calls, 2);
    void api.exec({ namespace: 'tenant-b', name: 'q' }, 'proxy', ['curl'], abort.signal);
    assert.equal(transport.calls, 3, "another namespace's command runs");
    abort.abort();
    await Promise.all(held);
  });

  it('gives a slot back however the call ends', async () => {
    const slots = new ExecSlots(1);
    const failing: PodExecApi = { exec: async () => Promise.reject(new Error('transport broke')) };
    await assert.rejects(limitExecPerNamespace(failing, slots).exec({ namespace: 'a', name: 'p' }, 'c', ['x']));
    assert.equal(slots.held('a'), 0);
    await limitExecPerNamespace({ exec: async () => ok }, slots).exec({ namespace: 'a', name: 'p' }, 'c', ['x']);
    assert.equal(slots.held('a'), 0);
  });

  it('a deferred command ends the stop at once: no other command is tried', async () => {
    const slots = new ExecSlots(1);
    const release = slots.tryAcquire('a');
    const transport = { exec: sinon.stub().resolves(ok) };
    const r = await stopByExec(limitExecPerNamespace(transport, slots), { namespace: 'a', name: 'p' }, 'proxy', quit);
    assert.deepEqual([r.ok, r.deferred, transport.exec.callCount], [false, true, 0]);
    release?.();
  });
});

describe("a tenant whose stops hang does not delay another namespace's stop", () => {
  /** A pod whose main container finished and whose sidecar `proxy` is stopped by `http:8080/quit`. */
  function finishedPod(namespace: string, name: string): V1Pod {
    const at = new Date(Date.now() - 1000);
    return {
      metadata: { namespace, name, uid: `uid-${namespace}-${name}`, resourceVersion: '1', annotations: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'http:8080/quit' } },
      spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 30, containers: [{ name: 'app' }, { name: 'proxy' }] },
      status: {
        phase: 'Running',
        conditions: [],
        containerStatuses: [
          { name: 'app', ready: false, restartCount: 0, image: '', imageID: '', state: { terminated: { exitCode: 0, finishedAt: at } } },
          { name: 'proxy', ready: true, restartCount: 0, image: '', imageID: '', state: { running: { startedAt: at } } },
        ],
      },
    };
  }

  /** 64 workers, as the controller runs by default, over pods whose stops go through `exec`. */
  function keystone(exec: PodExecApi, pods: Map<string, V1Pod>): Controller {
    const client = {
      async patch<T>(path: string, body: { status: { conditions: V1PodCondition[] } }): Promise<T> {
        const [, , , , namespace, , name] = path.split('/');
        const pod = structuredClone(pods.get(`${namespace}/${name}`)!);
        pod.status!.conditions = body.status.conditions;
        return pod as T;
      },
    } as unknown as KubeClient;
    const noWrites: PodApi = { addEphemeralContainer: async () => undefined, deletePod: async () => 'deleted', patchStatus: async () => undefined };
    const reconciler = new KeystoneReconciler({ client, getPod: (key) => pods.get(key), pods: noWrites, exec });
    return new Controller({ name: 'keystone', reconciler, concurrency: 64 });
  }

  /** ms from enqueueing `key` until its stop reaches the transport. */
  async function latency(controller: Controller, reached: Map<string, number>, key: string): Promise<number> {
    const from = performance.now();
    controller.enqueue(key);
    for (let waited = 0; !reached.has(key) && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    return (reached.get(key) ?? Number.POSITIVE_INFINITY) - from;
  }

  it('64 pods of tenant-a with a hanging curl: tenant-b is stopped as fast as on an idle controller', async () => {
    const pods = new Map<string, V1Pod>();
    for (let i = 0; i < 64; i++) pods.set(`tenant-a/job-${i}`, finishedPod('tenant-a', `job-${i}`));
    pods.set('tenant-b/idle', finishedPod('tenant-b', 'idle'));
    pods.set('tenant-b/busy', finishedPod('tenant-b', 'busy'));
    const hang = hanging();
    const reached = new Map<string, number>();
    const transport: PodExecApi = {
      exec(pod, container, command, signal) {
        if (pod.namespace === 'tenant-a') return hang.exec(pod, container, command, signal);
        reached.set(`${pod.namespace}/${pod.name}`, performance.now());
        return Promise.resolve(ok);
      },
    };
    const controller = keystone(guardExec(transport, { readUid: async (p) => p.uid }), pods);
    controller.start();
    try {
      const idle = await latency(controller, reached, 'tenant-b/idle');
      for (let i = 0; i < 64; i++) controller.enqueue(`tenant-a/job-${i}`);
      for (let waited = 0; hang.inFlight < 16 && waited < 2000; waited += 5) await new Promise((r) => setTimeout(r, 5));
      const busy = await latency(controller, reached, 'tenant-b/busy');
      assert.ok(busy < idle + 100, `tenant-b's stop took ${busy.toFixed(1)} ms with tenant-a hanging, against ${idle.toFixed(1)} ms on an idle controller`);
      assert.equal(hang.maxInFlight, 16, "tenant-a held at most its share of exec slots (16 of the 64 workers)");
    } finally {
      await controller.stop();
    }
  });
});

describe('a stop put off for want of an exec slot is retried, not failed', () => {
  /**
   * A reconciler whose status writes land in `pods` (the cache sees them at once, as if the watch
   * delivered them) and whose exec goes through `slots`; what ran and what was announced is kept.
   */
  function deferring(slots: ExecSlots, clock: { now: number }) {
    const pods = new Map<string, V1Pod>();
    const seen = { execs: 0, patches: 0, events: [] as string[] };
    const client = {
      async patch<T>(path: string, body: { status: { conditions: V1PodCondition[] } }): Promise<T> {
        seen.patches++;
        const [, , , , namespace, , name] = path.split('/');
        const current = structuredClone(pods.get(`${namespace}/${name}`)!);
        const conditions = (current.status!.conditions ?? []).filter((c) => !body.status.conditions.some((n) => n.type === c.type));
        current.status!.conditions = [...conditions, ...body.status.conditions];
        pods.set(`${namespace}/${name}`, current);
        return structuredClone(current) as T;
      },
    } as unknown as KubeClient;
    const transport: PodExecApi = {
      exec: async () => {
        seen.execs++;
        return ok;
      },
    };
    const noWrites: PodApi = { addEphemeralContainer: async () => undefined, deletePod: async () => 'deleted', patchStatus: async () => undefined };
    const reconciler = new KeystoneReconciler({
      client,
      getPod: (key) => pods.get(key),
      pods: noWrites,
      exec: limitExecPerNamespace(transport, slots),
      events: { event: async (_o: unknown, _type: string, reason: string) => void seen.events.push(reason) },
      now: () => clock.now,
      config: { minStageMs: 2000 },
    });
    return { reconciler, pods, seen };
  }

  const record = (p: V1Pod | undefined) => p?.status?.conditions?.find((c) => c.type === 'podlife.dev/SidecarsStopped')?.message ?? '';
  const signal = () => new AbortController().signal;

  it('with the slots full: no StopFailed, no issued time; the next passes wait a second, then issue it once a slot frees', async () => {
    const slots = new ExecSlots(1);
    const held = slots.tryAcquire('default');
    const clock = { now: T0 + 2000 };
    const { reconciler, pods, seen } = deferring(slots, clock);
    const key = 'default/job-abc';
    pods.set(key, pod().container('app').sidecar('proxy').finished('app', 0, T0 + 1000).build());

    await reconciler.reconcile(key, signal());
    assert.equal(seen.execs, 0, 'nothing ran');
    assert.deepEqual(seen.events, [], 'no StopFailed: the stop did not fail, it is still to be issued');
    assert.match(record(pods.get(key)), new RegExp(`issued: proxy!deferred@${T0 + 2000}$`));
    const decided = evaluatePod(pods.get(key)!, { nowMs: T0 + 2010, minStageMs: 2000 }) as StopDecision;
    assert.deepEqual(
      decided.steps.map((s) => [s.container, s.issued, s.issuedAtMs]),
      [['proxy', false, undefined]],
      'the record gives the stop no issued time',
    );

    // The record's write wakes the pod: that pass decides when to try again.
    clock.now = T0 + 2010;
    assert.deepEqual(await reconciler.reconcile(key, signal()), { requeueAfterMs: DEFERRED_RETRY_MS - 10 });
    assert.equal(seen.patches, 1);

    // Still no slot a second later: put off again, nothing written (the first deferral stays), looked at again in a second.
    clock.now = T0 + 3000;
    assert.deepEqual(await reconciler.reconcile(key, signal()), { requeueAfterMs: DEFERRED_RETRY_MS });
    assert.deepEqual([seen.execs, seen.patches, seen.events], [0, 1, []]);

    held?.();
    clock.now = T0 + 4000;
    // A retry looks again in a second in case it is put off once more; issued, its record's write wakes the pod.
    assert.deepEqual(await reconciler.reconcile(key, signal()), { requeueAfterMs: DEFERRED_RETRY_MS });
    assert.equal(seen.execs, 1, 'issued');
    assert.deepEqual(seen.events, ['StoppingContainer']);
    assert.match(record(pods.get(key)), new RegExp(`issued: proxy@${T0 + 4000}$`), 'the deferral is dropped once the stop is issued');
    // Issued at T0+4000: its share runs to the end of the budget (T0+31000), counted from its delivery.
    clock.now = T0 + 4010;
    assert.deepEqual(await reconciler.reconcile(key, signal()), { requeueAfterMs: 26_990 });
    assert.equal(seen.execs, 1, 'issued once');
  });

  it('a stop put off until late in the budget still gets the minimum share from its delivery, never an early escalation', () => {
    const deferred = `stopping proxy; issued: proxy!deferred@${T0 + 2000}`;
    const p = pod().container('app').sidecar('proxy').finished('app', 0, T0 + 1000).condition('podlife.dev/SidecarsStopped', 'False', deferred, T0 + 2000).build();
    const late = evaluatePod(p, { nowMs: T0 + 31_500, minStageMs: 2000 }) as StopDecision;
    assert.equal(late.escalation, undefined, 'a stop never issued is never escalated');
    assert.deepEqual(late.issue.map((s) => s.container), ['proxy']);
    p.status!.conditions![0]!.message = `stopping proxy; issued: proxy@${T0 + 31_500}`;
    const after = evaluatePod(p, { nowMs: T0 + 32_000, minStageMs: 2000 }) as StopDecision;
    assert.deepEqual([after.escalation, after.requeueAfterMs], [undefined, 1500], 'its share: at least minStageMs from the delivery');
  });
});
