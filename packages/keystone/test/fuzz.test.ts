/**
 * Fuzz suites (fast-check, each bounded in runs and time): whatever arrives, nothing throws,
 * nothing acts on an invalid pod, and the output stays bounded.
 */
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { InvalidAnnotationError } from '@podlife/core';
import { evaluatePod, formatStopSpec, handleAdmissionReview, lifecycleMutator, parseStopSpec, readLifecycle, type AdmissionReviewOut } from '../src/index.js';
import { REPORTED_PROBLEMS_MAX } from '../src/annotations.js';
import { WARNING_CHARS_MAX, WARNINGS_MAX } from '../src/webhook/admission.js';
import { T0 } from './fixtures.js';

const budget = (ms: number, numRuns: number) => ({ numRuns, interruptAfterTimeLimit: ms });

const oddString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', '__proto__', 'constructor', 'toString', '\u0000', '\ud800', 'a'.repeat(5000), 'signal:TERM', 'keystone', 'sidecar', 'app', 'proxy'),
);
const names = fc.constantFrom('app', 'proxy', 'db', '', '__proto__', 'a'.repeat(300));
const lifecycleKey = fc.oneof(
  fc.tuple(fc.constantFrom('role.podlife.dev/', 'stop.podlife.dev/', 'sidecars.alpha.kubernetes.io/'), fc.oneof(names, oddString)).map(([p, n]) => p + n),
  fc.constantFrom('podlife.dev/on-keystone-exit', 'podlife.dev/completion', 'podlife.dev/native-sidecars'),
  oddString,
);
const lifecycleValue = fc.oneof(
  fc.constantFrom('keystone', 'sidecar', 'signal:TERM', 'signal:KILL', 'preset:istio', 'http:8080/quit', 'exec:drain', 'TerminatePod', 'phase', 'true', 'auto'),
  oddString,
);
/** Any JSON value, nested a little. */
const jsonish = fc.jsonValue({ maxDepth: 3 });
const containerArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ name: names, image: fc.constant('i') }, { requiredKeys: ['name'] }) },
  { weight: 1, arbitrary: jsonish },
);
const podish = fc.record(
  {
    metadata: fc.oneof(
      { weight: 6, arbitrary: fc.record({ annotations: fc.oneof({ weight: 6, arbitrary: fc.dictionary(lifecycleKey, fc.oneof({ weight: 8, arbitrary: lifecycleValue }, { weight: 1, arbitrary: jsonish }), { maxKeys: 8 }) }, { weight: 1, arbitrary: jsonish }) }) },
      { weight: 1, arbitrary: jsonish },
    ),
    spec: fc.oneof(
      { weight: 6, arbitrary: fc.record({ containers: fc.oneof({ weight: 6, arbitrary: fc.array(containerArb, { maxLength: 5 }) }, { weight: 1, arbitrary: jsonish }), initContainers: fc.array(fc.record({ name: names, restartPolicy: fc.constantFrom('Always', undefined) }), { maxLength: 2 }), shareProcessNamespace: fc.oneof(fc.boolean(), jsonish), restartPolicy: fc.constantFrom('Never', 'OnFailure', 'Always', 'odd') }, { requiredKeys: [] }) },
      { weight: 1, arbitrary: jsonish },
    ),
    status: fc.oneof(fc.constant(undefined), jsonish),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<unknown>;

/** A deeply nested JSON value, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

const reviewArb = fc.oneof(
  { weight: 5, arbitrary: fc.record({ apiVersion: fc.constantFrom('admission.k8s.io/v1', 'v1', undefined), kind: fc.constantFrom('AdmissionReview', undefined), request: fc.oneof({ weight: 5, arbitrary: fc.record({ uid: fc.oneof(fc.constant('u'), oddString, jsonish), kind: fc.oneof(fc.constant({ group: '', version: 'v1', kind: 'Pod' }), jsonish), operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', undefined), object: fc.oneof({ weight: 5, arbitrary: podish }, { weight: 1, arbitrary: jsonish }) }, { requiredKeys: [] }) }, { weight: 1, arbitrary: jsonish }) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: jsonish },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((d) => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: { metadata: { annotations: { 'role.podlife.dev/proxy': 'sidecar', 'podlife.dev/native-sidecars': 'true' } }, spec: { containers: [{ name: 'app' }, { name: 'proxy', args: nested(d) }] } } } })) },
);
const node = (v: string): V1Node => ({ status: { nodeInfo: { kubeletVersion: v } as never } });

describe('fuzz: the admission handler, on whole AdmissionReviews', () => {
  it('never throws, always answers 200 with the uid or 400, with bounded warnings', () => {
    const mutate = lifecycleMutator(() => [node('v1.30.0')], { execCommands: { drain: ['drain'] } });
    fc.assert(
      fc.property(reviewArb, (body) => {
        const outcome = handleAdmissionReview(body, { mutate });
        if (outcome.httpStatus === 400) {
          assert.ok(outcome.error.length <= 512);
          return;
        }
        assert.equal(outcome.httpStatus, 200);
        const response = (outcome as { review: AdmissionReviewOut }).review.response;
        assert.equal(response.uid, (body as { request: { uid: string } }).request.uid);
        assert.ok((response.warnings ?? []).length <= WARNINGS_MAX + 1);
        for (const w of response.warnings ?? []) assert.ok(w.length <= WARNING_CHARS_MAX);
        assert.doesNotThrow(() => JSON.stringify(outcome));
      }),
      budget(4000, 1500),
    );
  });

  it('patches nothing but the managed label of a pod whose lifecycle annotations are invalid, or on UPDATE', () => {
    const mutate = lifecycleMutator(() => [node('v1.30.0')]);
    fc.assert(
      fc.property(podish, fc.constantFrom('CREATE', 'UPDATE'), (pod, operation) => {
        const outcome = handleAdmissionReview({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, operation, object: pod } }, { mutate });
        const response = (outcome as { review?: AdmissionReviewOut }).review?.response;
        if (response?.patch === undefined) return;
        assert.notEqual(readLifecycle(pod as V1Pod).kind, 'not-ours');
        const ops = JSON.parse(Buffer.from(response.patch, 'base64').toString()) as { path: string }[];
        if (operation === 'CREATE' && readLifecycle(pod as V1Pod).kind === 'valid') return;
        for (const op of ops) assert.match(op.path, /^\/metadata\/labels(\/podlife\.dev~1managed)?$/);
      }),
      budget(2500, 1500),
    );
  });
});

describe('fuzz: readLifecycle and evaluatePod', () => {
  it('never throw, report a bounded number of short problems, and never act on an invalid pod', () => {
    fc.assert(
      fc.property(podish, fc.integer({ min: 0, max: 600_000 }), (pod, offset) => {
        const reading = readLifecycle(pod as V1Pod, { execCommands: { drain: ['x'] } });
        if (reading.kind === 'invalid') {
          assert.ok(reading.errors.length <= REPORTED_PROBLEMS_MAX);
          for (const e of reading.errors) {
            assert.ok(e instanceof InvalidAnnotationError);
            assert.ok(e.message.length <= 600, e.message);
          }
        }
        const decision = evaluatePod(pod as V1Pod, { nowMs: T0 + offset, execCommands: { drain: ['x'] } });
        if (reading.kind === 'invalid') assert.equal(decision.action, 'invalid');
        if (reading.kind === 'not-ours') assert.equal(decision.action, 'none');
        assert.ok(JSON.stringify(decision).length <= 32 * 1024);
      }),
      budget(3000, 2000),
    );
  });
});

describe('fuzz: the stop-spec parser', () => {
  const specLike = fc.oneof(
    fc.tuple(fc.constantFrom('signal', 'preset', 'http', 'exec', 'SIGNAL', ''), fc.constantFrom(':', '', '::'), oddString).map(([a, b, c]) => a + b + c),
    oddString,
    fc.tuple(fc.integer({ min: -1, max: 70_000 }), fc.string({ maxLength: 300 })).map(([p, path]) => `http:${p}${path}`),
  );

  it('returns a spec that formats back to a value parsing to the same spec, or throws only InvalidAnnotationError with a short message', () => {
    fc.assert(
      fc.property(specLike, (value) => {
        let spec;
        try {
          spec = parseStopSpec(value, 'stop.podlife.dev/x', { execCommands: { drain: ['x'] } });
        } catch (err) {
          assert.ok(err instanceof InvalidAnnotationError, String(err));
          assert.ok(err.message.length <= 600);
          return;
        }
        assert.deepEqual(parseStopSpec(formatStopSpec(spec), 'k', { execCommands: { drain: ['x'] } }), spec);
        if (spec.kind === 'http') {
          assert.ok(spec.port >= 1 && spec.port <= 65535);
          assert.match(spec.path, /^\/[A-Za-z0-9\-._~/%?=&+,:@]{0,255}$/);
        }
      }),
      budget(2000, 5000),
    );
  });
});
