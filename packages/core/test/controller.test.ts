import assert from 'node:assert/strict';
import { describe, it, afterEach } from 'mocha';
import { Registry } from 'prom-client';
import { Controller, type ReconcileResult, type Reconciler } from '../src/controller.js';
import { Informer } from '../src/informer.js';
import { sleep } from '../src/time.js';
import { FakeTransport, obj, type TestObject } from './support/fake-transport.js';
import { until } from './support/until.js';

const controllers: Controller[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop()));
});

function controller(reconcile: Reconciler['reconcile'], opts: { concurrency?: number; registry?: Registry; baseDelayMs?: number } = {}): Controller {
  const c = new Controller({ name: 'test', reconciler: { reconcile }, baseDelayMs: opts.baseDelayMs ?? 2, ...opts });
  controllers.push(c);
  return c;
}


describe('Controller', () => {
  it('retries a failing key with growing delays and forgets its backoff once it succeeds', async () => {
    const calls: number[] = [];
    const c = controller(
      async () => {
        calls.push(performance.now());
        if (calls.length <= 3) throw new Error('not yet');
      },
      { baseDelayMs: 10 },
    );
    c.start();
    c.enqueue('ns/a');
    await until(() => calls.length === 4);
    const gaps = calls.slice(1).map((t, i) => t - calls[i]!);
    assert.ok(gaps[0]! >= 9 && gaps[1]! >= 19 && gaps[2]! >= 39, `gaps ${gaps.map((g) => g.toFixed(0)).join(', ')}`);
    await sleep(5);
    assert.equal(c.queue.numRequeues('ns/a'), 0);
  });

  it('never reconciles one key in two workers at once, and still sees adds made meanwhile', async () => {
    const inFlight = new Set<string>();
    let overlaps = 0;
    let calls = 0;
    const c = controller(
      async (key) => {
        if (inFlight.has(key)) overlaps++;
        inFlight.add(key);
        calls++;
        await sleep(10);
        inFlight.delete(key);
      },
      { concurrency: 4 },
    );
    c.start();
    c.enqueue('k');
    await until(() => calls === 1);
    for (let i = 0; i < 5; i++) c.enqueue('k');
    await until(() => calls === 2);
    await sleep(30);
    assert.equal(overlaps, 0);
    assert.equal(calls, 2, 'the adds made while processing collapse into one more pass');
  });

  it('runs at most `concurrency` reconciles at a time', async () => {
    let active = 0;
    let peak = 0;
    let finished = 0;
    const c = controller(
      async () => {
        active++;
        peak = Math.max(peak, active);
        await sleep(5);
        active--;
        finished++;
      },
      { concurrency: 3 },
    );
    c.start();
    for (let i = 0; i < 12; i++) c.enqueue(`k${i}`);
    await until(() => finished === 12);
    assert.equal(peak, 3);
  });

  it('reconciles again after requeueAfterMs', async () => {
    const calls: number[] = [];
    const c = controller(async (): Promise<ReconcileResult> => {
      calls.push(performance.now());
      return calls.length === 1 ? { requeueAfterMs: 30 } : {};
    });
    c.start();
    c.enqueue('k');
    await until(() => calls.length === 2);
    assert.ok(calls[1]! - calls[0]! >= 29);
  });

  it('starts workers only after the watched informers have synced, and enqueues their objects', async () => {
    const t = new FakeTransport();
    t.lists = [new Error('refused'), { items: [obj('a', '1')], resourceVersion: '2' }];
    const informer = new Informer<TestObject>({ path: '/things', transport: t, backoff: { minMs: 20, maxMs: 20 } });
    const seen: { key: string; synced: boolean }[] = [];
    const c = controller(async (key) => {
      seen.push({ key, synced: informer.hasSynced() });
    }).watch(informer);
    c.start();
    informer.start();
    try {
      await until(() => seen.length === 1);
      assert.deepEqual(seen, [{ key: 'ns/a', synced: true }]);
    } finally {
      await informer.stop();
    }
  });

  it('stop() aborts the signal of in-flight reconciles and waits for them', async () => {
    let aborted = false;
    let returned = false;
    const c = controller(async (_key, signal) => {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      aborted = signal.aborted;
      await sleep(5);
      returned = true;
    });
    c.start();
    c.enqueue('k');
    await sleep(5);
    await c.stop();
    assert.ok(aborted && returned);
  });

  it('counts reconciles by result under controller-runtime metric names', async () => {
    const registry = new Registry();
    let n = 0;
    const c = controller(
      async () => {
        if (++n === 1) throw new Error('boom');
      },
      { registry },
    );
    c.start();
    c.enqueue('k');
    await until(() => n === 2);
    await sleep(5);
    const text = await registry.metrics();
    assert.match(text, /controller_runtime_reconcile_total\{controller="test",result="error"\} 1/);
    assert.match(text, /controller_runtime_reconcile_total\{controller="test",result="success"\} 1/);
    assert.match(text, /controller_runtime_reconcile_errors_total\{controller="test"\} 1/);
    assert.match(text, /workqueue_retries_total\{name="test"\} 1/);
    assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="test"\} 1/);
  });
});
