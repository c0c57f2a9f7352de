import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { lifecycleMutator, type JsonPatchOp, type MutateResult } from '../src/index.js';

/**
 * The webhook's conversion is linear in the pod's containers (work linear in the pod's
 * size). Time per container is compared across 1,000 to 40,000 converted sidecars, half of them
 * given a stop signal: a scan of a list per converted container made the 40,000-sidecar review
 * take seconds (30-40x the time per container of a 1,000-sidecar one), where a linear one stays
 * within 1-8x of it (garbage collection of the larger pod is most of that spread): the 15x bound
 * leaves room on both sides. The 40,000 case is always run; the least of five runs is taken, so that a
 * run preempted by another process on a busy machine (the full unit suite in parallel) does not decide it.
 */
const nodes: V1Node[] = [{ metadata: { name: 'n' }, status: { nodeInfo: { kubeletVersion: 'v1.34.0' } as never } }];

function sidecarPod(sidecars: number, signal: (i: number) => string): V1Pod {
  const annotations: Record<string, string> = {};
  const containers = [{ name: 'app', image: 'app:1' }];
  for (let i = 0; i < sidecars; i++) {
    containers.push({ name: `s${i}`, image: 'proxy:1' });
    annotations[`role.podlife.dev/s${i}`] = 'sidecar';
    annotations[`stop.podlife.dev/s${i}`] = signal(i);
  }
  return { metadata: { name: 'p', namespace: 'd', annotations }, spec: { containers } };
}

/** The least time per container, in microseconds, of `runs` conversions of the same pod. */
function microsPerContainer(pod: V1Pod, runs: number): number {
  const mutate = lifecycleMutator(() => nodes, { stopSignals: true });
  const containers = pod.spec!.containers.length;
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const started = performance.now();
    const out = mutate(pod, { uid: 'u', operation: 'CREATE' });
    best = Math.min(best, performance.now() - started);
    const ops: readonly JsonPatchOp[] = Array.isArray(out) ? out : ((out as MutateResult).ops ?? []);
    assert.ok(ops.some((o) => o.op === 'move'), 'the sidecars convert');
  }
  return (best * 1000) / containers;
}

describe('webhook conversion stays linear in containers (containerStopSignals on)', function () {
  this.timeout(120_000);

  it('time per container at 1,000 to 40,000 sidecars stays within 15x of the time per container at 1,000', () => {
    const signals = ['signal:INT', 'signal:TERM', 'signal:USR1', 'signal:QUIT'];
    const baseline = microsPerContainer(sidecarPod(1_000, (i) => signals[i % 2]!), 20);
    fc.assert(
      fc.property(fc.integer({ min: 1_000, max: 40_000 }), fc.array(fc.constantFrom(...signals), { minLength: 1, maxLength: 4 }), (sidecars, cycle) => {
        const perContainer = microsPerContainer(sidecarPod(sidecars, (i) => cycle[i % cycle.length]!), 5);
        assert.ok(perContainer <= 15 * baseline, `${sidecars} sidecars: ${perContainer.toFixed(2)} us a container, against ${baseline.toFixed(2)} us at 1,000`);
      }),
      { numRuns: 4, endOnFailure: true, examples: [[40_000, ['signal:INT', 'signal:TERM']]] },
    );
  });
});
