import assert from 'node:assert/strict';
import type { V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { EventRecorder, type EventObject } from '@podlife/core';
import { evaluatePod, readLifecycle } from '../src/index.js';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { hasPodlifeAnnotation, keepLifecycleFields } from '../src/transform.js';
import { nowArb, podArb, T0 } from './pod-arbitrary.js';

function sharedPidPod(pid: Pick<V1PodSpec, 'shareProcessNamespace' | 'hostPID'> = { shareProcessNamespace: true }): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'default', uid: 'u', annotations: { 'role.podlife.dev/proxy': 'sidecar' } },
    spec: { ...pid, restartPolicy: 'Never', containers: [{ name: 'app' }, { name: 'proxy' }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, finishedAt: new Date(T0) } } },
        { name: 'proxy', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
      ],
    },
  };
}

/**
 * `pod` with its spec, metadata and status watched: `read` collects `part.key` for every field of
 * theirs that is looked up or tested (`in`), whether the pod sets it or not.
 */
function readsOf(pod: V1Pod): { pod: V1Pod; read: Set<string> } {
  const read = new Set<string>();
  const watch = (part: string, object: object | undefined) =>
    object &&
    new Proxy(object, {
      get(target, key, receiver) {
        if (typeof key === 'string') read.add(`${part}.${key}`);
        return Reflect.get(target, key, receiver);
      },
      has(target, key) {
        if (typeof key === 'string') read.add(`${part}.${key}`);
        return Reflect.has(target, key);
      },
    });
  const watched = { ...pod, spec: watch('spec', pod.spec), metadata: watch('metadata', pod.metadata), status: watch('status', pod.status) } as V1Pod;
  return { pod: watched, read };
}

describe('the keystone pod cache keeps what the decision reads', () => {
  it('keeps shareProcessNamespace: a shared-PID pod with a signal stop stays invalid when cached', () => {
    const pod = sharedPidPod();
    assert.equal(evaluatePod(pod, { nowMs: T0 }).action, 'invalid');
    assert.equal(evaluatePod(keepLifecycleFields(pod), { nowMs: T0 }).action, 'invalid');
  });

  it('keeps hostPID: a host-PID pod with a signal stop stays invalid when cached', () => {
    const pod = sharedPidPod({ hostPID: true });
    for (const view of [pod, keepLifecycleFields(pod)]) {
      const d = evaluatePod(view, { nowMs: T0 });
      assert.equal(d.action, 'invalid');
      assert.match(d.action === 'invalid' ? (d.errors[0]?.message ?? '') : '', /hostPID, PID 1 is the node's own init/);
    }
  });

  it('the reading and the decision on the cached view equal those on the full pod, for any pod', () => {
    fc.assert(
      fc.property(podArb, nowArb, fc.constantFrom(1, 2), (pod, nowMs, keystoneLimit) => {
        const options = { nowMs, keystoneLimit, execCommands: { drain: ['drain'] } };
        const cached = evaluatePod(keepLifecycleFields(pod), options);
        const full = evaluatePod(pod, options);
        if (hasPodlifeAnnotation(pod.metadata?.annotations)) {
          assert.deepEqual(cached, full);
          assert.deepEqual(readLifecycle(keepLifecycleFields(pod), options), readLifecycle(pod, options));
        }
        else {
          // Cached as identity only: not-ours instead of, say, terminal — either way nothing is done or written.
          assert.deepEqual([cached.action, cached.updates], ['none', []]);
          assert.deepEqual([full.action, full.updates], ['none', []]);
        }
      }),
      { numRuns: 2000, interruptAfterTimeLimit: 3000 },
    );
  });

  it('keeps every pod-level field the decision reads, whichever fields a pod sets', () => {
    fc.assert(
      fc.property(podArb, nowArb, (pod, nowMs) => {
        if (!hasPodlifeAnnotation(pod.metadata?.annotations)) return;
        const { pod: watched, read } = readsOf(pod);
        evaluatePod(watched, { nowMs, keystoneLimit: 2, execCommands: { drain: ['drain'] } });
        const cached = keepLifecycleFields(pod) as unknown as Record<string, Record<string, unknown> | undefined>;
        const full = pod as unknown as Record<string, Record<string, unknown> | undefined>;
        for (const field of read) {
          const [part, key] = field.split('.') as [string, string];
          const value = full[part]?.[key];
          if (value === undefined) continue;
          const kept = cached[part]?.[key];
          // Scalars are kept as they are; lists and objects are kept, projected to what is read.
          if (typeof value !== 'object' || value === null) assert.equal(kept, value, `${field} is read but not kept`);
          else assert.notEqual(kept, undefined, `${field} is read but not kept`);
        }
      }),
      { numRuns: 500, interruptAfterTimeLimit: 3000 },
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
