import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import sinon from 'sinon';
import { asPod, sleep, timeMs, wireTime, type Wire } from '@podlife/core';

const pad = (n: number): string => String(n).padStart(2, '0');

describe('time: wire timestamps and Dates read alike', () => {
  it('reads an RFC 3339 string and a Date to the same milliseconds', () => {
    assert.equal(timeMs('2026-01-02T03:04:05Z'), timeMs(new Date('2026-01-02T03:04:05Z')));
  });
  it('reads every API-server timestamp (Z, with or without a fraction) as Date.parse does, day overflow included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }), (y, mo, d, h, mi, s) => {
          const text = `${y}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}Z`;
          assert.equal(timeMs(text), Date.parse(text), text);
          for (const fraction of ['.3', '.5', '.07', '.123', '.000001', '.999999999']) {
            const precise = text.replace('Z', `${fraction}Z`);
            assert.equal(timeMs(precise), Date.parse(precise), precise);
          }
        },
      ),
      { numRuns: 5000 },
    );
  });
  it('reads the other RFC 3339 forms, and rejects what is out of range, as Date.parse does', () => {
    for (const text of ['2026-01-02T03:04:05.1234567890Z', '2026-01-02T03:04:05.Z', '2026-01-02T03:04:05.12a4Z', '2026-01-02T03:04:05+02:00', '2026-01-02T24:00:00Z', '2026-13-02T03:04:05Z', '2026-01-02T03:60:05Z', '2026-01-02T03:04:60Z', '0099-01-02T03:04:05Z', '2026-01-02X03:04:05Z', '2026-0a-02T03:04:05Z']) {
      assert.equal(timeMs(text), Number.isNaN(Date.parse(text)) ? undefined : Date.parse(text), text);
    }
  });
  it('rejects a character that is not a digit in any field, as Date.parse does', () => {
    const text = '2026-01-02T03:04:05.123Z';
    for (let i = 0; i < text.length; i++) {
      if (!/[0-9]/.test(text.charAt(i))) continue;
      for (const c of ['/', ':', ' ', 'a']) {
        const bad = text.slice(0, i) + c + text.slice(i + 1);
        for (const form of [bad, bad.replace('.123Z', 'Z')]) {
          assert.equal(timeMs(form), Number.isNaN(Date.parse(form)) ? undefined : Date.parse(form), form);
        }
      }
    }
  });
  it('answers undefined for absent or unparsable values', () => {
    assert.equal(timeMs(undefined), undefined);
    assert.equal(timeMs('not a time'), undefined);
  });
  it('truncates written times to whole seconds, as metav1.Time marshals them', () => {
    assert.equal(wireTime(1_700_000_000_999).toISOString(), '2023-11-14T22:13:20.000Z');
  });
});

describe('sleep: a wait an abort cuts short', () => {
  it('resolves false once the time has passed', async () => {
    const start = performance.now();
    assert.equal(await sleep(20), false);
    assert.ok(performance.now() - start >= 19);
  });
  it('resolves true at once when the signal has already aborted', async () => {
    const start = performance.now();
    assert.equal(await sleep(10_000, AbortSignal.abort()), true);
    assert.ok(performance.now() - start < 1_000);
  });
  it('resolves true when the signal aborts during the wait', async () => {
    const abort = new AbortController();
    const waiting = sleep(10_000, abort.signal);
    setTimeout(() => abort.abort(), 5);
    assert.equal(await waiting, true);
  });
});

describe('sleep: waits longer than one timer holds', () => {
  const day = 86_400_000;
  let clock: sinon.SinonFakeTimers;
  beforeEach(() => {
    clock = sinon.useFakeTimers();
  });
  afterEach(() => clock.restore());

  it('does not end after 1 ms when asked for 60 days, and ends once they have passed', async () => {
    let ended = false;
    const waiting = sleep(60 * day).then((cut) => {
      ended = true;
      return cut;
    });
    await clock.tickAsync(60 * day - 1);
    assert.equal(ended, false);
    assert.equal(clock.countTimers(), 1);
    await clock.tickAsync(1);
    assert.equal(await waiting, false);
  });
  it('is still cut short by an abort during a long wait', async () => {
    const abort = new AbortController();
    const waiting = sleep(2 ** 40, abort.signal);
    await clock.tickAsync(30 * day);
    abort.abort();
    assert.equal(await waiting, true);
    assert.equal(clock.countTimers(), 0);
  });
});

describe('time: hand-written objects with string times (Wire<T>, asPod)', () => {
  it('asPod takes a pod whose times are RFC 3339 strings, and returns the same object', () => {
    const written: Wire<V1Pod> = {
      metadata: { name: 'p', creationTimestamp: '2026-01-02T03:04:05Z' },
      spec: { containers: [{ name: 'app' }] },
      status: { startTime: '2026-01-02T03:04:06Z', containerStatuses: [{ name: 'app', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, finishedAt: '2026-01-02T03:04:09Z' } } }] },
    };
    const pod = asPod(written);
    assert.equal(pod, written);
    assert.equal(timeMs(pod.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt), Date.parse('2026-01-02T03:04:09Z'));
  });
  it('Wire<T> still rejects what is neither a Date nor a string, and keeps other fields typed', () => {
    // @ts-expect-error a number is not a time
    const badTime: Wire<V1Pod> = { status: { startTime: 1_700_000_000 } };
    // @ts-expect-error restartCount stays a number
    const badCount: Wire<V1Pod> = { status: { containerStatuses: [{ name: 'a', image: 'i', imageID: '', ready: true, restartCount: 'one' }] } };
    assert.ok(badTime && badCount);
  });
});
