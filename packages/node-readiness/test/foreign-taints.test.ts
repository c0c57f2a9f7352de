import assert from 'node:assert/strict';
import type { V1Node, V1Taint } from '@kubernetes/client-node';
import fc from 'fast-check';
import { ManagedTaintsAnnotation, CompletedAnnotation, ReadinessTaintPrefix, evaluateNode } from '../src/index.js';
import { GPU, T0, node, rule } from './builders.js';

const touches = (op: string) => op === 'add' || op === 'remove';

describe('node-readiness never touches a taint outside readiness.k8s.io/', () => {
  it('a managed-taints annotation claiming a foreign taint for a missing rule does not remove it', () => {
    const n = node().taint('dedicated').taint(GPU).managed({ 'dedicated:NoSchedule': 'no-such-rule' }).condition('GPUReady', 'True').build();
    const d = evaluateNode(n, [rule().build()], T0);
    assert.deepEqual(d.changes.filter((c) => c.taint.key === 'dedicated'), []);
  });

  it('nor for a rule that exists', () => {
    const n = node().labels({ pool: 'gpu' }).taint('dedicated').managed({ 'dedicated:NoSchedule': 'gpu' }).build();
    const d = evaluateNode(n, [rule().build()], T0);
    assert.deepEqual(d.changes.filter((c) => c.taint.key === 'dedicated'), []);
  });

  const keyArb = fc.oneof(
    fc.constantFrom('dedicated', 'node.kubernetes.io/unschedulable', GPU, 'readiness.k8s.io/NetworkReady', 'readiness.k8s.io', 'Readiness.k8s.io/x', 'readiness.k8s.io/'),
    fc.string({ maxLength: 20 }),
  );
  const taintArb = fc.record({ key: keyArb, effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule') });
  const annotationArb = fc.oneof(
    fc.dictionary(fc.oneof(keyArb.map((k) => `${k}:NoSchedule`), fc.string({ maxLength: 20 })), fc.oneof(fc.constantFrom('gpu', 'net', 'gone'), fc.string({ maxLength: 5 }))).map((m) => JSON.stringify(m)),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('null', '[]', '{"a":1}', '{"__proto__":"gpu"}'),
  );
  const nodeArb = fc
    .record({
      taints: fc.array(taintArb, { maxLength: 6 }),
      managed: fc.option(annotationArb, { nil: undefined }),
      completed: fc.option(annotationArb, { nil: undefined }),
      pool: fc.constantFrom(undefined, 'gpu', 'net'),
      conditions: fc.array(fc.record({ type: fc.constantFrom('GPUReady', 'NetworkReady', 'Ready'), status: fc.constantFrom('True', 'False', 'Unknown') }), { maxLength: 3 }),
    })
    .map((s): V1Node => {
      const annotations: Record<string, string> = {};
      if (s.managed !== undefined) annotations[ManagedTaintsAnnotation] = s.managed;
      if (s.completed !== undefined) annotations[CompletedAnnotation] = s.completed;
      return {
        metadata: { name: 'n', labels: s.pool ? { pool: s.pool } : {}, annotations },
        spec: { taints: s.taints as V1Taint[] },
        status: { conditions: s.conditions.map((c) => ({ ...c, lastTransitionTime: new Date(T0 - 60_000) })) },
      };
    });
  const rulesArb = fc.subarray([
    rule('gpu').build(),
    rule('net').taint('readiness.k8s.io/NetworkReady').conditions({ type: 'NetworkReady' }).selector({ pool: 'net' }).continuous('0s').build(),
  ]);

  it('property: for any node, annotation and rules, only readiness.k8s.io/ taints are added or removed, and evaluateNode never throws', () => {
    fc.assert(
      fc.property(nodeArb, rulesArb, fc.boolean(), (n, rules, zeroConfig) => {
        const d = evaluateNode(n, rules, T0, { zeroConfig });
        for (const c of [...d.changes, ...d.dryRun]) {
          if (touches(c.op)) assert.ok(c.taint.key.startsWith(ReadinessTaintPrefix), `${c.op} ${c.taint.key}`);
        }
        assert.ok(JSON.stringify(d).length < 64 * 1024);
      }),
      { numRuns: 3000, interruptAfterTimeLimit: 2500 },
    );
  });
});
