import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { evaluatePod, hasLifecycleAnnotations, readLifecycle, type Decision } from '../src/index.js';
import { PodBuilder, T0 } from './fixtures.js';

type Role = 'main' | 'keystone' | 'sidecar' | 'alias-sidecar';
type State = 'running' | 'waiting' | { exit: number; at: number };

const containerArb = fc.record({
  role: fc.constantFrom<Role>('main', 'keystone', 'sidecar', 'alias-sidecar'),
  state: fc.oneof(fc.constantFrom<State>('running', 'waiting'), fc.record({ exit: fc.constantFrom(0, 1, 137, 143), at: fc.integer({ min: 0, max: 60_000 }) })),
  stop: fc.constantFrom(undefined, 'signal:TERM', 'preset:istio', 'http:8080/quit', 'signal:NOPE', 'exec:x'),
});

const podArb = fc.record({
  containers: fc.array(containerArb, { minLength: 1, maxLength: 5 }),
  restartPolicy: fc.constantFrom('Never', 'OnFailure', 'Always', undefined),
  annotated: fc.boolean(),
  extra: fc.constantFrom(undefined, ['podlife.dev/on-keystone-exit', 'TerminatePod'], ['podlife.dev/completion', 'phase'], ['role.podlife.dev/ghost', 'sidecar']),
  grace: fc.integer({ min: 0, max: 120 }),
  nowOffset: fc.integer({ min: 0, max: 300_000 }),
});

function build(spec: Spec): { pod: ReturnType<PodBuilder["build"]>; now: number } {
  const b = new PodBuilder().restartPolicy(spec.restartPolicy).grace(spec.grace);
  spec.containers.forEach((c, i) => {
    const name = `c${i}`;
    if (!spec.annotated || c.role === 'main') b.container(name);
    else if (c.role === 'keystone') b.keystone(name);
    else if (c.role === 'sidecar') b.sidecar(name, c.stop);
    else b.container(name).annotate(`sidecars.alpha.kubernetes.io/${name}`, 'sidecar');
    if (c.state === 'waiting') b.waiting(name);
    else if (c.state !== 'running') b.finished(name, c.state.exit, T0 + c.state.at);
  });
  if (spec.annotated && spec.extra) b.annotate(spec.extra[0], spec.extra[1]);
  return { pod: b.build(), now: T0 + spec.nowOffset };
}

type Spec = typeof podArb extends fc.Arbitrary<infer T> ? T : never;
const acts = (d: Decision) => d.action === 'stop' || d.action === 'delete' || d.action === 'phase';

describe('evaluatePod properties', () => {
  it('never acts on a pod without lifecycle annotations', () => {
    fc.assert(
      fc.property(podArb, (spec) => {
        const { pod, now } = build({ ...spec, annotated: false });
        assert.equal(hasLifecycleAnnotations(pod.metadata?.annotations), false);
        assert.deepEqual(evaluatePod(pod, { nowMs: now }), { action: 'none', why: 'not-ours', updates: [] });
      }),
    );
  });

  it('never stops a container (or deletes, or marks) on an invalid pod', () => {
    fc.assert(
      fc.property(podArb, (spec) => {
        const { pod, now } = build(spec);
        if (readLifecycle(pod).kind !== 'invalid') return;
        const d = evaluatePod(pod, { nowMs: now });
        assert.equal(acts(d), false);
        assert.equal(d.action === 'invalid' || d.action === 'none', true);
      }),
    );
  });

  it('never has a sidecar due while a main container can still run (unless that main was given up)', () => {
    fc.assert(
      fc.property(podArb, (spec) => {
        const { pod, now } = build(spec);
        const d = evaluatePod(pod, { nowMs: now });
        if (d.action !== 'stop') return;
        const reading = readLifecycle(pod);
        assert.equal(reading.kind, 'valid');
        if (reading.kind !== 'valid') return;
        const due = d.steps.filter((s) => s.stage === d.currentStage);
        if (!due.some((s) => s.role === 'sidecar')) return;
        for (const c of reading.lifecycle.containers) {
          if (c.role === 'sidecar') continue;
          const st = pod.status?.containerStatuses?.find((s) => s.name === c.name);
          const stillRuns = st?.state?.terminated === undefined && st?.lastState?.terminated === undefined;
          assert.ok(!stillRuns || d.failed.includes(c.name), `sidecar due while main ${c.name} runs`);
        }
      }),
    );
  });

  it('is deterministic: same pod and time, same decision', () => {
    fc.assert(
      fc.property(podArb, (spec) => {
        const { pod, now } = build(spec);
        assert.deepEqual(evaluatePod(pod, { nowMs: now }), evaluatePod(structuredClone(pod), { nowMs: now }));
      }),
    );
  });
});
