import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Node } from '@kubernetes/client-node';
import { applyJsonPatch } from '@podlife/core/testing';
import { describe, it } from 'mocha';
import { type JsonPatchOp, createAdmissionHandler, formatStopSpec, handleAdmissionReview, lifecycleMutator, markContainerOps, markRoleOps, nativeSidecarOps, parseStopSpec, setStopSpecOps, lifecycleAnnotationOps } from '../src/index.js';
import { nodesSupportNativeSidecars, parseKubeletVersion } from '../src/kubelet-version.js';
import { planNativeSidecars, managedLabelOps } from '../src/webhook/patches.js';
import { pod } from './fixtures.js';

const node = (v: string): V1Node => ({ status: { nodeInfo: { kubeletVersion: v } as never } });

describe('kubelet versions', () => {
  for (const [text, want] of [
    ['v1.29.3-gke.1', '1.29.3'],
    ['v1.30.0+k3s1', '1.30.0'],
    ['v1.28.5-eks-5e0fdde', '1.28.5'],
    ['1.31', '1.31.0'],
  ] as const) {
    it(`reads ${text}`, () => {
      const v = parseKubeletVersion(text);
      assert.equal(v && `${v.major}.${v.minor}.${v.patch}`, want);
    });
  }
  it('rejects what it cannot read', () => {
    assert.equal(parseKubeletVersion('latest'), undefined);
    assert.equal(parseKubeletVersion(''), undefined);
    assert.equal(parseKubeletVersion(undefined), undefined);
  });
  it('native sidecars need every node at >= 1.29', () => {
    assert.equal(nodesSupportNativeSidecars([node('v1.29.0'), node('v1.31.2-gke.1')]), true);
    assert.equal(nodesSupportNativeSidecars([node('v1.29.0'), node('v1.28.9')]), false);
    assert.equal(nodesSupportNativeSidecars([node('v1.30.0'), node('garbage')]), false);
    assert.equal(nodesSupportNativeSidecars([]), false);
  });
});

describe('stop specs', () => {
  for (const value of ['signal:TERM', 'signal:USR2', 'preset:istio', 'preset:cloudsql-proxy', 'http:8080/quit', 'exec:drain']) {
    it(`round-trips ${value}`, () => assert.equal(formatStopSpec(parseStopSpec(value, 'k')), value));
  }
  it('resolves presets to their quit endpoints', () => {
    assert.deepEqual(parseStopSpec('preset:linkerd', 'k'), { kind: 'http', port: 4191, path: '/shutdown', preset: 'linkerd' });
    assert.deepEqual(parseStopSpec('preset:envoy', 'k'), { kind: 'http', port: 9901, path: '/quitquitquit', preset: 'envoy' });
  });
  for (const bad of ['', 'signal', 'signal:term', 'signal:SEGV', 'http:', 'http:0/x', 'http:8080/a b', "http:8080/$(reboot)", 'exec:', 'exec:Drain', 'kill:TERM']) {
    it(`rejects ${JSON.stringify(bad)} naming the key`, () => {
      assert.throws(() => parseStopSpec(bad, 'stop.podlife.dev/proxy'), (e: Error) => e.name === 'InvalidAnnotationError' && e.message.includes('stop.podlife.dev/proxy'));
    });
  }
});

const managedLabels = { op: 'add', path: '/metadata/labels', value: { 'podlife.dev/managed': 'true' } };

describe('JSON patch builders', () => {
  it('creates /metadata/annotations when absent', () => {
    assert.deepEqual(markRoleOps(pod().container('app').container('proxy').build(), 'proxy', 'sidecar'), [
      { op: 'add', path: '/metadata/annotations', value: { 'role.podlife.dev/proxy': 'sidecar' } },
      managedLabels,
    ]);
  });
  it('escapes / in the key as ~1', () => {
    const p = pod().container('app').container('proxy').annotate('x', 'y').build();
    assert.deepEqual(markRoleOps(p, 'proxy', 'sidecar'), [{ op: 'add', path: '/metadata/annotations/role.podlife.dev~1proxy', value: 'sidecar' }, managedLabels]);
  });
  it('several marks in one op do not overwrite each other', () => {
    const ops = lifecycleAnnotationOps(pod().container('a').build(), { 'role.podlife.dev/a': 'keystone', 'stop.podlife.dev/a': 'signal:INT' });
    assert.deepEqual(ops.map((o) => o.path), ['/metadata/annotations', '/metadata/labels']);
  });
  it('marks a role and a stop spec on a pod without annotations in one op that keeps both', () => {
    const ops = markContainerOps(pod().container('app').container('proxy').build(), 'proxy', { role: 'sidecar', stop: 'preset:envoy' });
    assert.deepEqual(ops, [
      { op: 'add', path: '/metadata/annotations', value: { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'preset:envoy' } },
      managedLabels,
    ]);
    assert.throws(() => markContainerOps(pod().container('proxy').build(), 'proxy', { role: 'sidecar', stop: 'http:0' }), /stop\.podlife\.dev\/proxy/);
  });
  describe('the managed label (podlife.dev/managed: "true")', () => {
    it('is added beside labels the pod already has, and not again when present', () => {
      const labelled = { ...pod().container('a').build(), metadata: { name: 'p', labels: { app: 'x' } } };
      assert.deepEqual(managedLabelOps(labelled), [{ op: 'add', path: '/metadata/labels/podlife.dev~1managed', value: 'true' }]);
      const managed = { ...labelled, metadata: { ...labelled.metadata, labels: { 'podlife.dev/managed': 'true' } } };
      assert.deepEqual(setStopSpecOps(managed, 'a', 'signal:INT').map((o) => o.path), ['/metadata/annotations']);
    });
    it('is set by every builder that writes lifecycle annotations', () => {
      const p = pod().container('a').build();
      for (const ops of [markRoleOps(p, 'a', 'keystone'), setStopSpecOps(p, 'a', 'signal:INT'), markContainerOps(p, 'a', { role: 'keystone' }), lifecycleAnnotationOps(p, { 'podlife.dev/completion': 'phase' })]) {
        assert.deepEqual(ops.at(-1), managedLabels);
      }
    });
    it('is set by the webhook on any pod with lifecycle annotations, valid or not, and on no other', () => {
      const mutate = lifecycleMutator(() => []);
      const paths = (p: ReturnType<typeof pod>, operation = 'CREATE'): string[] => {
        const out = handleAdmissionReview(review(p.build(), { operation }), { mutate });
        return out.httpStatus === 200 && out.review.response.patch
          ? (JSON.parse(Buffer.from(out.review.response.patch, 'base64').toString()) as { path: string }[]).map((o) => o.path)
          : [];
      };
      assert.deepEqual(paths(pod().container('app').sidecar('proxy')), ['/metadata/labels']);
      assert.deepEqual(paths(pod().container('app').sidecar('proxy'), 'UPDATE'), ['/metadata/labels']);
      assert.deepEqual(paths(pod().container('app').annotate('role.podlife.dev/ghost', 'sidecar')), ['/metadata/labels']);
      assert.deepEqual(paths(pod().container('app')), []);
    });
  });

  it('validates a stop spec given as text', () => {
    const p = pod().container('proxy').build();
    assert.deepEqual(setStopSpecOps(p, 'proxy', 'preset:istio')[0]?.value, { 'stop.podlife.dev/proxy': 'preset:istio' });
    assert.throws(() => setStopSpecOps(p, 'proxy', 'signal:BOOM'), /stop\.podlife\.dev\/proxy/);
    assert.throws(() => markRoleOps(p, 'nope', 'sidecar'), /role\.podlife\.dev\/nope/);
  });

  describe('native sidecar conversion', () => {
    const newNodes = [node('v1.29.3-gke.1'), node('v1.30.1')];
    it('moves sidecars first into initContainers with restartPolicy Always, in spec order', () => {
      const p = pod().sidecar('log').container('app').sidecar('proxy').init('setup').build();
      const ops = nativeSidecarOps(p, { nodes: newNodes });
      // From the back, each to the front: the spec's own indices hold, and the sidecars keep their order.
      assert.deepEqual(
        ops.map((o) => `${o.op} ${o.from ?? ''} ${o.path} ${o.value === undefined ? '' : JSON.stringify(o.value)}`),
        [
          'move /spec/containers/2 /spec/initContainers/0 ',
          'move /spec/containers/0 /spec/initContainers/0 ',
          'add  /spec/initContainers/0/restartPolicy "Always"',
          'add  /spec/initContainers/1/restartPolicy "Always"',
        ],
      );
      const after = applyJsonPatch(p, ops);
      assert.deepEqual(after.spec?.initContainers?.map((c) => [c.name, c.restartPolicy ?? 'none']), [['log', 'Always'], ['proxy', 'Always'], ['setup', 'none']]);
      assert.deepEqual(after.spec?.containers.map((c) => c.name), ['app']);
    });
    it('creates initContainers when the pod has none, and never restates a container', () => {
      const proxy = { name: 'proxy', image: 'proxy:1', args: Array.from({ length: 200 }, (_, i) => `--flag-${i}`) };
      const p = pod().container('app').sidecar('proxy').build();
      p.spec!.containers[1] = proxy;
      const ops = nativeSidecarOps(p, { nodes: newNodes });
      assert.deepEqual(ops[0], { op: 'add', path: '/spec/initContainers', value: [] });
      assert.ok(JSON.stringify(ops).length < 300, JSON.stringify(ops));
      assert.deepEqual(applyJsonPatch(p, ops).spec?.initContainers, [{ ...proxy, restartPolicy: 'Always' }]);
    });
    it('auto: no conversion when one node is older than 1.29', () => {
      const plan = planNativeSidecars(pod().container('app').sidecar('proxy').build(), { nodes: [...newNodes, node('v1.28.9')] });
      assert.deepEqual(plan.ops, []);
      assert.match(plan.why ?? '', /1\.29/);
    });
    it('"true" converts regardless of nodes; "false" never', () => {
      assert.notEqual(nativeSidecarOps(pod().container('app').sidecar('proxy').annotate('podlife.dev/native-sidecars', 'true').build()).length, 0);
      assert.deepEqual(nativeSidecarOps(pod().container('app').sidecar('proxy').annotate('podlife.dev/native-sidecars', 'false').build(), { nodes: newNodes }), []);
    });
    it('never converts an invalid pod', () => {
      assert.deepEqual(nativeSidecarOps(pod().sidecar('a').sidecar('b').build(), { nodes: newNodes }), []);
    });
  });
});

const review = (object: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u-1', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object, ...extra },
});

describe('handleAdmissionReview', () => {
  const mutate = lifecycleMutator(() => [node('v1.30.0')]);

  it('answers with a base64 JSONPatch and echoes the uid', () => {
    const out = handleAdmissionReview(review(pod().container('app').sidecar('proxy').build()), { mutate });
    assert.equal(out.httpStatus, 200);
    if (out.httpStatus !== 200) return;
    assert.equal(out.review.response.uid, 'u-1');
    assert.equal(out.review.response.allowed, true);
    assert.equal(out.review.response.patchType, 'JSONPatch');
    const ops = JSON.parse(Buffer.from(out.review.response.patch ?? '', 'base64').toString()) as { op: string; path: string }[];
    // Move the sidecar, make it native, record that podlife did, label the pod.
    assert.deepEqual(ops.map((o) => `${o.op} ${o.path}`), [
      'add /spec/initContainers',
      'move /spec/initContainers/0',
      'add /spec/initContainers/0/restartPolicy',
      'add /metadata/annotations/native.podlife.dev~1proxy',
      'add /metadata/labels',
    ]);
  });

  it('encodes any patch as the base64 of its UTF-8 JSON, whatever its size or characters', () => {
    const decoded = (ops: readonly JsonPatchOp[]): unknown => {
      const out = handleAdmissionReview(review(pod().container('a').build()), { mutate: () => ops });
      assert.ok(out.httpStatus === 200 && out.review.response.patch !== undefined);
      return JSON.parse(Buffer.from(out.review.response.patch, 'base64').toString('utf8'));
    };
    const small: JsonPatchOp[] = [{ op: 'add', path: '/metadata/annotations/note', value: 'caf\u00e9 \u2014 \ud83d\ude80 \u65e5\u672c' }];
    // Past what the kept buffer holds (a third of 16 KiB in UTF-16 units), in one- and multi-byte characters.
    const large: JsonPatchOp[] = [{ op: 'add', path: '/metadata/annotations/a', value: 'x'.repeat(40_000) }];
    const largeWide: JsonPatchOp[] = [{ op: 'add', path: '/metadata/annotations/b', value: '\u00e9\u65e5'.repeat(4_000) }];
    // At the edge: JSON of 5,461 UTF-16 units (the most the kept buffer takes), most of them 3 bytes in UTF-8, and one unit more.
    const edge = (units: number): JsonPatchOp[] => [{ op: 'add', path: '/x', value: '\u65e5'.repeat(units - 37) }];
    assert.equal(JSON.stringify(edge(5_461)).length, 5_461);
    for (const ops of [small, large, small, largeWide, edge(5_461), edge(5_462), small]) assert.deepEqual(decoded(ops), ops);
    // One answer is not overwritten by the next: both go through the kept buffer, the second over the first's bytes.
    const first = handleAdmissionReview(review(pod().container('a').build()), { mutate: () => small });
    handleAdmissionReview(review(pod().container('a').build()), { mutate: () => edge(5_461) });
    assert.ok(first.httpStatus === 200);
    assert.deepEqual(JSON.parse(Buffer.from(first.review.response.patch ?? '', 'base64').toString('utf8')), small);
  });

  it('allows without a patch when there is nothing to do', () => {
    const out = handleAdmissionReview(review(pod().container('app').build()), { mutate });
    assert.ok(out.httpStatus === 200 && out.review.response.patch === undefined && out.review.response.allowed);
  });

  it('allows an invalid pod with warnings naming the key', () => {
    const out = handleAdmissionReview(review(pod().container('app').annotate('role.podlife.dev/ghost', 'sidecar').build()), { mutate });
    assert.ok(out.httpStatus === 200);
    if (out.httpStatus === 200) assert.match(out.review.response.warnings?.[0] ?? '', /role\.podlife\.dev\/ghost/);
  });

  it('allows unchanged when the mutator throws', () => {
    const out = handleAdmissionReview(review(pod().container('a').build()), { mutate: () => { throw new Error('boom'); } });
    assert.ok(out.httpStatus === 200 && out.review.response.allowed && /boom/.test(out.review.response.warnings?.[0] ?? ''));
  });

  it('can deny when a mutator asks to', () => {
    const out = handleAdmissionReview(review(pod().container('a').build()), { mutate: () => ({ deny: 'no' }) });
    assert.ok(out.httpStatus === 200 && !out.review.response.allowed && out.review.response.status?.message === 'no');
  });

  it('leaves non-pods alone', () => {
    const out = handleAdmissionReview(review({}, { kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }), { mutate });
    assert.ok(out.httpStatus === 200 && out.review.response.allowed && out.review.response.patch === undefined);
  });

  for (const [name, body] of [
    ['null', null],
    ['an array', []],
    ['the wrong apiVersion', { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'x' } }],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }],
    ['no uid', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: {} }],
  ] as const) {
    it(`answers 400 for ${name}`, () => assert.equal(handleAdmissionReview(body, { mutate }).httpStatus, 400));
  }
});

describe('createAdmissionHandler over HTTP', () => {
  async function withServer(fn: (url: string) => Promise<void>, opts: { maxBodyBytes?: number; timeoutMs?: number } = {}): Promise<void> {
    const server = http.createServer(createAdmissionHandler({ mutate: lifecycleMutator(() => [node('v1.30.0')]), ...opts }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mutate-pods`);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }
  const post = (url: string, body: string, type = 'application/json') => fetch(url, { method: 'POST', body, headers: { 'content-type': type } });

  it('answers a review', () =>
    withServer(async (url) => {
      const res = await post(url, JSON.stringify(review(pod().container('app').sidecar('proxy').build())));
      assert.equal(res.status, 200);
      assert.equal(((await res.json()) as { response: { uid: string } }).response.uid, 'u-1');
    }));

  it('400 for malformed JSON', () => withServer(async (url) => assert.equal((await post(url, '{nope')).status, 400)));
  it('415 for another content type', () => withServer(async (url) => assert.equal((await post(url, '{}', 'text/plain')).status, 415)));
  it('405 for GET', () => withServer(async (url) => assert.equal((await fetch(url)).status, 405)));
  it('413 past the body limit', () =>
    withServer(async (url) => assert.equal((await post(url, JSON.stringify({ pad: 'x'.repeat(5000) }))).status, 413), { maxBodyBytes: 1024 }));
  it('408 when the body never arrives', () =>
    withServer(
      (url) =>
        new Promise<void>((resolve, reject) => {
          const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': '100' } }, (res) => {
            try {
              assert.equal(res.statusCode, 408);
              res.resume();
              resolve();
            } catch (e) {
              reject(e as Error);
            }
          });
          req.on('error', () => undefined);
          req.write('{');
        }),
      { timeoutMs: 100 },
    ));
});
