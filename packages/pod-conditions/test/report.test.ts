import assert from 'node:assert/strict';
import { podExplanation, renderExplanation } from '../src/index.js';
import { ms, pod, startedPod } from './fixtures.js';

describe('podExplanation', () => {
  it('gathers pod identity, sandbox, per-family network, timeline and diagnosis', () => {
    const x = podExplanation(startedPod().build(), [], ms(10));
    assert.deepEqual(x.pod, { namespace: 'default', name: 'web', uid: 'uid-web', node: 'node-a', phase: 'Running', createdAt: new Date(ms(0)).toISOString() });
    assert.deepEqual([x.sandbox.status, x.network.IPv4.status, x.network.IPv6.status, x.diagnosis.cause], ['True', 'True', 'False', 'Ready']);
    assert.equal(x.timeline.stages.length, 5);
  });

  it('survives a JSON round trip unchanged (for --output json)', () => {
    const x = podExplanation(startedPod().build(), [], ms(10));
    assert.deepEqual(JSON.parse(JSON.stringify(x)), x);
  });
});

describe('renderExplanation', () => {
  it('prints a header, the timeline and the diagnosis last', () => {
    const text = renderExplanation(podExplanation(startedPod().build(), [], ms(10)));
    const lines = text.split('\n');
    assert.match(lines[0]!, /^pod default\/web {2}· {2}on node-a {2}· {2}Running {2}· {2}created 10s ago$/);
    assert.match(text, /^scheduled\s+1\.0s/m);
    assert.equal(lines.at(-1), 'The pod is ready.');
  });

  it('notes inferred stages on clusters without the sandbox condition', () => {
    const text = renderExplanation(podExplanation(pod().container('app').scheduled(1).condition('Initialized', 'True', 1).running('app', 3).build(), [], ms(10)));
    assert.match(text, /\* inferred: this cluster does not report the sandbox condition/);
    assert.match(text, /^containers ready +7\.0s\+/m);
    assert.match(text, /^stuck at: containersReady/m);
  });

  it('says a pod held by a readiness gate is stuck at ready', () => {
    const p = startedPod().gate('example.com/lb').condition('Ready', 'False', 6).build();
    assert.match(renderExplanation(podExplanation(p, [], ms(10))), /^stuck at: ready \(ReadinessGateMissing\)$/m);
  });
});
