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
