import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { evaluatePod, readLifecycle } from '../src/index.js';
import { pod, T0 } from './fixtures.js';

/** `key=value` (or `key=(default)`) for each problem of an invalid reading; [] when valid. */
function problems(p: ReturnType<typeof pod>): string[] {
  const reading = readLifecycle(p.build());
  return reading.kind === 'invalid' ? reading.errors.map((e) => `${e.key}=${e.value ?? '(default)'}`) : [];
}

describe('signal stops where PID 1 is not the container: hostPID', () => {
  it('refuses a signal stop, the default one included, for every container a rule may stop', () => {
    assert.deepEqual(problems(pod().hostPID().container('app').sidecar('proxy', 'signal:INT').sidecar('log')), [
      'stop.podlife.dev/proxy=signal:INT',
      'stop.podlife.dev/log=(default)',
    ]);
    // Rule K stops every container but the keystone.
    assert.deepEqual(problems(pod().hostPID().keystone('app').container('worker')), ['stop.podlife.dev/worker=(default)']);
  });

  it("says why: PID 1 is the node's own init", () => {
    const reading = readLifecycle(pod().hostPID().container('app').sidecar('proxy').build());
    assert.equal(reading.kind, 'invalid');
    assert.match(reading.kind === 'invalid' ? (reading.errors[0]?.message ?? '') : '', /with hostPID, PID 1 is the node's own init .*use preset:, http: or exec:/);
  });

  it('never decides a stop: the controller runs nothing in the sidecar', () => {
    const d = evaluatePod(pod().hostPID().container('app').sidecar('proxy', 'signal:INT').finished('app', 0).build(), { nowMs: T0 + 1000 });
    assert.equal(d.action, 'invalid');
  });

  it('accepts preset:, http: and exec: stops, which do not signal PID 1', () => {
    const p = pod().hostPID().container('app').sidecar('proxy', 'preset:istio').sidecar('web', 'http:8080/quit').sidecar('db', 'exec:drain').finished('app', 0);
    assert.equal(readLifecycle(p.build()).kind, 'valid');
    assert.equal(evaluatePod(p.build(), { nowMs: T0 + 1000 }).action, 'stop');
  });

  it('names hostPID when both hostPID and shareProcessNamespace are set', () => {
    const p = pod().hostPID().shareProcessNamespace().container('app').sidecar('proxy');
    const reading = readLifecycle(p.build());
    assert.match(reading.kind === 'invalid' ? (reading.errors[0]?.message ?? '') : '', /hostPID/);
  });

  it('hostPID false changes nothing', () => {
    const p = pod().container('app').sidecar('proxy');
    const built = p.build();
    built.spec!.hostPID = false;
    assert.equal(readLifecycle(built).kind, 'valid');
  });
});
