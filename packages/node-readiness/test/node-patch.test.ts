import assert from 'node:assert/strict';
import { CompletedAnnotation, ManagedTaintsAnnotation, evaluateNode, planNodePatch } from '../src/index.js';
import { GPU, T0, gpuNode, rule } from './builders.js';

describe('planNodePatch: one optimistically locked write per node', () => {
  it('removes the taint and records the pass in one patch, locked on the resourceVersion', () => {
    const n = gpuNode().rv('42').taint('other/x').taint(GPU).condition('GPUReady', 'True').managed({ [`${GPU}:NoSchedule`]: 'gpu' }).build();
    const ops = planNodePatch(n, evaluateNode(n, [rule().build()], T0).changes, T0);
    assert.deepEqual(ops, [
      { op: 'test', path: '/metadata/resourceVersion', value: '42' },
      { op: 'replace', path: '/spec/taints', value: [{ key: 'other/x', effect: 'NoSchedule' }] },
      { op: 'remove', path: `/metadata/annotations/${ManagedTaintsAnnotation.replace('/', '~1')}` },
      { op: 'add', path: `/metadata/annotations/${CompletedAnnotation.replace('/', '~1')}`, value: '{"gpu":"2025-06-01T12:00:00Z"}' },
    ]);
  });

  it('creates the annotations object when the node has none', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').build();
    const ops = planNodePatch(n, evaluateNode(n, [rule().build()], T0).changes, T0);
    assert.deepEqual(ops.at(-1), { op: 'add', path: '/metadata/annotations', value: { [CompletedAnnotation]: '{"gpu":"2025-06-01T12:00:00Z"}' } });
  });

  it('adds spec.taints with the ownership record when the node has no taints', () => {
    const n = gpuNode().condition('GPUReady', 'False', { since: T0 - 60_000 }).build();
    const ops = planNodePatch(n, evaluateNode(n, [rule().continuous('0s').build()], T0).changes, T0);
    assert.deepEqual(ops.slice(1), [
      { op: 'add', path: '/spec/taints', value: [{ key: GPU, effect: 'NoSchedule' }] },
      { op: 'add', path: '/metadata/annotations', value: { [ManagedTaintsAnnotation]: `{"${GPU}:NoSchedule":"gpu"}` } },
    ]);
  });

  it('adoption writes only the ownership record', () => {
    const n = gpuNode().taint(GPU).build();
    const ops = planNodePatch(n, evaluateNode(n, [rule().build()], T0).changes, T0);
    assert.deepEqual(ops.map((o) => o.path), ['/metadata/resourceVersion', '/metadata/annotations']);
  });

  it('writes nothing when nothing changes', () => {
    assert.deepEqual(planNodePatch(gpuNode().build(), [], T0), []);
  });
});
