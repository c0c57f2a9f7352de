import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import { describe, it } from 'mocha';
import { evaluatePod, handleAdmissionReview, lifecycleMutator, readLifecycle, type AdmissionReviewOut } from '../src/index.js';
import { T0 } from './fixtures.js';

/** N containers and N role annotations naming containers that do not exist. */
function hostilePod(n: number): V1Pod {
  const annotations: Record<string, string> = {};
  const containers = [];
  for (let i = 0; i < n; i++) {
    containers.push({ name: `c${i}`, image: 'i' });
    annotations[`role.podlife.dev/x${i}`] = 'sidecar';
  }
  return { metadata: { name: 'hostile', namespace: 'default', annotations }, spec: { restartPolicy: 'Never', containers } };
}

const review = (object: unknown) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object },
});
const node = (v: string): V1Node => ({ status: { nodeInfo: { kubeletVersion: v } as never } });

describe('annotation validation: linear work, bounded output', () => {
  it('reports at most 10 problems of a pod with 8,000 bad annotations, and counts the rest', () => {
    const started = performance.now();
    const reading = readLifecycle(hostilePod(8000));
    const ms = performance.now() - started;
    assert.equal(reading.kind, 'invalid');
    if (reading.kind !== 'invalid') return;
    assert.equal(reading.errors.length, 10);
    assert.equal(reading.omitted, 7990);
    for (const e of reading.errors) assert.ok(e.message.length <= 400, e.message);
    assert.ok(ms < 500, `took ${ms.toFixed(0)} ms`);
  });

  it('names a few of the containers a pod has, not all of them', () => {
    const reading = readLifecycle(hostilePod(100));
    assert.equal(reading.kind, 'invalid');
    if (reading.kind !== 'invalid') return;
    assert.match(reading.errors[0]?.message ?? '', /\(have: c0, c1, c2, c3, c4 and 95 more\)/);
  });

  it('keeps a message about a missing container short when the key, the value and every container name are long', () => {
    const long = (c: string) => c.repeat(5_000);
    const pod: V1Pod = {
      metadata: { annotations: { [`role.podlife.dev/${long('a')}`]: long('b') } },
      spec: { containers: ['c', 'd', 'e', 'f', 'g', 'h'].map((c) => ({ name: long(c) })) },
    };
    const reading = readLifecycle(pod);
    assert.equal(reading.kind, 'invalid');
    if (reading.kind !== 'invalid') return;
    const message = reading.errors[0]?.message ?? '';
    assert.match(message, /no container "a{63}…\(4937 more characters\)" in spec\.containers \(have: c{63}…\(4937 more characters\) and 5 more\)$/);
    assert.ok(message.length <= 600, `${message.length} characters`);
  });

  it('keeps messages short for a long native sidecar marked keystone and a long container given two roles', () => {
    const name = 'n'.repeat(5_000);
    const native: V1Pod = {
      metadata: { annotations: { [`role.podlife.dev/${name}`]: 'keystone' } },
      spec: { initContainers: [{ name, restartPolicy: 'Always' }], containers: [{ name: 'app' }] },
    };
    const conflict: V1Pod = {
      metadata: { annotations: { [`role.podlife.dev/${name}`]: 'keystone', [`sidecars.alpha.kubernetes.io/${name}`]: 'sidecar' } },
      spec: { containers: [{ name }, { name: 'app' }] },
    };
    for (const [pod, reason] of [[native, /is a native sidecar/], [conflict, /conflicts with/]] as const) {
      const reading = readLifecycle(pod);
      assert.equal(reading.kind, 'invalid');
      if (reading.kind !== 'invalid') return;
      const message = reading.errors.map((e) => e.message).find((m) => reason.test(m)) ?? '';
      assert.match(message, reason);
      assert.ok(message.length <= 600, `${message.length} characters`);
    }
  });

  it('clips a huge key or value in an error message', () => {
    const pod: V1Pod = { metadata: { annotations: { [`role.podlife.dev/${'a'.repeat(100_000)}`]: 'x'.repeat(100_000) } }, spec: { containers: [{ name: 'app' }] } };
    const reading = readLifecycle(pod);
    assert.equal(reading.kind, 'invalid');
    if (reading.kind !== 'invalid') return;
    assert.ok((reading.errors[0]?.message.length ?? 0) <= 600);
  });

  it('evaluatePod on a stored pod with 5,000 containers and as many bad annotations decides quickly and briefly', () => {
    const started = performance.now();
    const decision = evaluatePod(hostilePod(5000), { nowMs: T0 });
    const ms = performance.now() - started;
    assert.equal(decision.action, 'invalid');
    assert.ok(JSON.stringify(decision).length < 16 * 1024, `decision of ${JSON.stringify(decision).length} characters`);
    assert.ok(ms < 500, `took ${ms.toFixed(0)} ms`);
    assert.match(decision.updates[0]?.condition.message ?? '', /and 4990 more/);
  });

  it('evaluatePod on a valid pod with 5,000 containers is linear', () => {
    const containers = [];
    const annotations: Record<string, string> = {};
    const containerStatuses = [];
    for (let i = 0; i < 5000; i++) {
      containers.push({ name: `c${i}` });
      if (i % 2 === 1) annotations[`role.podlife.dev/c${i}`] = 'sidecar';
      containerStatuses.push({ name: `c${i}`, image: '', imageID: '', ready: false, restartCount: 0, state: i % 2 === 0 ? { terminated: { exitCode: 0 } } : { running: {} } });
    }
    const pod: V1Pod = { metadata: { annotations }, spec: { restartPolicy: 'Never', containers }, status: { phase: 'Running', containerStatuses } };
    // Against a floor taken in the same run (a deep copy of the same pod, linear by nature), so a
    // loaded machine slows both: quadratic work on 5,000 containers is hundreds of copies' worth.
    const copyStarted = performance.now();
    for (let i = 0; i < 3; i++) JSON.parse(JSON.stringify(pod));
    const copyMs = (performance.now() - copyStarted) / 3;
    const started = performance.now();
    const decision = evaluatePod(pod, { nowMs: T0 });
    const ms = performance.now() - started;
    assert.equal(decision.action, 'stop');
    assert.ok(ms < Math.max(50, 40 * copyMs), `took ${ms.toFixed(0)} ms, a deep copy ${copyMs.toFixed(1)} ms`);
  });

  it('answers an 8,000-container review with at most 11 short warnings', () => {
    const outcome = handleAdmissionReview(review(hostilePod(8000)), { mutate: lifecycleMutator(() => []) });
    assert.equal(outcome.httpStatus, 200);
    const warnings = (outcome as { review: AdmissionReviewOut }).review.response.warnings ?? [];
    assert.equal(warnings.length, 11);
    for (const w of warnings) assert.ok(w.length <= 256, w);
    assert.match(warnings[10] ?? '', /and 7990 more/);
    assert.ok(JSON.stringify(outcome).length < 8 * 1024);
  });

  it('caps the warnings of any mutator in count and length', () => {
    const many = Array.from({ length: 1000 }, (_, i) => `w${i} ${'x'.repeat(10_000)}`);
    const outcome = handleAdmissionReview(review(hostilePod(1)), { mutate: () => ({ warnings: many }) });
    const warnings = (outcome as { review: AdmissionReviewOut }).review.response.warnings ?? [];
    assert.equal(warnings.length, 13);
    for (const w of warnings) assert.ok(w.length <= 256);
    assert.match(warnings.at(-1) ?? '', /and 988 more/);
  });
});

describe('admission edge cases', () => {
  it('a patch that cannot be serialised (deeply nested JSON in an op) still answers a review, allowing the pod unchanged', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const mutate = (): JsonPatchOp[] => [{ op: 'add', path: '/spec/containers/1/args', value: deep }];
    const outcome = handleAdmissionReview(review(hostilePod(1)), { mutate });
    assert.equal(outcome.httpStatus, 200);
    const response = (outcome as { review: AdmissionReviewOut }).review.response;
    assert.equal(response.allowed, true);
    assert.equal(response.patch, undefined);
    assert.match(response.warnings?.[0] ?? '', /left unchanged/);
  });

  it('converts a sidecar whose spec is nested too deep to serialise: the patch moves it, never restates it', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const pod: V1Pod = {
      metadata: { annotations: { 'role.podlife.dev/proxy': 'sidecar', 'podlife.dev/native-sidecars': 'true' } },
      spec: { containers: [{ name: 'app' }, { name: 'proxy', args: deep as string[] }] },
    };
    const outcome = handleAdmissionReview(review(pod), { mutate: lifecycleMutator(() => [node('v1.30.0')]) });
    assert.equal(outcome.httpStatus, 200);
    const response = (outcome as { review: AdmissionReviewOut }).review.response;
    assert.equal(response.allowed, true);
    assert.equal(response.warnings, undefined);
    const ops = JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString('utf8')) as JsonPatchOp[];
    assert.deepEqual(ops.slice(0, 3), [
      { op: 'add', path: '/spec/initContainers', value: [] },
      { op: 'move', from: '/spec/containers/1', path: '/spec/initContainers/0' },
      { op: 'add', path: '/spec/initContainers/0/restartPolicy', value: 'Always' },
    ]);
  });

  it('offers no native-sidecar conversion on UPDATE (containers are immutable), only the managed label', () => {
    const pod: V1Pod = {
      metadata: { annotations: { 'role.podlife.dev/proxy': 'sidecar', 'podlife.dev/native-sidecars': 'true' } },
      spec: { containers: [{ name: 'app' }, { name: 'proxy' }] },
    };
    const body = review(pod);
    body.request.operation = 'UPDATE';
    const outcome = handleAdmissionReview(body, { mutate: lifecycleMutator(() => [node('v1.30.0')]) });
    const patch = (outcome as { review: AdmissionReviewOut }).review.response.patch ?? '';
    assert.deepEqual(JSON.parse(Buffer.from(patch, 'base64').toString()), [{ op: 'add', path: '/metadata/labels', value: { 'podlife.dev/managed': 'true' } }]);
    body.request.operation = 'CREATE';
    const created = handleAdmissionReview(body, { mutate: lifecycleMutator(() => [node('v1.30.0')]) });
    assert.notEqual((created as { review: AdmissionReviewOut }).review.response.patch, undefined);
  });

  for (const [what, containers] of [
    ['[null]', [null]],
    ['a string', 'app'],
    ['an object', { name: 'app' }],
    ['[42, {}]', [42, {}]],
  ] as const) {
    it(`readLifecycle never throws on containers: ${what}`, () => {
      const pod = { metadata: { annotations: { 'role.podlife.dev/app': 'sidecar' } }, spec: { containers } } as unknown as V1Pod;
      assert.equal(readLifecycle(pod).kind, 'invalid');
    });
  }

  it('readLifecycle never throws on a non-string annotation value', () => {
    const pod = { metadata: { annotations: { 'stop.podlife.dev/app': 5, 'role.podlife.dev/app': null } }, spec: { containers: [{ name: 'app' }] } } as unknown as V1Pod;
    assert.equal(readLifecycle(pod).kind, 'invalid');
  });

  it('a kind or apiVersion that cannot be turned into text is a 400, not an exception', () => {
    const body = { apiVersion: { toString: 1 }, kind: 'AdmissionReview', request: { uid: 'u' } };
    assert.equal(handleAdmissionReview(body, { mutate: () => [] }).httpStatus, 400);
    const kindless = { ...review({}), request: { uid: 'u', kind: { kind: { toString: 1 } } } };
    assert.equal(handleAdmissionReview(kindless, { mutate: () => [] }).httpStatus, 200);
  });
});
