import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import { applyJsonPatch } from '@podlife/core/testing';
import { describe, it } from 'mocha';
import {
  WEBHOOK_OPT_IN_LABEL,
  WEBHOOK_OPT_IN_VALUE,
  admissionRoute,
  createAdmissionHandler,
  handleAdmissionReview,
  injectContainerOps,
  markContainerOps,
  readLifecycle,
  webhookOptInOps,
  type MutatorFailurePolicy,
} from '../src/index.js';
import { pod } from './fixtures.js';

/** RFC 6902 as the API server applies it: the parent must exist, `-` appends. */
const applyOps = (doc: V1Pod, ops: readonly JsonPatchOp[]): V1Pod => applyJsonPatch(doc, ops);

const labelled = (p: V1Pod, labels: Record<string, string>): V1Pod => ({ ...p, metadata: { ...p.metadata, labels } });
const proxy = { name: 'proxy', image: 'envoyproxy/envoy:v1.31.0' };
const review = (object: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object },
});

describe('injecting a container that the same patch adds', () => {
  it('markContainerOps on the incoming pod throws: the container is not there yet', () => {
    assert.throws(() => markContainerOps(pod().container('app').build(), 'proxy', { role: 'sidecar' }), /no container "proxy"/);
  });

  it('injectContainerOps adds the container and marks it; the patched pod reads as a valid sidecar pod', () => {
    const incoming = pod().container('app').build();
    const after = applyOps(incoming, injectContainerOps(incoming, proxy, { role: 'sidecar', stop: 'preset:envoy' }));
    assert.deepEqual(after.spec?.containers.map((c) => c.name), ['app', 'proxy']);
    assert.equal(after.metadata?.annotations?.['role.podlife.dev/proxy'], 'sidecar');
    assert.equal(after.metadata?.annotations?.['stop.podlife.dev/proxy'], 'preset:envoy');
    assert.equal(after.metadata?.labels?.['podlife.dev/managed'], 'true');
    const reading = readLifecycle(after);
    assert.equal(reading.kind, 'valid');
  });

  it('keeps annotations and labels the pod already has', () => {
    const incoming = labelled(pod().container('app').annotate('team', 'a').build(), { 'inject-proxy': 'true' });
    const after = applyOps(incoming, injectContainerOps(incoming, proxy, { role: 'sidecar' }, { webhookOptIn: true }));
    assert.equal(after.metadata?.annotations?.team, 'a');
    assert.deepEqual(after.metadata?.labels, { 'inject-proxy': 'true', 'podlife.dev/managed': 'true', [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE });
  });

  it('on a pod without labels, the managed and opt-in labels go in one op, so neither overwrites the other', () => {
    const incoming = pod().container('app').build();
    const ops = injectContainerOps(incoming, proxy, { role: 'sidecar' }, { webhookOptIn: true });
    assert.equal(ops.filter((o) => o.path === '/metadata/labels').length, 1);
    assert.deepEqual(applyOps(incoming, ops).metadata?.labels, { 'podlife.dev/managed': 'true', [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE });
  });

  it('webhookOptInOps alone: one op, none when the label is already set', () => {
    const bare = pod().container('app').build();
    assert.deepEqual(applyOps(bare, webhookOptInOps(bare)).metadata?.labels, { [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE });
    assert.deepEqual(webhookOptInOps(labelled(pod().container('app').build(), { [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE })), []);
  });

  for (const [what, incoming, container, mark, message] of [
    ['a name the pod already uses', pod().container('app').container('proxy').build(), proxy, { role: 'sidecar' }, /already has a container named "proxy"/],
    ['a name an init container uses', pod().container('app').init('proxy').build(), proxy, { role: 'sidecar' }, /already has a container named "proxy"/],
    ['a name that is not a DNS label', pod().container('app').build(), { name: 'Proxy_1' }, { role: 'sidecar' }, /"Proxy_1" is not a DNS label/],
    ['an invalid stop spec', pod().container('app').build(), proxy, { role: 'sidecar', stop: 'signal:SEGV' }, /stop\.podlife\.dev\/proxy/],
    ['an unknown role', pod().container('app').build(), proxy, { role: 'helper' }, /role\.podlife\.dev\/proxy.*keystone, sidecar/],
  ] as const) {
    it(`throws for ${what}`, () => {
      assert.throws(() => injectContainerOps(incoming, container as typeof proxy, mark as { role: 'sidecar' }), message);
    });
  }
});

describe('an injector that fails loudly (failurePolicy)', () => {
  const boom = () => {
    throw new Error('no proxy image configured');
  };

  it('Ignore (the default) allows the pod unchanged with a warning', () => {
    const out = handleAdmissionReview(review(pod().container('app').build()), { mutate: boom });
    assert.ok(out.httpStatus === 200);
    assert.equal(out.review.response.allowed, true);
    assert.equal(out.review.response.patch, undefined);
    assert.match(out.review.response.warnings?.[0] ?? '', /no proxy image configured/);
  });

  it('Fail denies the pod with code 500 naming the error', () => {
    const out = handleAdmissionReview(review(pod().container('app').build()), { mutate: boom, failurePolicy: 'Fail' });
    assert.ok(out.httpStatus === 200);
    assert.equal(out.review.response.allowed, false);
    assert.equal(out.review.response.uid, 'u-1');
    assert.deepEqual(out.review.response.status, { code: 500, message: 'mutation failed: no proxy image configured' });
  });

  it('Fail still allows a pod whose mutation succeeds', () => {
    const out = handleAdmissionReview(review(pod().container('app').build()), {
      mutate: (p) => injectContainerOps(p, proxy, { role: 'sidecar' }),
      failurePolicy: 'Fail',
    });
    assert.ok(out.httpStatus === 200 && out.review.response.allowed && out.review.response.patchType === 'JSONPatch');
  });

  it('an unknown policy is refused when the handler or route is made, and by handleAdmissionReview itself', () => {
    const bad = { mutate: boom, failurePolicy: 'fail' as MutatorFailurePolicy };
    assert.throws(() => handleAdmissionReview(review(pod().container('app').build()), bad), /failurePolicy must be "Ignore" or "Fail", got "fail"/);
    assert.throws(() => admissionRoute(bad), /failurePolicy must be "Ignore" or "Fail", got "fail"/);
    assert.throws(() => createAdmissionHandler(bad), /failurePolicy must be "Ignore" or "Fail"/);
    assert.throws(() => admissionRoute({} as never), /mutate must be a function/);
  });
});

describe('a review the mutator cannot read (a hand-written review without request.kind or object)', () => {
  const mutate = (p: V1Pod) => injectContainerOps(p, proxy, { role: 'sidecar' });
  const withoutKind = (object: unknown) => {
    const r = review(object);
    return { ...r, request: { uid: r.request.uid, operation: 'CREATE', object } };
  };

  it('without request.kind, Fail denies it naming the missing field', () => {
    const out = handleAdmissionReview(withoutKind(pod().container('app').build()), { mutate, failurePolicy: 'Fail' });
    assert.ok(out.httpStatus === 200);
    assert.equal(out.review.response.allowed, false);
    assert.equal(out.review.response.patch, undefined);
    assert.match(out.review.response.status?.message ?? '', /request\.kind is missing/);
    assert.doesNotMatch(out.review.response.status?.message ?? '', /undefined/);
  });

  it('without request.kind, Ignore allows it unchanged with a warning naming the missing field', () => {
    const out = handleAdmissionReview(withoutKind(pod().container('app').build()), { mutate });
    assert.ok(out.httpStatus === 200 && out.review.response.allowed);
    assert.match(out.review.response.warnings?.[0] ?? '', /^podlife: request\.kind is missing.*; left unchanged$/);
  });

  it('without request.object, Fail denies it naming the field', () => {
    const r = review(undefined);
    const out = handleAdmissionReview({ ...r, request: { ...r.request, object: undefined } }, { mutate, failurePolicy: 'Fail' });
    assert.ok(out.httpStatus === 200);
    assert.equal(out.review.response.allowed, false);
    assert.match(out.review.response.status?.message ?? '', /request\.object is missing/);
  });

  it('a review of another kind is still allowed unchanged under Fail: the webhook was not meant for it', () => {
    const r = review({});
    const out = handleAdmissionReview({ ...r, request: { ...r.request, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } } }, { mutate, failurePolicy: 'Fail' });
    assert.ok(out.httpStatus === 200 && out.review.response.allowed);
    assert.match(out.review.response.warnings?.[0] ?? '', /Deployment is not a Pod/);
  });
});

describe('admissionRoute (a route for a server that hands over the raw body)', () => {
  const route = admissionRoute({ mutate: (p) => injectContainerOps(p, proxy, { role: 'sidecar' }) });
  const signal = new AbortController().signal;

  it('answers a review 200 with the patch', async () => {
    const answer = await route(Buffer.from(JSON.stringify(review(pod().container('app').build()))), signal);
    assert.equal(answer.status, 200);
    const response = (answer.body as { response: { uid: string; patch: string } }).response;
    const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString()) as JsonPatchOp[];
    assert.deepEqual(ops[0], { op: 'add', path: '/spec/containers/-', value: proxy });
  });

  it('answers 400 naming the parse error for a body that is not JSON', async () => {
    const answer = await route(Buffer.from('{nope'), signal);
    assert.equal(answer.status, 400);
    assert.match((answer.body as { error: string }).error, /^body is not JSON: /);
  });

  it('answers 400 for JSON that is not an AdmissionReview', async () => {
    const answer = await route(Buffer.from('{"kind":"Pod"}'), signal);
    assert.equal(answer.status, 400);
    assert.match((answer.body as { error: string }).error, /AdmissionReview/);
  });
});
