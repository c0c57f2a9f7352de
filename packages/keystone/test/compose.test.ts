import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import { applyJsonPatch } from '@podlife/core/testing';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import {
  composeOps,
  handleAdmissionReview,
  injectContainerOps,
  markContainerOps,
  markRoleOps,
  readLifecycle,
  setStopSpecOps,
  webhookOptInOps,
  WEBHOOK_OPT_IN_LABEL,
  type PodMutator,
} from '../src/index.js';
import { managedLabelOps } from '../src/webhook/patches.js';
import { pod } from './fixtures.js';

const envoy = { name: 'envoy', image: 'envoyproxy/envoy:v1.31.0' };
const review = (object: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object },
});

/** The patch an answered review carries, applied to the pod as the API server applies it. */
function admitted(incoming: V1Pod, mutate: (p: V1Pod) => JsonPatchOp[]): V1Pod {
  const out = handleAdmissionReview(review(incoming), { mutate, failurePolicy: 'Fail' });
  assert.ok(out.httpStatus === 200 && out.review.response.allowed, JSON.stringify(out));
  const ops = JSON.parse(Buffer.from(out.review.response.patch ?? '', 'base64').toString()) as JsonPatchOp[];
  return applyJsonPatch(incoming, ops);
}

describe('builders compose: ops from several builders for the same incoming pod make one patch', () => {
  const incoming = pod().container('app').container('logs').build();

  it('injectContainerOps then markContainerOps, concatenated by a mutator, keep both marks through the admission handler', () => {
    const after = admitted(incoming, (p) => [
      ...injectContainerOps(p, envoy, { role: 'sidecar', stop: 'preset:envoy' }, { webhookOptIn: true }),
      ...markContainerOps(p, 'logs', { role: 'sidecar', stop: 'signal:INT' }),
    ]);
    assert.deepEqual(after.metadata?.annotations, {
      'role.podlife.dev/envoy': 'sidecar',
      'stop.podlife.dev/envoy': 'preset:envoy',
      'role.podlife.dev/logs': 'sidecar',
      'stop.podlife.dev/logs': 'signal:INT',
    });
    assert.deepEqual(after.metadata?.labels, { 'podlife.dev/managed': 'true', [WEBHOOK_OPT_IN_LABEL]: 'enabled' });
    assert.deepEqual(after.spec?.containers.map((c) => c.name), ['app', 'logs', 'envoy']);
    assert.equal(readLifecycle(after).kind, 'valid');
  });

  it('a mutator written apart from its handler needs no annotation under strict (PodMutator)', () => {
    const mutate: PodMutator = (p) => [...injectContainerOps(p, envoy, { role: 'sidecar' }), ...markContainerOps(p, 'logs', { role: 'sidecar' })];
    assert.equal(admitted(incoming, (p) => mutate(p, { uid: 'u' }) as JsonPatchOp[]).metadata?.annotations?.['role.podlife.dev/logs'], 'sidecar');
  });

  it('composeOps creates each map once and adds the later entries one key at a time', () => {
    const ops = composeOps(injectContainerOps(incoming, envoy, { role: 'sidecar' }), markContainerOps(incoming, 'logs', { role: 'sidecar' }));
    assert.equal(ops.filter((o) => o.path === '/metadata/annotations').length, 1);
    assert.equal(ops.filter((o) => o.path === '/metadata/labels').length, 1);
    assert.ok(ops.some((o) => o.op === 'add' && o.path === '/metadata/annotations/role.podlife.dev~1logs' && o.value === 'sidecar'));
  });

  it('two injected containers on a pod without any: the second is appended to the list the first created', () => {
    const bare: V1Pod = { metadata: { name: 'p' }, spec: {} as V1Pod['spec'] & object };
    const after = applyJsonPatch(bare, composeOps(injectContainerOps(bare, envoy, { role: 'keystone' }), injectContainerOps(bare, { name: 'logs', image: 'busybox' }, { role: 'sidecar' })));
    assert.deepEqual(after.spec?.containers.map((c) => c.name), ['envoy', 'logs']);
  });

  it('ops that need no composing pass unchanged, in order', () => {
    const built = pod().container('app').container('logs').annotate('team', 'a').build();
    const annotated: V1Pod = { ...built, metadata: { ...built.metadata, labels: { tier: 'web' } } };
    const parts = [markRoleOps(annotated, 'logs', 'sidecar'), setStopSpecOps(annotated, 'logs', 'signal:INT')];
    assert.deepEqual(composeOps(...parts), parts.flat());
  });

  describe('property: composed ops leave the pod as the builders applied one after another would', () => {
    type Step = { kind: 'inject'; name: string } | { kind: 'mark'; name: 'app' | 'logs'; stop: boolean } | { kind: 'role'; name: 'app' | 'logs' } | { kind: 'optIn' } | { kind: 'label' };
    const step: fc.Arbitrary<Step> = fc.oneof(
      fc.constantFrom('envoy', 'vault', 'otel').map((name): Step => ({ kind: 'inject', name })),
      fc.record({ kind: fc.constant('mark' as const), name: fc.constantFrom('app' as const, 'logs' as const), stop: fc.boolean() }),
      fc.record({ kind: fc.constant('role' as const), name: fc.constantFrom('app' as const, 'logs' as const) }),
      fc.constant<Step>({ kind: 'optIn' }),
      fc.constant<Step>({ kind: 'label' }),
    );
    const build = (p: V1Pod, s: Step): JsonPatchOp[] => {
      switch (s.kind) {
        case 'inject':
          return injectContainerOps(p, { name: s.name, image: 'img' }, { role: 'sidecar', stop: 'signal:TERM' }, { webhookOptIn: s.name === 'vault' });
        case 'mark':
          return markContainerOps(p, s.name, s.stop ? { role: 'sidecar', stop: 'signal:QUIT' } : { role: 'keystone' });
        case 'role':
          return markRoleOps(p, s.name, 'sidecar');
        case 'optIn':
          return webhookOptInOps(p);
        case 'label':
          return managedLabelOps(p);
      }
    };
    const startArb = fc.record({ annotations: fc.boolean(), labels: fc.boolean() }).map(({ annotations, labels }) => {
      const b = pod().container('app').container('logs');
      if (annotations) b.annotate('team', 'a');
      const p = b.build();
      return labels ? { ...p, metadata: { ...p.metadata, labels: { tier: 'web' } } } : p;
    });
    // Each container is injected at most once: a second inject of one name throws, as it should.
    const stepsArb = fc.array(step, { maxLength: 6 }).filter((steps) => {
      const injected = steps.flatMap((s) => (s.kind === 'inject' ? [s.name] : []));
      return new Set(injected).size === injected.length;
    });

    it('for any mix and order of builders, on pods with and without annotations and labels', () =>
      fc.assert(
        fc.property(startArb, stepsArb, (start, steps) => {
          const composed = applyJsonPatch(start, composeOps(...steps.map((s) => build(start, s))));
          const oneByOne = steps.reduce((p, s) => applyJsonPatch(p, build(p, s)), start);
          assert.deepEqual(composed, oneByOne);
        }),
        { numRuns: 300 },
      ));
  });
});
