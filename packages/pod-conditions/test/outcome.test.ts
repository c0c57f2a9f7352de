import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { podOutcome } from '../src/index.js';

const exited = (name: string, exitCode: number): V1ContainerStatus => ({ name, image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode } } });
const running = (name: string): V1ContainerStatus => ({ name, image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: {} } });

function pod(opts: { restartPolicy?: string; annotations?: Record<string, string>; containers: string[]; native?: string[]; statuses: V1ContainerStatus[]; init?: V1ContainerStatus[]; phase?: string }): V1Pod {
  return {
    metadata: { name: 'p', ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: {
      restartPolicy: opts.restartPolicy ?? 'Never',
      containers: opts.containers.map((name) => ({ name })),
      ...(opts.native ? { initContainers: opts.native.map((name) => ({ name, restartPolicy: 'Always' })) } : {}),
    },
    status: { phase: opts.phase ?? 'Running', containerStatuses: opts.statuses, ...(opts.init ? { initContainerStatuses: opts.init } : {}) },
  };
}

describe('podOutcome: a pod judged by its main containers only', () => {
  it('an annotated sidecar killed by SIGTERM (143) does not fail the pod', () => {
    const o = podOutcome(pod({ annotations: { 'role.podlife.dev/istio-proxy': 'sidecar' }, containers: ['app', 'istio-proxy'], statuses: [exited('app', 0), exited('istio-proxy', 143)] }));
    assert.equal(o.outcome, 'succeeded');
    assert.deepEqual(o.setAside, [{ container: 'istio-proxy', why: 'annotated-sidecar', exitCode: 143 }]);
    assert.match(o.reason, /every main container exited 0 \(app\); set aside: istio-proxy \(annotated sidecar, exit 143\)/);
  });

  it('a native sidecar is set aside; the KEP-2872 draft key counts as an annotation', () => {
    const o = podOutcome(pod({ annotations: { 'sidecars.alpha.kubernetes.io/logs': 'sidecar' }, containers: ['app', 'logs'], native: ['proxy'], statuses: [exited('app', 0), running('logs')], init: [running('proxy')] }));
    assert.equal(o.outcome, 'succeeded');
    assert.deepEqual(o.setAside.map((s) => s.why), ['native-sidecar', 'annotated-sidecar']);
  });

  it('a main container that exited non-zero under Never fails the pod, named', () => {
    const o = podOutcome(pod({ containers: ['app', 'worker'], statuses: [exited('app', 2), running('worker')] }));
    assert.equal(o.outcome, 'failed');
    assert.match(o.reason, /app exited 2/);
  });

  it('under OnFailure a non-zero exit is not final: still running', () => {
    const o = podOutcome(pod({ restartPolicy: 'OnFailure', containers: ['app'], statuses: [exited('app', 1)] }));
    assert.equal(o.outcome, 'running');
  });

  it('an unannotated sidecar is a main container: its 143 fails the pod (that is what podlife fixes)', () => {
    assert.equal(podOutcome(pod({ containers: ['app', 'proxy'], statuses: [exited('app', 0), exited('proxy', 143)] })).outcome, 'failed');
  });

  it('with a keystone, its exit decides', () => {
    const o = podOutcome(pod({ annotations: { 'role.podlife.dev/app': 'keystone' }, containers: ['app', 'helper'], statuses: [exited('app', 0), exited('helper', 143)] }));
    assert.equal(o.outcome, 'succeeded');
    assert.match(o.reason, /keystone app exited 0/);
  });

  it('an evicted pod without container results keeps the phase and its reason', () => {
    const p = pod({ containers: ['app'], statuses: [], phase: 'Failed' });
    p.status!.reason = 'Evicted';
    assert.match(podOutcome(p).reason, /^Evicted/);
    assert.equal(podOutcome(p).outcome, 'failed');
  });

  it('property: sidecar exit codes never change the verdict', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 3 }), fc.array(fc.option(fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 }), (mainCodes, sideCodes) => {
        const mains = mainCodes.map((c, i) => exited(`m${i}`, c));
        const sides = sideCodes.map((c, i) => (c === null ? running(`s${i}`) : exited(`s${i}`, c)));
        const annotations = Object.fromEntries(sides.map((s) => [`role.podlife.dev/${s.name}`, 'sidecar']));
        const withSides = podOutcome(pod({ annotations, containers: [...mains, ...sides].map((s) => s.name), statuses: [...mains, ...sides] }));
        const without = podOutcome(pod({ containers: mains.map((s) => s.name), statuses: mains }));
        assert.equal(withSides.outcome, without.outcome);
        assert.equal(withSides.outcome, mainCodes.every((c) => c === 0) ? 'succeeded' : 'failed');
      }),
    );
  });

  it('never throws on an empty or odd pod', () => {
    assert.equal(podOutcome({}).outcome, 'running');
    assert.equal(podOutcome({ spec: { containers: null as never }, status: { containerStatuses: [{ name: 'x' } as never] } }).outcome, 'running');
  });
});
