import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { type IssuedStop } from '../src/index.js';
import { issuedStops, stopFailedUpdate, stoppingUpdate } from '../src/records.js';

const longNames = Array.from({ length: 12 }, (_, i) => `sidecar-${String(i).padStart(2, '0')}-${'x'.repeat(44)}`);

describe('the progress record in SidecarsStopped is never truncated', () => {
  it('a StopFailed message with 12 long sidecar names reads back every issued stop', () => {
    const issued: IssuedStop[] = longNames.map((container) => ({ container, escalated: false }));
    const update = stopFailedUpdate(longNames, issued, longNames.slice(0, 3).join(', '), 'still running after its share of the grace period and a SIGKILL');
    assert.deepEqual(issuedStops(update.condition.message), issued);
  });

  it('a Stopping message with escalations reads back every issued stop, in order', () => {
    const issued: IssuedStop[] = longNames.flatMap((container) => [
      { container, escalated: false },
      { container, escalated: true },
    ]);
    assert.deepEqual(issuedStops(stoppingUpdate(longNames, issued).condition.message), issued);
  });

  it('the human part stays short however many containers are stopped', () => {
    const many = Array.from({ length: 500 }, (_, i) => `c${i}`);
    const message = stopFailedUpdate(many, [], many.join(', '), 'x'.repeat(5000)).condition.message;
    assert.ok(message.length < 1200, `${message.length} characters`);
    assert.deepEqual(issuedStops(message), []);
  });
});

describe('the progress message before any stop is issued', () => {
  it('says so instead of ending with an empty "issued: " list', () => {
    const message = stoppingUpdate(['log-shipper'], []).condition.message ?? '';
    assert.equal(message, 'stopping log-shipper; no stop issued yet');
    assert.doesNotMatch(message, /issued: $/);
    assert.deepEqual(issuedStops(message), []);
  });
  it('a stop that failed before any was issued reads the same way', () => {
    const message = stopFailedUpdate(['log-shipper'], [], 'log-shipper', 'exec refused').condition.message ?? '';
    assert.match(message, /; no stop issued yet$/);
  });
});
