import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { evaluatePod } from '@podlife/keystone';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { hasPodlifeAnnotation, keepLifecycleFields } from '../src/keystone/transform.js';
import { nowArb, podArb, T0 } from './pod-arbitrary.js';

function sharedPidPod(): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u', annotations: { 'role.podlife.dev/proxy': 'sidecar' } },
    spec: { shareProcessNamespace: true, restartPolicy: 'Never', containers: [{ name: 'app' }, { name: 'proxy' }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, finishedAt: new Date(T0) } } },
        { name: 'proxy', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
      ],
    },
  };
}

describe('the keystone pod cache keeps what the decision reads', () => {
  it('keeps shareProcessNamespace: a shared-PID pod with a signal stop stays invalid when cached', () => {
    const pod = sharedPidPod();
    assert.equal(evaluatePod(pod, { nowMs: T0 }).action, 'invalid');
    assert.equal(evaluatePod(keepLifecycleFields(pod), { nowMs: T0 }).action, 'invalid');
  });

  it('the decision on the cached view equals the decision on the full pod, for any pod', () => {
    fc.assert(
      fc.property(podArb, nowArb, fc.constantFrom(1, 2), (pod, nowMs, keystoneLimit) => {
        const options = { nowMs, keystoneLimit, execCommands: { drain: ['drain'] } };
        const cached = evaluatePod(keepLifecycleFields(pod), options);
        const full = evaluatePod(pod, options);
        if (hasPodlifeAnnotation(pod.metadata?.annotations)) assert.deepEqual(cached, full);
        else {
          // Cached as identity only: not-ours instead of, say, terminal — either way nothing is done or written.
          assert.deepEqual([cached.action, cached.updates], ['none', []]);
          assert.deepEqual([full.action, full.updates], ['none', []]);
        }
      }),
      { numRuns: 2000, interruptAfterTimeLimit: 3000 },
    );
  });

  it('never mutates the pod it is given', () => {
    fc.assert(
      fc.property(podArb, (pod) => {
        const before = JSON.stringify(pod);
        keepLifecycleFields(pod);
        assert.equal(JSON.stringify(pod), before);
      }),
      { numRuns: 300, interruptAfterTimeLimit: 1000 },
    );
  });
});
