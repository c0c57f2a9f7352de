/**
 * The lifecycle route decodes only the members its mutation reads (decode.ts): the answers are
 * those of the whole review, and a body JSON.parse refuses is refused with JSON.parse's error.
 */
import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { admissionRoute, compilePolicy, handleAdmissionReview, lifecycleMutator, withPolicies, type CompiledPolicy, type PolicySource } from '../src/index.js';
import { decodeLifecycleReview, LIFECYCLE_FIELDS, NESTING_MAX } from '../src/webhook/decode.js';
import { podArb } from './pod-arbitrary.js';

const budget = (ms: number, numRuns: number) => ({ numRuns, interruptAfterTimeLimit: ms });
const signal = new AbortController().signal;

const nodes: V1Node[] = [
  { metadata: { name: 'node-1', labels: { pool: 'a' } }, status: { nodeInfo: { kubeletVersion: 'v1.31.0' } as never, declaredFeatures: ['RestartAllContainersOnContainerExits'] } },
  { metadata: { name: 'node-2', labels: { pool: 'b' } }, status: { nodeInfo: { kubeletVersion: 'v1.28.3' } as never } },
];

function policies(): PolicySource {
  const compiled = ['mesh', 'agents'].map((name, i) => {
    const out = compilePolicy({
      metadata: { name },
      spec: { namespaceSelector: { matchLabels: { team: 'a' } }, ...(i === 0 ? { presets: ['well-known'] } : { ownerKinds: ['Job'], containers: [{ name: 'log', containerName: 'log', role: 'sidecar', stop: 'signal:INT' }] }) },
    });
    assert.ok(out.ok);
    return out.policy;
  }) as CompiledPolicy[];
  return { policies: () => compiled, namespaceLabels: (ns) => (ns === 'default' ? { team: 'a' } : undefined) };
}

/** A review of `pod` as the API server sends it, with the members podlife never reads. */
function reviewOf(pod: V1Pod, operation: string, extra: unknown): Buffer {
  const object = { ...pod, spec: { ...pod.spec, volumes: [{ name: 'v', emptyDir: {} }], affinity: extra }, status: { phase: 'Pending', extra } };
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { resource: 'pods' }, operation, namespace: 'default', userInfo: { username: 'x', extra }, object, oldObject: null, options: extra },
    }),
  );
}

/** What the route answers with the whole review decoded. */
function wholeAnswer(mutate: Parameters<typeof handleAdmissionReview>[1]['mutate'], body: Buffer): unknown {
  const outcome = handleAdmissionReview(JSON.parse(body.toString('utf8')), { mutate });
  return outcome.httpStatus === 200 ? { status: 200, body: outcome.review } : { status: 400, body: { error: outcome.error } };
}

/** The reference: `value` with the members `fields` leaves out removed, names JSON.stringify escapes kept. */
function pruned(value: unknown, fields: unknown): unknown {
  if (fields === null || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => pruned(v, fields));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const escaped = JSON.stringify(k) !== `"${k}"`;
    if (escaped) out[k] = v;
    else if (Object.hasOwn(fields as object, k)) out[k] = pruned(v, (fields as Record<string, unknown>)[k]);
  }
  return out;
}

/** JSON.parse's outcome for `text`: the value or the error's message. */
function parseOutcome(decode: () => unknown): { value: unknown } | { error: string } {
  try {
    return { value: decode() };
  } catch (err) {
    assert.ok(err instanceof SyntaxError, `not a SyntaxError: ${String(err)}`);
    return { error: err.message };
  }
}

describe('webhook: the lifecycle route decodes only what its mutation reads', () => {
  it('answers every pod as the whole review would: lifecycle mutation, alone and with policies, CREATE and UPDATE', () => {
    const alone = lifecycleMutator(() => nodes);
    const signals = lifecycleMutator(() => nodes, { stopSignals: true });
    const policed = withPolicies(lifecycleMutator(() => nodes), policies());
    const routes = [alone, signals, policed].map((mutate) => ({ mutate, route: admissionRoute({ mutate }) }));
    // What podArb leaves out and the mutation reads: the node selector, the OS, a container's
    // lifecycle and restart rules, the owner, RestartPod.
    const more = fc.record({
      nodeSelector: fc.constantFrom(undefined, { pool: 'a' }, { pool: 'b' }),
      os: fc.constantFrom(undefined, { name: 'linux' }, { name: 'windows' }),
      lifecycle: fc.constantFrom(undefined, { preStop: { sleep: { seconds: 1 } } }),
      rules: fc.constantFrom(undefined, [{ action: 'RestartAllContainers', exitCodes: { operator: 'NotIn', values: [] } }]),
      restartPod: fc.boolean(),
      owner: fc.boolean(),
      meshImage: fc.boolean(),
      signalSidecar: fc.boolean(),
    });
    fc.assert(
      fc.property(podArb, more, fc.constantFrom('CREATE', 'UPDATE'), fc.jsonValue({ maxDepth: 3 }), (pod, m, operation, extra) => {
        const containers = (pod.spec?.containers ?? []).map((c, i) =>
          i === 0 ? { ...c, ...(m.lifecycle ? { lifecycle: m.lifecycle } : {}), ...(m.rules ? { restartPolicyRules: m.rules } : {}) } : { ...c, ...(m.lifecycle ? { lifecycle: m.lifecycle } : {}), ...(m.meshImage ? { image: 'docker.io/istio/proxyv2:1.24.2' } : {}) },
        );
        const last = containers.length > 1 ? containers.at(-1)?.name : undefined;
        const annotations: Record<string, string> = { ...pod.metadata?.annotations, ...(m.restartPod ? { 'podlife.dev/on-keystone-exit': 'RestartPod' } : {}) };
        if (m.signalSidecar && last) Object.assign(annotations, { [`role.podlife.dev/${last}`]: 'sidecar', [`stop.podlife.dev/${last}`]: 'signal:INT' });
        const metadata = { ...pod.metadata, annotations, ...(m.owner ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'j', controller: true }] } : {}) };
        const spec = { ...pod.spec, containers, ...(m.os ? { os: m.os } : {}), ...(m.nodeSelector ? { nodeName: undefined, nodeSelector: m.nodeSelector } : {}) } as V1Pod['spec'];
        const body = reviewOf({ ...pod, metadata, spec }, operation, extra);
        for (const { mutate, route } of routes) assert.deepEqual(route(body, signal), wholeAnswer(mutate, body));
      }),
      budget(4000, 300),
    );
  });

  it('converts a sidecar with a stop signal and a lifecycle of its own as the whole review would', () => {
    const mutate = lifecycleMutator(() => nodes, { stopSignals: true });
    const pod: V1Pod = {
      metadata: { name: 'p', annotations: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'signal:INT' } },
      spec: { nodeName: 'node-1', containers: [{ name: 'app', env: [{ name: 'A', value: 'b' }] }, { name: 'proxy', lifecycle: { preStop: { sleep: { seconds: 1 } } } }] },
    };
    const body = reviewOf(pod, 'CREATE', 0);
    const answer = admissionRoute({ mutate })(body, signal) as { body: { response: { patch: string } } };
    assert.deepEqual(answer, wholeAnswer(mutate, body));
    assert.match(Buffer.from(answer.body.response.patch, 'base64').toString(), /initContainers\/0\/lifecycle\/stopSignal/);
  });

  it('decodes a review to JSON.parse of it without the members it leaves out', () => {
    const review = fc.record({
      apiVersion: fc.constant('admission.k8s.io/v1'),
      request: fc.record({ uid: fc.string(), userInfo: fc.jsonValue({ maxDepth: 2 }), object: fc.record({ metadata: fc.jsonValue({ maxDepth: 2 }), spec: fc.record({ containers: fc.array(fc.dictionary(fc.constantFrom('name', 'env', 'image', 'lifecycle', 'args', 'x"y'), fc.jsonValue({ maxDepth: 2 }))), volumes: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }) }, { requiredKeys: [] }) }, { requiredKeys: [] }),
    });
    fc.assert(
      fc.property(fc.oneof(review, fc.jsonValue({ maxDepth: 4 })), fc.constantFrom(0, 2), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        assert.deepEqual(decodeLifecycleReview(Buffer.from(text)), pruned(JSON.parse(text), LIFECYCLE_FIELDS));
      }),
      budget(4000, 500),
    );
  });

  it('keeps a member whose name holds an escape, and the last of duplicate names, as JSON.parse does', () => {
    const text = '{"request":{"uid":"a","uid":"b","obj\\u0065ct":{"spec":{"volumes":[1]}},"userInfo":{"x":1}}}';
    assert.deepEqual(decodeLifecycleReview(Buffer.from(text)), { request: { uid: 'b', object: { spec: { volumes: [1] } } } });
  });

  it('refuses what JSON.parse refuses, with its error, wherever the fault is (in a member it leaves out too)', () => {
    const bad = [
      '',
      ' ',
      '{"request":{"userInfo":{"x":tru}}}',
      '{"request":{"userInfo":[01]}}',
      '{"request":{"userInfo":[1,]}}',
      '{"request":{"userInfo":{"a":1,}}}',
      '{"request":{"userInfo":"\\x"}}',
      '{"request":{"userInfo":"\\u12G4"}}',
      '{"request":{"userInfo":"a\tb"}}',
      '{"request":{"userInfo":-}}',
      '{"request":{"userInfo":1.}}',
      '{"request":{"userInfo":1e}}',
      '{"request":{"userInfo":{"a" 1}}}',
      '{"request":{"uid":"a"}} x',
      '{"request":{"uid":"a"}',
      '\ufeff{}',
      '{"a":"unterminated',
    ];
    for (const text of bad) {
      const body = Buffer.from(text);
      const expected = parseOutcome(() => JSON.parse(text));
      assert.ok('error' in expected, `JSON.parse accepts ${text}`);
      assert.deepEqual(parseOutcome(() => decodeLifecycleReview(body)), expected, text);
    }
  });

  it('gives the same outcome as JSON.parse on arbitrary text, damaged JSON included', () => {
    const damaged = fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.constantFrom('', '"', ',', '}', ']', '\\', 'x', '0', ' ', '\u0001')).map(([json, at, insert]) => {
      const i = json.length === 0 ? 0 : at % json.length;
      return json.slice(0, i) + insert + json.slice(i + 1);
    });
    fc.assert(
      fc.property(fc.oneof(damaged, fc.string({ maxLength: 30 })), (text) => {
        const expected = parseOutcome(() => JSON.parse(text));
        const got = parseOutcome(() => decodeLifecycleReview(Buffer.from(text)));
        if ('error' in expected) assert.deepEqual(got, expected);
        else assert.deepEqual(got, { value: pruned(expected.value, LIFECYCLE_FIELDS) });
      }),
      budget(4000, 1000),
    );
  });

  it(`hands a body nested deeper than ${NESTING_MAX} to JSON.parse whole, without overflowing the stack`, () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const text = `{"request":{"userInfo":${deep},"uid":"u"}}`;
    const { request } = decodeLifecycleReview(Buffer.from(text)) as { request: { uid: string; userInfo: unknown } };
    assert.equal(request.uid, 'u');
    // Whole: the member the pruner leaves out is there, all 20,000 levels of it.
    let depth = 0;
    for (let v = request.userInfo; Array.isArray(v); v = v[0]) depth++;
    assert.equal(depth, 20_000);
    assert.throws(() => decodeLifecycleReview(Buffer.from('['.repeat(20_000))), SyntaxError);
  });

  it('gives any other mutation the whole review', () => {
    let seen: unknown;
    const route = admissionRoute({
      mutate: (pod) => {
        seen = pod.spec?.volumes;
        return [];
      },
    });
    const pod: V1Pod = { metadata: { name: 'p' }, spec: { containers: [{ name: 'app' }] } };
    route(reviewOf(pod, 'CREATE', 1), signal);
    assert.deepEqual(seen, [{ name: 'v', emptyDir: {} }]);
    const custom = withPolicies((p) => {
      seen = p.status;
      return [];
    }, policies());
    admissionRoute({ mutate: custom })(reviewOf(pod, 'CREATE', 2), signal);
    assert.deepEqual(seen, { phase: 'Pending', extra: 2 });
  });
});
