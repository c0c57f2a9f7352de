import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { JsonPatchOp } from '@podlife/core';
import { applyJsonPatch } from '@podlife/core/testing';
import { describe, it } from 'mocha';
import { evaluatePod, keepLifecycleFields, lifecycleMutator, handleAdmissionReview, nativeMechanismNotes } from '../src/index.js';
import { nativeFindings, nativeMechanismsUpdate } from '../src/native-findings.js';
import { nativeStop } from '../src/webhook/native-stop.js';
import { planNativeSidecars } from '../src/webhook/patches.js';
import { T0, pod } from './fixtures.js';

const nodes: V1Node[] = [{ metadata: { name: 'n' }, status: { nodeInfo: { kubeletVersion: 'v1.37.2' } as never } }];

/** Applies a JSON patch as the API server does. */
const apply = (p: V1Pod, ops: readonly JsonPatchOp[]): V1Pod => applyJsonPatch(p, ops);

describe('conversion keeps the stop spec meaning (ADR 0211)', () => {
  it('signal:TERM needs nothing native; other signals need stop signals in the cluster, and not a Windows pod', () => {
    assert.deepEqual(nativeStop({ kind: 'signal', signal: 'TERM' }), { ok: true });
    assert.deepEqual(nativeStop({ kind: 'signal', signal: 'USR1' }, { stopSignals: true }), { ok: true, stopSignal: 'SIGUSR1' });
    const off = nativeStop({ kind: 'signal', signal: 'USR1' });
    assert.ok(!off.ok && /ContainerStopSignals/.test(off.why));
    const windows = nativeStop({ kind: 'signal', signal: 'INT' }, { stopSignals: true, os: 'windows' });
    assert.ok(!windows.ok && /Windows/.test(windows.why));
  });

  for (const [preset, why] of [
    ['istio', /405 .*POST.*403/],
    ['envoy', /POST only/],
    ['linkerd', /405 .*POST.*403/],
    ['cloudsql-proxy', /localhost only/],
  ] as const) {
    it(`preset:${preset} has no preStop equivalent, and says why`, () => {
      const r = nativeStop({ kind: 'http', port: 1, path: '/q', preset });
      assert.ok(!r.ok);
      assert.match(r.why, /POSTs to 127\.0\.0\.1.*preStop httpGet hook sends GET from the node to the pod IP/);
      assert.match(r.why, why);
    });
  }

  it('http: and exec: have no native equivalent', () => {
    assert.equal(nativeStop({ kind: 'http', port: 8080, path: '/quit' }).ok, false);
    assert.equal(nativeStop({ kind: 'exec', name: 'drain' }).ok, false);
  });

  it('converts only the sidecars whose stop spec has a native form, keeping the others with the reason', () => {
    const p = pod().container('app').sidecar('log').sidecar('proxy', 'preset:istio').build();
    const plan = planNativeSidecars(p, { nodes });
    assert.deepEqual(plan.converted, ['log']);
    assert.deepEqual(plan.kept?.map((k) => k.container), ['proxy']);
    const after = apply(p, plan.ops);
    assert.deepEqual(after.spec?.containers.map((c) => c.name), ['app', 'proxy']);
    assert.deepEqual(after.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['log', 'Always']]);
  });

  it('with stop signals in the cluster, signal:USR1 becomes lifecycle.stopSignal and the pod names its OS', () => {
    const p = pod().container('app').sidecar('proxy', 'signal:USR1').build();
    const plan = planNativeSidecars(p, { nodes, stopSignals: true });
    const after = apply(p, plan.ops);
    assert.equal(after.spec?.initContainers?.[0]?.lifecycle?.stopSignal, 'SIGUSR1');
    assert.equal(after.spec?.os?.name, 'linux');
    assert.deepEqual(plan.stopSignals, ['proxy']);
    assert.deepEqual(planNativeSidecars(p, { nodes }).converted, [], 'without them, not converted');
  });

  it('a stop signal joins the lifecycle the sidecar already has, and each moved sidecar gets its own, at its new index', () => {
    const p = pod().container('app').sidecar('log', 'signal:INT').init('setup').sidecar('proxy', 'signal:USR1').build();
    p.spec!.containers[2]!.lifecycle = { preStop: { sleep: { seconds: 5 } } };
    const after = apply(p, planNativeSidecars(p, { nodes, stopSignals: true }).ops);
    assert.deepEqual(
      after.spec?.initContainers?.map((c) => [c.name, c.restartPolicy ?? 'none', c.lifecycle ?? 'none']),
      [
        ['log', 'Always', { stopSignal: 'SIGINT' }],
        ['proxy', 'Always', { preStop: { sleep: { seconds: 5 } }, stopSignal: 'SIGUSR1' }],
        ['setup', 'none', 'none'],
      ],
    );
    assert.deepEqual(after.spec?.containers.map((c) => c.name), ['app']);
  });

  it('the webhook warns about a kept sidecar and records it', () => {
    const p = pod().container('app').sidecar('proxy', 'preset:linkerd').build();
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u', kind: { group: '', version: 'v1', kind: 'Pod' }, operation: 'CREATE', object: p } };
    const out = handleAdmissionReview(review, { mutate: lifecycleMutator(() => nodes) });
    assert.ok(out.httpStatus === 200);
    assert.match(out.review.response.warnings?.join() ?? '', /sidecar proxy is not made native: preset:linkerd/);
    const ops = JSON.parse(Buffer.from(out.review.response.patch ?? '', 'base64').toString()) as { path: string; value: unknown }[];
    assert.deepEqual(ops.find((o) => o.path === '/metadata/annotations/native.podlife.dev~1proxy')?.value, 'unconverted');
  });
});

describe('what others undo (native-findings)', () => {
  /** The pod as the webhook leaves it: sidecar native with a stop signal, keystone with the restart rule. */
  function admitted(): V1Pod {
    const p = pod().keystone('app').sidecar('proxy', 'signal:USR1').sidecar('istio', 'preset:istio').annotate('podlife.dev/on-keystone-exit', 'RestartPod').build();
    const mutate = lifecycleMutator(() => [{ ...nodes[0], status: { ...nodes[0]!.status, declaredFeatures: ['RestartAllContainersOnContainerExits'] } }], { stopSignals: true });
    const result = mutate(p, { uid: 'u', operation: 'CREATE' });
    return apply(p, Array.isArray(result) ? result : ((result as { ops?: never[] }).ops ?? []));
  }

  it('a pod as the webhook left it: the sidecar kept unconverted is reported (Normal), nothing else', () => {
    const p = admitted();
    assert.deepEqual(nativeFindings(p, { stopSignals: true }).map((f) => [f.container, f.reason, f.warning]), [['istio', 'SidecarNotConverted', false]]);
    const update = nativeMechanismsUpdate(p, { stopSignals: true });
    assert.equal(update?.condition.status, 'True');
    assert.deepEqual(update?.events.map((e) => e.type), ['Normal']);
  });

  it('a native sidecar that lost restartPolicy: Always (a webhook after ours) is a Warning naming the cause', () => {
    const p = admitted();
    delete p.spec!.initContainers![0]!.restartPolicy;
    const f = nativeFindings(p, { stopSignals: true }).find((x) => x.reason === 'NativeSidecarUndone');
    assert.equal(f?.container, 'proxy');
    assert.match(f?.message ?? '', /lost restartPolicy: Always \(a mutating webhook after podlife's/);
    const update = nativeMechanismsUpdate(p, { stopSignals: true });
    assert.equal(update?.condition.status, 'False');
    assert.ok(update?.events.some((e) => e.type === 'Warning' && e.reason === 'NativeSidecarUndone'));
  });

  it('stripped restart rules and stop signals are Warnings too', () => {
    const p = admitted();
    delete p.spec!.containers.find((c) => c.name === 'app')!.restartPolicyRules;
    delete p.spec!.initContainers![0]!.lifecycle;
    assert.deepEqual(nativeFindings(p, { stopSignals: true }).filter((f) => f.warning).map((f) => [f.container, f.reason]), [
      ['app', 'RestartRuleStripped'],
      ['proxy', 'StopSignalStripped'],
    ]);
  });

  it('a stop signal the node does not apply (no signal in effect reported for the running sidecar) is a Warning', () => {
    const p = admitted();
    p.status!.initContainerStatuses = [{ name: 'proxy', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } }];
    const f = nativeFindings(p, { stopSignals: true }).find((x) => x.reason === 'StopSignalNotApplied');
    assert.match(f?.message ?? '', /asks for stop signal SIGUSR1 and node .* reports none in effect/);
    p.status!.initContainerStatuses[0]!.stopSignal = 'SIGUSR1';
    assert.equal(nativeFindings(p, { stopSignals: true }).some((x) => x.reason === 'StopSignalNotApplied'), false);
    assert.equal(keepLifecycleFields(p).status?.initContainerStatuses?.[0]?.stopSignal, 'SIGUSR1');
  });

  it('the cached view keeps what the findings read', () => {
    const p = admitted();
    delete p.spec!.containers.find((c) => c.name === 'app')!.restartPolicyRules;
    assert.deepEqual(nativeFindings(keepLifecycleFields(p), { stopSignals: true }), nativeFindings(p, { stopSignals: true }));
    assert.deepEqual(nativeFindings(keepLifecycleFields(admitted()), { stopSignals: true }), nativeFindings(admitted(), { stopSignals: true }));
  });

  it('a pod the webhook never changed has no finding and no condition', () => {
    const p = pod().container('app').sidecar('proxy').build();
    assert.deepEqual(nativeFindings(p), []);
    assert.equal(nativeMechanismsUpdate(p), undefined);
  });

  /** The NativeMechanisms update among what evaluatePod decides to write. */
  const decidedNative = (p: V1Pod) => evaluatePod(p, { nowMs: T0, stopSignals: true }).updates.find((u) => u.condition.type === 'podlife.dev/NativeMechanisms');

  it('evaluatePod decides the NativeMechanisms update of a pod the webhook changed, valid or not, and none for another pod', () => {
    const p = admitted();
    delete p.spec!.initContainers![0]!.restartPolicy;
    assert.deepEqual(decidedNative(p), nativeMechanismsUpdate(p, { stopSignals: true }));
    assert.equal(decidedNative(p)?.condition.status, 'False');
    const invalid = admitted();
    invalid.metadata!.annotations!['stop.podlife.dev/app'] = 'signal:NOPE';
    assert.equal(evaluatePod(invalid, { nowMs: T0, stopSignals: true }).action, 'invalid');
    assert.deepEqual(decidedNative(invalid), nativeMechanismsUpdate(invalid, { stopSignals: true }));
    assert.equal(decidedNative(pod().keystone('app').sidecar('proxy').build()), undefined);
  });

  it('evaluatePod reads a record the annotations inherit as the NativeMechanisms check does', () => {
    const p = pod().keystone('app').container('worker').sidecar('proxy').build();
    p.metadata!.annotations = Object.assign(Object.create({ 'native.podlife.dev/proxy': 'sidecar' }) as Record<string, string>, p.metadata!.annotations);
    const update = nativeMechanismsUpdate(p, { stopSignals: true });
    assert.equal(update?.condition.message, 'in place: proxy (sidecar)');
    assert.deepEqual(decidedNative(p), update);
  });
});

describe('podlife explain: native mechanism notes', () => {
  it('names restart rules and whether the last exit matched, native sidecars and their state, stop signals asked for and in effect', () => {
    const p = pod().keystone('app').nativeSidecar('proxy').finished('app', 3).build();
    p.spec!.containers[0] = { ...p.spec!.containers[0]!, restartPolicy: 'Never', restartPolicyRules: [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [3] } }] };
    p.spec!.initContainers![0]!.lifecycle = { stopSignal: 'SIGUSR1' };
    p.status!.initContainerStatuses = [{ name: 'proxy', image: '', imageID: '', ready: true, restartCount: 0, started: true, state: { running: {} } }];
    const notes = nativeMechanismNotes(p);
    assert.deepEqual(notes, [
      'native sidecar proxy: running (started)',
      'container proxy: stop signal SIGUSR1; the kubelet reports no stop signal in effect: the node or its runtime does not apply it (ContainerStopSignals off, or a runtime without stop signals), so the default signal is sent',
      'container app: restart rules RestartAllContainers on exit code in 3; its last exit (3) matched RestartAllContainers on exit code in 3',
    ]);
    (p.status!.initContainerStatuses[0] as { stopSignal?: string }).stopSignal = 'SIGUSR1';
    assert.match(nativeMechanismNotes(p)[1] ?? '', /the kubelet reports SIGUSR1 in effect/);
  });

  it('prints the findings, warnings marked', () => {
    const p = pod().keystone('app').annotate('native.podlife.dev/app', 'restart-all-containers').build();
    assert.match(nativeMechanismNotes(p).join('\n'), /^warning: keystone app was given a RestartAllContainers restart rule/m);
  });
});
