import assert from 'node:assert/strict';
import fc from 'fast-check';
import sinon from 'sinon';
import { WorkQueue } from '@podlife/core';

/**
 * Random interleavings of the queue's operations, checked against a model of what must have
 * happened. Workers are simulated: a `get` hands a key to a new worker, `done` ends a random
 * worker. Time is fake, so delayed adds fire only when a `tick` step says so.
 */
type Step =
  | { kind: 'add'; key: string }
  | { kind: 'addRateLimited'; key: string }
  | { kind: 'forget'; key: string }
  | { kind: 'get' }
  | { kind: 'done'; pick: number }
  | { kind: 'tick'; ms: number };

const KEYS = ['a', 'b', 'c', 'd', 'e'];
const key = fc.constantFrom(...KEYS);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: key.map((k) => ({ kind: 'add' as const, key: k })) },
  { weight: 2, arbitrary: key.map((k) => ({ kind: 'addRateLimited' as const, key: k })) },
  { weight: 1, arbitrary: key.map((k) => ({ kind: 'forget' as const, key: k })) },
  { weight: 4, arbitrary: fc.constant({ kind: 'get' as const }) },
  { weight: 4, arbitrary: fc.nat(10).map((pick) => ({ kind: 'done' as const, pick })) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 50 }).map((ms) => ({ kind: 'tick' as const, ms })) },
);

const flush = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) await Promise.resolve();
};

async function run(steps: Step[], clock: sinon.SinonFakeTimers): Promise<void> {
  const q = new WorkQueue({ now: () => clock.now });
  const processing = new Set<string>();
  // Logical time of each key's last request (add or addRateLimited) and last hand-out: a key
  // requested after it was last handed out is owed a hand-out.
  let seq = 0;
  const requested = new Map<string, number>();
  const handedOut = new Map<string, number>();
  let waiting = 0;
  // A delayed add may fire after the key was already handed out for a later direct add:
  // one extra hand-out, which is allowed (a reconcile too many, never one too few).
  const delayedEver = new Set<string>();

  const receive = (k: string | undefined): void => {
    assert.ok(k !== undefined, 'get() resolved undefined before shutdown');
    assert.ok(!processing.has(k), `key ${k} handed to a second worker while still processing`);
    processing.add(k);
    handedOut.set(k, ++seq);
  };
  const owed = (): string[] => KEYS.filter((k) => (requested.get(k) ?? -1) > (handedOut.get(k) ?? -1));

  for (const s of steps) {
    switch (s.kind) {
      case 'add':
      case 'addRateLimited':
        requested.set(s.key, ++seq);
        if (s.kind === 'add') q.add(s.key);
        else {
          q.addRateLimited(s.key);
          delayedEver.add(s.key);
        }
        break;
      case 'forget':
        q.forget(s.key);
        assert.equal(q.numRequeues(s.key), 0);
        break;
      case 'get':
        // At most one parked worker, so a stream of gets cannot starve the run of progress.
        if (q.len() === 0 && waiting > 0) break;
        const parked = q.len() === 0;
        if (parked) waiting++;
        void q.get().then((k) => {
          if (parked) waiting--;
          if (q.shuttingDown) return;
          receive(k);
        });
        break;
      case 'done': {
        const inFlight = [...processing];
        const k = inFlight[s.pick % Math.max(1, inFlight.length)];
        if (k === undefined) break;
        processing.delete(k);
        q.done(k);
        break;
      }
      case 'tick':
        clock.tick(s.ms);
        break;
    }
    await flush();
    assert.ok(q.len() <= KEYS.length, `queue holds ${q.len()} entries for ${KEYS.length} distinct keys`);
  }

  // Finish every worker, let every backoff expire, then drain: each owed key must come out
  // exactly once; anything else only as the late firing of a delayed add.
  for (const k of [...processing]) {
    processing.delete(k);
    q.done(k);
  }
  clock.tick(1_000_000 * 2);
  await flush();
  for (const k of [...processing]) {
    processing.delete(k);
    q.done(k); // a parked get may have received a key during the tick
  }
  const expected = owed();
  const drained: string[] = [];
  while (q.len() > 0) {
    const k = await q.get();
    receive(k);
    drained.push(k as string);
    processing.delete(k as string);
    q.done(k as string);
  }
  assert.equal(new Set(drained).size, drained.length, `a key queued twice: ${drained.join(',')}`);
  for (const k of expected) assert.ok(drained.includes(k), `owed key ${k} lost`);
  for (const k of drained) assert.ok(expected.includes(k) || delayedEver.has(k), `key ${k} handed out unasked`);
  q.shutDown();
}

describe('WorkQueue properties (random operation sequences)', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
  });
  afterEach(() => clock.restore());

  it('never hands a key to two workers, never loses or duplicates a queued key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
        clock.reset();
        await run(steps, clock);
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Delays of any size, up to 2^40 ms (35 years), against a model of what the queue owes each key:
 * from `addAfter` until the earliest time asked for. setTimeout is wrapped, so every timer the
 * queue arms is checked as it is armed, and each firing is counted.
 */
type TimedStep =
  | { kind: 'add'; key: string }
  | { kind: 'addAfter'; key: string; delayMs: number }
  | { kind: 'get' }
  | { kind: 'done'; pick: number }
  | { kind: 'tick'; ms: number };

const MaxTimerMs = 2 ** 31 - 1;
const delay = fc.oneof(
  fc.integer({ min: -10, max: 1_000 }),
  fc.integer({ min: MaxTimerMs - 3, max: MaxTimerMs + 3 }),
  fc.integer({ min: 1, max: 2 ** 40 }),
);
const timedStep: fc.Arbitrary<TimedStep> = fc.oneof(
  { weight: 2, arbitrary: key.map((k) => ({ kind: 'add' as const, key: k })) },
  { weight: 5, arbitrary: fc.tuple(key, delay).map(([k, d]) => ({ kind: 'addAfter' as const, key: k, delayMs: d })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'get' as const }) },
  { weight: 3, arbitrary: fc.nat(10).map((pick) => ({ kind: 'done' as const, pick })) },
  { weight: 3, arbitrary: fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 0, max: 2 ** 38 })).map((ms) => ({ kind: 'tick' as const, ms })) },
);

async function runTimed(steps: TimedStep[], clock: sinon.SinonFakeTimers): Promise<void> {
  const fakeSetTimeout = globalThis.setTimeout;
  let fired = 0;
  // Every timer is checked as it is armed: it fits in a timer (a longer one would become a
  // 1 ms timer), and it is the only one (the previous was cleared or has fired).
  const arm = sinon.stub(globalThis, 'setTimeout').callsFake(((fn: () => void, ms: number) => {
    assert.ok(Number.isInteger(ms) && ms >= 0 && ms <= MaxTimerMs, `a timer armed for ${ms} ms, more than a timer holds`);
    assert.equal(clock.countTimers(), 0, 'a second timer armed while one is pending');
    return fakeSetTimeout(() => {
      fired++;
      fn();
    }, ms);
  }) as typeof setTimeout);
  const q = new WorkQueue({ now: () => clock.now });
  /** Key -> the earliest time an addAfter still pending asked for (the queue's heap, modelled). */
  const owed = new Map<string, number>();
  /** Keys that may be handed out now: added directly, or whose delay has run out. */
  const free = new Set<string>();
  const processing = new Set<string>();
  let parked = false;
  const settle = (): void => {
    for (const [k, at] of owed) {
      if (at > clock.now) continue;
      owed.delete(k);
      free.add(k);
    }
  };
  const receive = (k: string | undefined): void => {
    if (k === undefined) return;
    settle();
    assert.ok(free.has(k), `key ${k} handed out at ${clock.now}, before its delay ran out at ${owed.get(k)}`);
    free.delete(k);
    processing.add(k);
  };
  /** A failed check inside a hand-out's callback, rethrown at the end of the step. */
  let failure: unknown;
  const get = (): void => {
    parked = q.len() === 0;
    void q.get().then((k) => {
      parked = false;
      try {
        receive(k);
      } catch (err) {
        failure ??= err;
      }
    });
  };
  /** Advance the clock by `ms`, running microtasks at each timer, so a hand-out sees its own time. */
  const tick = async (ms: number): Promise<void> => {
    const pendingBefore = owed.size;
    fired = 0;
    await clock.tickAsync(ms);
    // A firing either frees a key or is one full step towards a delay longer than a timer holds.
    const bound = pendingBefore + Math.floor(ms / MaxTimerMs) + 1;
    assert.ok(fired <= bound, `${fired} timers fired in ${ms} ms for ${pendingBefore} delayed keys`);
    settle();
  };

  try {
    for (const s of steps) {
      switch (s.kind) {
        case 'add':
          free.add(s.key);
          q.add(s.key);
          break;
        case 'addAfter':
          if (s.delayMs > 0) owed.set(s.key, Math.min(owed.get(s.key) ?? Infinity, clock.now + s.delayMs));
          else free.add(s.key);
          q.addAfter(s.key, s.delayMs);
          break;
        case 'get':
          if (!(q.len() === 0 && parked)) get();
          break;
        case 'done': {
          const k = [...processing][s.pick % Math.max(1, processing.size)];
          if (k === undefined) break;
          processing.delete(k);
          q.done(k);
          break;
        }
        case 'tick':
          await tick(s.ms);
          break;
      }
      await flush();
      if (failure !== undefined) throw failure;
      assert.equal(clock.countTimers(), owed.size > 0 ? 1 : 0, `${clock.countTimers()} timers armed for ${owed.size} delayed keys`);
    }
    // Every delay runs out; then every key owed a hand-out comes out.
    for (const k of [...processing]) {
      processing.delete(k);
      q.done(k);
    }
    if (owed.size > 0) await tick(Math.max(...owed.values()) - clock.now);
    await flush();
    if (failure !== undefined) throw failure;
    for (const k of [...processing]) {
      processing.delete(k);
      q.done(k);
    }
    while (q.len() > 0) {
      const k = await q.get();
      receive(k);
      processing.delete(k as string);
      q.done(k as string);
    }
    assert.deepEqual([...free], [], 'keys owed a hand-out never came out');
    assert.equal(clock.countTimers(), 0);
  } finally {
    q.shutDown();
    arm.restore();
  }
}

describe('WorkQueue properties: delays of any size', () => {
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
  });
  afterEach(() => clock.restore());

  it('arms at most one timer, each within what a timer holds, and never hands a key out before its time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(timedStep, { maxLength: 30 }), async (steps) => {
        clock.reset();
        await runTimed(steps, clock);
      }),
      { numRuns: 100 },
    );
  });
});
