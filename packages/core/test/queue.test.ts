import assert from 'node:assert/strict';
import sinon from 'sinon';
import { WorkQueue, type QueueMetrics } from '@podlife/core';

/** Resolves `p` if it settles within the current microtask flush, else 'pending'. */
async function settled<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((resolve) => setImmediate(() => resolve('pending')))]);
}

describe('WorkQueue: fair and stingy', () => {
  it('hands keys out in the order they were added', async () => {
    const q = new WorkQueue();
    for (const k of ['a', 'b', 'c']) q.add(k);
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ['a', 'b', 'c']);
  });
  it('queues a key added many times once, at its first position', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.len(), 2);
    assert.deepEqual([await q.get(), await q.get()], ['a', 'b']);
  });
  it('serves waiting workers in the order they asked', async () => {
    const q = new WorkQueue();
    const first = q.get();
    const second = q.get();
    q.add('a');
    q.add('b');
    assert.deepEqual(await Promise.all([first, second]), ['a', 'b']);
  });
  it('keeps a get() waiting while the queue is empty', async () => {
    const q = new WorkQueue();
    assert.equal(await settled(q.get()), 'pending');
  });
  it('handles a large queue (growth past the initial capacity) in order', async () => {
    const q = new WorkQueue<number>();
    for (let i = 0; i < 1000; i++) q.add(i);
    for (let i = 0; i < 1000; i++) assert.equal(await q.get(), i);
  });
});

describe('WorkQueue: never two workers on one key', () => {
  it('does not hand out a key that is being processed, even when re-added', async () => {
    const q = new WorkQueue();
    q.add('a');
    assert.equal(await q.get(), 'a');
    q.add('a');
    assert.equal(q.len(), 0);
    assert.equal(await settled(q.get()), 'pending');
  });
  it('re-queues a key added while processing once done() is called', async () => {
    const q = new WorkQueue();
    q.add('a');
    await q.get();
    q.add('a');
    q.add('a');
    q.done('a');
    assert.equal(q.len(), 1);
    assert.equal(await q.get(), 'a');
  });
  it('hands a key re-added while processing to a worker already waiting', async () => {
    const q = new WorkQueue();
    q.add('a');
    await q.get();
    const waiting = q.get();
    q.add('a');
    assert.equal(await settled(waiting), 'pending');
    q.done('a');
    assert.equal(await waiting, 'a');
  });
  it('does not re-queue a key after done() unless it was re-added', async () => {
    const q = new WorkQueue();
    q.add('a');
    await q.get();
    q.done('a');
    assert.equal(q.len(), 0);
  });
  it('ignores done() for a key not being processed', () => {
    const q = new WorkQueue();
    q.add('a');
    q.done('a');
    q.done('zzz');
    assert.equal(q.len(), 1);
  });
});

describe('WorkQueue: per-key exponential backoff', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
  });
  afterEach(() => clock.restore());

  function queue(): WorkQueue {
    return new WorkQueue({ now: () => clock.now });
  }

  it('doubles from 5 ms: 5, 10, 20, 40', () => {
    const q = queue();
    assert.deepEqual([0, 1, 2, 3].map((n) => q.backoffMs(n)), [5, 10, 20, 40]);
  });
  it('caps the delay at 1000 s, even for huge failure counts', () => {
    const q = queue();
    assert.equal(q.backoffMs(17), 655_360);
    assert.equal(q.backoffMs(18), 1_000_000);
    assert.equal(q.backoffMs(5000), 1_000_000);
  });
  it('honours a custom base and cap', () => {
    const q = new WorkQueue({ baseDelayMs: 100, maxDelayMs: 1000 });
    assert.deepEqual([0, 1, 3, 4].map((n) => q.backoffMs(n)), [100, 200, 800, 1000]);
  });
  it('counts rate-limited adds per key', () => {
    const q = queue();
    q.addRateLimited('a');
    q.addRateLimited('a');
    q.addRateLimited('b');
    assert.equal(q.numRequeues('a'), 2);
    assert.equal(q.numRequeues('b'), 1);
    assert.equal(q.numRequeues('c'), 0);
  });
  it('adds a rate-limited key only after its backoff has passed', () => {
    const q = queue();
    q.addRateLimited('a'); // 5 ms
    q.addRateLimited('a'); // 10 ms, but the earlier entry wins
    clock.tick(4);
    assert.equal(q.len(), 0);
    clock.tick(1);
    assert.equal(q.len(), 1);
  });
  it('waits the grown delay on the next failure', async () => {
    const q = queue();
    q.addRateLimited('a');
    clock.tick(5);
    await q.get();
    q.done('a');
    q.addRateLimited('a'); // second failure: 10 ms
    clock.tick(9);
    assert.equal(q.len(), 0);
    clock.tick(1);
    assert.equal(q.len(), 1);
  });
  it('forget resets the backoff to the base delay', () => {
    const q = queue();
    for (let i = 0; i < 5; i++) q.addRateLimited('a');
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
    clock.tick(5); // let the pending entry fire
    q.addRateLimited('a');
    assert.equal(q.numRequeues('a'), 1);
  });
  it('forget does not touch other keys', () => {
    const q = queue();
    q.addRateLimited('a');
    q.addRateLimited('b');
    q.forget('a');
    assert.equal(q.numRequeues('b'), 1);
  });
});

describe('WorkQueue: delayed adds', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
  });
  afterEach(() => clock.restore());

  it('adds the key when its delay has passed, not before', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', 100);
    clock.tick(99);
    assert.equal(q.len(), 0);
    clock.tick(1);
    assert.equal(q.len(), 1);
  });
  it('adds at once for a zero or negative delay', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    assert.equal(q.len(), 2);
  });
  it('releases delayed keys in order of readiness', async () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('middle', 200);
    clock.tick(300);
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ['early', 'middle', 'late']);
  });
  it('keeps the earlier time when a waiting key is added again', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', 1000);
    q.addAfter('a', 10);
    q.addAfter('a', 500);
    clock.tick(10);
    assert.equal(q.len(), 1);
    clock.tick(1000);
    assert.equal(q.len(), 1);
  });
  it('keeps at most one timer, however many keys wait', () => {
    const q = new WorkQueue({ now: () => clock.now });
    for (let i = 0; i < 100; i++) q.addAfter(`k${i}`, 1000 - i);
    assert.equal(clock.countTimers(), 1);
    clock.tick(1000);
    assert.equal(q.len(), 100);
    assert.equal(clock.countTimers(), 0);
  });
  it('does not keep the process alive with its timer', () => {
    clock.restore();
    const q = new WorkQueue();
    q.addAfter('a', 60_000);
    const timer = (q as unknown as { timer: NodeJS.Timeout }).timer;
    assert.equal(timer.hasRef(), false);
    q.shutDown();
    clock = sinon.useFakeTimers();
  });
});

describe('WorkQueue: delays past what one timer holds (2^31-1 ms)', () => {
  const maxTimerMs = 2 ** 31 - 1;
  const day = 86_400_000;
  let clock: sinon.SinonFakeTimers;
  let arm: sinon.SinonSpy;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
    arm = sinon.spy(globalThis, 'setTimeout');
  });
  afterEach(() => {
    arm.restore();
    clock.restore();
  });
  /** Every timer armed so far fits in a timer; checked before a long tick, which a 1 ms loop would never finish. */
  const timersFit = (): void => {
    for (const call of arm.getCalls()) assert.ok((call.args[1] as number) <= maxTimerMs, `a timer armed for ${call.args[1]} ms`);
  };

  it('does not spin a 1 ms timer for a delay of 2^40 ms', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', 2 ** 40);
    clock.tick(10_000);
    assert.equal(arm.callCount, 1, `${arm.callCount} timers armed in 10 s`);
    assert.equal(arm.firstCall.args[1], maxTimerMs);
    q.shutDown();
  });
  it('re-arms in steps of at most 2^31-1 ms and adds the key at its time, not before', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', 60 * day);
    timersFit();
    clock.tick(60 * day - 1);
    assert.equal(q.len(), 0);
    assert.equal(clock.countTimers(), 1);
    clock.tick(1);
    assert.equal(q.len(), 1);
    assert.equal(clock.countTimers(), 0);
    assert.equal(arm.callCount, 3, 'two full steps, then the rest');
  });
  it('an infinite delay never adds the key and arms no timer', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', Infinity);
    q.addAfter('b', 10);
    clock.tick(10);
    timersFit();
    clock.tick(100 * day);
    assert.equal(q.len(), 1);
    assert.equal(clock.countTimers(), 0);
  });
  it('a delay of 10^300 ms holds one timer of the longest step', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('a', 1e300);
    timersFit();
    clock.tick(100 * day);
    assert.equal(q.len(), 0);
    assert.equal(clock.countTimers(), 1);
    q.shutDown();
    assert.equal(clock.countTimers(), 0);
  });
  it('a delay behind a short one is armed within a timer once the short one fires', () => {
    const q = new WorkQueue({ now: () => clock.now });
    q.addAfter('far', 2 ** 40);
    q.addAfter('near', 50);
    clock.tick(50);
    assert.equal(q.len(), 1);
    assert.equal(clock.countTimers(), 1);
    timersFit();
    q.shutDown();
  });
});

describe('WorkQueue: shutdown', () => {
  it('resolves waiting get()s with undefined', async () => {
    const q = new WorkQueue();
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    assert.equal(q.shuttingDown, true);
  });
  it('hands out nothing more, queued keys included', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.shutDown();
    assert.equal(await q.get(), undefined);
    assert.equal(q.len(), 0);
  });
  it('ignores adds after shutdown', () => {
    const q = new WorkQueue();
    q.shutDown();
    q.add('a');
    q.addRateLimited('b');
    q.addAfter('c', 1);
    assert.equal(q.len(), 0);
  });
  it('cancels the delay timer', () => {
    const clock = sinon.useFakeTimers();
    try {
      const q = new WorkQueue({ now: () => clock.now });
      q.addAfter('a', 100);
      q.shutDown();
      assert.equal(clock.countTimers(), 0);
    } finally {
      clock.restore();
    }
  });
  it('drain waits for every key handed out to be done', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    await q.get();
    await q.get();
    const drained = q.shutDownWithDrain();
    q.done('a');
    assert.equal(await settled(drained), 'pending');
    q.done('b');
    assert.equal(await settled(drained), undefined);
  });
  it('drain does not re-queue a key re-added while it was processing', async () => {
    const q = new WorkQueue();
    q.add('a');
    await q.get();
    q.add('a');
    const drained = q.shutDownWithDrain();
    q.done('a');
    await drained;
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
  });
  it('drain resolves at once when nothing is in flight', async () => {
    const q = new WorkQueue();
    assert.equal(await settled(q.shutDownWithDrain()), undefined);
  });
});

describe('WorkQueue: metrics', () => {
  function recorder(): QueueMetrics & { log: string[] } {
    const log: string[] = [];
    return {
      log,
      adds: () => log.push('add'),
      depth: (n) => log.push(`depth ${n}`),
      queueLatency: (s) => log.push(`latency ${s}`),
      workDuration: (s) => log.push(`work ${s}`),
      retries: () => log.push('retry'),
    };
  }

  it('reports adds (not dedup’d ones), depth, queue latency and work duration in seconds', async () => {
    let now = 0;
    const metrics = recorder();
    const q = new WorkQueue({ metrics, now: () => now });
    q.add('a');
    q.add('a');
    now = 2000;
    await q.get();
    now = 2500;
    q.done('a');
    assert.deepEqual(metrics.log, ['add', 'depth 1', 'latency 2', 'depth 0', 'work 0.5']);
  });
  it('counts retries', () => {
    const metrics = recorder();
    const q = new WorkQueue({ metrics });
    q.addRateLimited('a');
    q.shutDown();
    assert.equal(metrics.log.filter((l) => l === 'retry').length, 1);
  });
});
