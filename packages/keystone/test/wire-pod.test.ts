import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { asPod, type Wire } from '@podlife/core';
import { describe, it } from 'mocha';
import { evaluatePod } from '../src/index.js';
import { T0, pod } from './fixtures.js';

/** Every string that reads as an RFC 3339 time, turned into a Date (what client-node's typed API hands out). */
function withDates<T>(value: T): T {
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(value)) return new Date(value) as T;
  if (Array.isArray(value)) return value.map(withDates) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withDates(v)])) as T;
  return value;
}

describe('a hand-written pod with RFC 3339 string times (asPod) decides as the same pod with Dates', () => {
  it('rule S: the main container finished at a string time, the sidecar is stopped alike', () => {
    const written: Wire<V1Pod> = pod().container('app').sidecar('proxy').finished('app', 0, T0).build();
    assert.equal(typeof written.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt, 'string', 'the fixture writes string times');
    const fromStrings = evaluatePod(asPod(written), { nowMs: T0 + 1000 });
    const fromDates = evaluatePod(withDates(written) as V1Pod, { nowMs: T0 + 1000 });
    assert.equal(fromStrings.action, 'stop');
    assert.deepEqual(fromStrings, fromDates);
  });
  it('the grace budget counts from the string time: later, the sidecar is due for escalation alike', () => {
    const written = pod().container('app').sidecar('proxy').finished('app', 0, T0).grace(5).build();
    const at = T0 + 60_000;
    const fromStrings = evaluatePod(asPod(written), { nowMs: at });
    assert.equal(fromStrings.action, 'stop');
    assert.deepEqual(fromStrings, evaluatePod(withDates(written), { nowMs: at }));
  });
});
