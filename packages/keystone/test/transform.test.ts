import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { EventRecorder, type EventObject } from '@podlife/core';
import { evaluatePod } from '../src/index.js';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { hasPodlifeAnnotation, keepLifecycleFields } from '../src/transform.js';
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

  it('says apiVersion v1, kind Pod for a list item, which carries no kind, podlife pod or not', () => {
    const item = sharedPidPod();
    assert.equal(item.kind, undefined);
    const plain: V1Pod = { metadata: { name: 'q', namespace: 'default', uid: 'v' } };
    for (const cached of [keepLifecycleFields(item), keepLifecycleFields(plain)]) {
      assert.deepEqual([cached.apiVersion, cached.kind], ['v1', 'Pod']);
    }
  });

  it('an Event about a cached list item regards kind Pod, apiVersion v1', async () => {
    const written: EventObject[] = [];
    const recorder = new EventRecorder({
      controller: 'podlife.dev/controller',
      instance: 'test',
      sink: { create: async (e) => written.push(e), updateSeries: async () => undefined },
    });
    await recorder.event(keepLifecycleFields(sharedPidPod()), 'Normal', 'StoppingContainer', 'stopping container proxy');
    await recorder.close();
    assert.deepEqual(written.map((e) => e.regarding), [{ apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'default', uid: 'u' }]);
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
