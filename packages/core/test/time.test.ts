import assert from 'node:assert/strict';
import { timeMs, wireTime } from '@podlife/core';

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
