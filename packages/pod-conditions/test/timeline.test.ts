import assert from 'node:assert/strict';
import { podTimeline } from '../src/index.js';
import { event, ms, pod, startedPod } from './fixtures.js';

const keys = (t: ReturnType<typeof podTimeline>) => t.stages.map((s) => `${s.key}:${s.state}`);

describe('podTimeline', () => {
  it('orders reached stages by time with durations from the previous stage', () => {
    const t = podTimeline(startedPod().initContainer('setup').condition('Initialized', 'True', 4).build());
    assert.deepEqual(keys(t), ['scheduled:reached', 'sandbox:reached', 'initialized:reached', 'containersReady:reached', 'ready:reached']);
    assert.deepEqual(t.stages.map((s) => s.durationMs), [1000, 2000, 1000, 2000, 0]);
    assert.equal(t.totalMs, 6000);
  });

  it('puts Initialized before the sandbox when the kubelet set it first (no init containers)', () => {
    const t = podTimeline(startedPod().build());
    assert.deepEqual(t.stages.slice(0, 3).map((s) => s.key), ['scheduled', 'initialized', 'sandbox']);
    assert.equal(t.stages[2]?.startMs, ms(1));
  });

  it('keeps the canonical order among stages reached in the same second', () => {
    const t = podTimeline(startedPod().condition('Initialized', 'True', 3).build());
    assert.deepEqual(t.stages.slice(1, 3).map((s) => s.key), ['sandbox', 'initialized']);
  });

  it('reads the sandbox stage from PodHasNetwork on 1.25-1.27 clusters', () => {
    const p = pod().container('app').scheduled(1).condition('PodHasNetwork', 'True', 2).build();
    const sandbox = podTimeline(p).stages.find((s) => s.key === 'sandbox');
    assert.deepEqual([sandbox?.state, sandbox?.source, sandbox?.endMs], ['reached', 'condition', ms(2)]);
  });

  it('infers the sandbox stage from the first container start without the condition', () => {
    const p = pod().container('app').scheduled(1).running('app', 5).build();
    const sandbox = podTimeline(p).stages.find((s) => s.key === 'sandbox');
    assert.deepEqual([sandbox?.source, sandbox?.endMs], ['inferred', ms(5)]);
  });

  it('marks the first stage not reached as waiting until now, the rest as not reached', () => {
    const p = pod().container('app').scheduled(1).condition('PodReadyToStartContainers', 'False', 1).build();
    const t = podTimeline(p, [], ms(31));
    assert.deepEqual(keys(t), ['scheduled:reached', 'sandbox:waiting', 'initialized:not-reached', 'containersReady:not-reached', 'ready:not-reached']);
    assert.equal(t.stages[1]?.durationMs, 30_000);
    assert.equal(t.totalMs, 31_000);
  });

  it('takes the scheduling time from the Scheduled event when the condition is absent', () => {
    const p = pod().container('app').node().build();
    const t = podTimeline(p, [event('Scheduled', 'Successfully assigned default/web to node-a', 2, { type: 'Normal' })]);
    assert.deepEqual([t.stages[0]?.key, t.stages[0]?.source, t.stages[0]?.endMs], ['scheduled', 'event', ms(2)]);
  });

  it('adds image pulls from Pulling/Pulled events', () => {
    const evs = [
      event('Pulling', 'Pulling image "example.com/app:1"', 3, { type: 'Normal', container: 'app' }),
      event('Pulled', 'Successfully pulled image', 5, { type: 'Normal', container: 'app' }),
    ];
    const t = podTimeline(startedPod().build(), evs);
    assert.deepEqual(t.pulls.map((p) => [p.label, p.startMs, p.durationMs]), [['pull app', ms(3), 2000]]);
  });

  it('ignores events of an earlier pod with the same name', () => {
    const t = podTimeline(pod().container('app').build(), [event('Scheduled', 'old', 2, { uid: 'other' })]);
    assert.equal(t.stages[0]?.state, 'waiting');
  });

  it('a pod bound to a node has passed scheduling, as explainPod says, even without the condition or the Event', () => {
    const t = podTimeline(pod().container('app').node().build(), []);
    assert.deepEqual(t.stages.slice(0, 2).map((s) => [s.key, s.state, s.source]), [['scheduled', 'reached', 'inferred'], ['sandbox', 'waiting', 'none']]);
  });

  it('does not mark a waiting stage on a pod being deleted', () => {
    const t = podTimeline(pod().container('app').deleting(3).build(), [], ms(9));
    assert.ok(t.stages.every((s) => s.state === 'not-reached'));
  });
});
