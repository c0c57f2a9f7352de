import assert from 'node:assert/strict';
import type { V1Node } from '@kubernetes/client-node';
import fc from 'fast-check';
import { admitNode, birthTaints, resolveRules } from '../src/index.js';
import { rule } from './builders.js';

const set = () =>
  resolveRules([
    rule('gpu').taint('readiness.k8s.io/gpu').selector({ pool: 'gpu' }).build(),
    rule('net').taint('readiness.k8s.io/net').selector({ pool: 'gpu' }).continuous().build(),
    rule('preview').taint('readiness.k8s.io/preview').selector({ pool: 'gpu' }).dryRun().build(),
    rule('cpu').taint('readiness.k8s.io/cpu').selector({ pool: 'cpu' }).build(),
  ]);
const review = (object: unknown, operation = 'CREATE', kind = 'Node') => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u-1', kind: { group: '', version: 'v1', kind }, operation, object },
});
const newNode = (labels: Record<string, string>, taints?: { key: string; effect: string }[]): V1Node => ({ metadata: { name: 'n', labels }, spec: taints ? { taints } : {} });
type Answer = { response: { uid: string; allowed: boolean; patch?: string; warnings?: string[] } };
const patchOf = (a: { body: unknown }) => {
  const p = (a.body as Answer).response.patch;
  return p === undefined ? undefined : (JSON.parse(Buffer.from(p, 'base64').toString('utf8')) as { op: string; path: string; value: unknown }[]);
};

describe('Node CREATE webhook: taints at birth', () => {
  it('a node registering with none gets the taints of the rules that select it (not dry-run ones)', () => {
    const a = admitNode(review(newNode({ pool: 'gpu' })), set());
    assert.equal((a.body as Answer).response.allowed, true);
    assert.deepEqual(patchOf(a), [{ op: 'add', path: '/spec/taints', value: [{ key: 'readiness.k8s.io/gpu', effect: 'NoSchedule' }, { key: 'readiness.k8s.io/net', effect: 'NoSchedule' }] }]);
  });

  it('appends to taints the kubelet registered, never twice the same', () => {
    const a = admitNode(review(newNode({ pool: 'gpu' }, [{ key: 'readiness.k8s.io/gpu', effect: 'NoSchedule' }, { key: 'example.com/x', effect: 'NoSchedule' }])), set());
    assert.deepEqual(patchOf(a), [{ op: 'add', path: '/spec/taints/-', value: { key: 'readiness.k8s.io/net', effect: 'NoSchedule' } }]);
  });

  it('control-plane nodes (label or taint) are never tainted', () => {
    assert.deepEqual(birthTaints(newNode({ pool: 'gpu', 'node-role.kubernetes.io/control-plane': '' }), set()), []);
    assert.deepEqual(birthTaints(newNode({ pool: 'gpu' }, [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }]), set()), []);
  });

  it('suspended rules add nothing', () => {
    const s = resolveRules([rule('gpu').taint('readiness.k8s.io/gpu').selector({ pool: 'gpu' }).with({ suspend: true }).build()]);
    assert.deepEqual(birthTaints(newNode({ pool: 'gpu' }), s), []);
  });

  it('fails open: rules not known yet, an UPDATE, another kind — allowed, unchanged', () => {
    const unknown = admitNode(review(newNode({ pool: 'gpu' })), undefined);
    assert.equal(patchOf(unknown), undefined);
    assert.match((unknown.body as Answer).response.warnings?.[0] ?? '', /not loaded yet/);
    assert.equal(patchOf(admitNode(review(newNode({ pool: 'gpu' }), 'UPDATE'), set())), undefined);
    assert.equal(patchOf(admitNode(review({}, 'CREATE', 'Pod'), set())), undefined);
    assert.equal((admitNode(review('not a node'), set()).body as Answer).response.allowed, true);
  });

  it('a malformed review is a 400 naming what is wrong', () => {
    assert.equal(admitNode({ kind: 'AdmissionReview' }, set()).status, 400);
    assert.match(JSON.stringify(admitNode({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }, set()).body), /request\.uid/);
  });

  it('property: whatever the node, every taint added is under readiness.k8s.io/ and is answered allowed', () => {
    const labels = fc.dictionary(fc.constantFrom('pool', 'node-role.kubernetes.io/control-plane', 'zone'), fc.constantFrom('gpu', 'cpu', ''));
    const taints = fc.array(fc.record({ key: fc.constantFrom('readiness.k8s.io/gpu', 'example.com/a', 'node-role.kubernetes.io/master'), effect: fc.constantFrom('NoSchedule', 'NoExecute') }), { maxLength: 3 });
    fc.assert(
      fc.property(labels, fc.option(taints), (l, t) => {
        const a = admitNode(review(newNode(l, t ?? undefined)), set());
        assert.equal((a.body as Answer).response.allowed, true);
        for (const op of patchOf(a) ?? []) {
          const added = (Array.isArray(op.value) ? op.value : [op.value]) as { key: string }[];
          for (const x of added) assert.ok(x.key.startsWith('readiness.k8s.io/'), x.key);
        }
      }),
    );
  });
});
