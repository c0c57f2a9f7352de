import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { asPod, sleep, timeMs, wireTime, type Wire } from '@podlife/core';

describe('time: wire timestamps and Dates read alike', () => {
  it('reads an RFC 3339 string and a Date to the same milliseconds', () => {
    assert.equal(timeMs('2026-01-02T03:04:05Z'), timeMs(new Date('2026-01-02T03:04:05Z')));
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
