import assert from 'node:assert/strict';
import { podTimeline, renderTimeline } from '../src/index.js';
import { formatDuration } from '../src/duration.js';
import { event, ms, pod, startedPod } from './fixtures.js';

describe('renderTimeline', () => {
  it('draws one line per stage after a two-line axis', () => {
    const out = renderTimeline(podTimeline(startedPod().build()), { width: 80 });
    const lines = out.split('\n');
    assert.equal(lines.length, 2 + 5);
    assert.match(lines[0]!, /^stage\s+took\s+0\s+6\.0s$/);
  });

  it('keeps every line within the width', () => {
    for (const width of [40, 60, 100]) {
      const out = renderTimeline(podTimeline(startedPod().build()), { width });
      for (const line of out.split('\n')) assert.ok(line.length <= width, `${line.length} > ${width}: ${line}`);
    }
  });

  it('places bars on a shared time axis', () => {
    const out = renderTimeline(podTimeline(startedPod().build()), { width: 80, ascii: true });
    const bars = Object.fromEntries(out.split('\n').slice(2).map((l) => [l.slice(0, 20).trim(), l.slice(31)]));
    // 6 s over 49 columns: scheduled ends at 1 s, containers ready starts at 3 s and ends at 6 s.
    assert.equal(bars['scheduled']?.indexOf('#'), 0);
    assert.ok((bars['containers ready']?.indexOf('#') ?? -1) > (bars['scheduled']?.lastIndexOf('#') ?? 99));
    assert.ok(bars['containers ready']!.trimEnd().endsWith('#'));
  });

  it('gives an instant stage a one-column mark', () => {
    const out = renderTimeline(podTimeline(startedPod().build()), { ascii: true });
    const ready = out.split('\n').find((l) => l.startsWith('ready'));
    assert.match(ready ?? '', /0ms\s+\s*#$/);
  });

  it('draws the stage the pod waits in up to now, and later stages as pending', () => {
    const p = pod().container('app').scheduled(1).condition('PodReadyToStartContainers', 'False', 1).build();
    const out = renderTimeline(podTimeline(p, [], ms(30)), { ascii: true });
    assert.match(out, /sandbox & network\s+29s\+\s+ *~+$/m);
    assert.match(out, /^ready\s+-\s+\.\.\.$/m);
  });

  it('marks inferred times with an asterisk', () => {
    const out = renderTimeline(podTimeline(pod().container('app').scheduled(1).running('app', 4).build(), [], ms(5)));
    assert.match(out, /^sandbox & network \*/m);
  });

  it('shows image pulls as indented spans', () => {
    const evs = [event('Pulling', 'p', 2, { type: 'Normal', container: 'app' }), event('Pulled', 'p', 4, { type: 'Normal', container: 'app' })];
    assert.match(renderTimeline(podTimeline(startedPod().build(), evs)), /^ {2}pull app\s+2\.0s/m);
  });

  it('renders a timeline with no times at all', () => {
    assert.doesNotThrow(() => renderTimeline(podTimeline({})));
  });
});

describe('formatDuration', () => {
  it('reads like a person would write it', () => {
    assert.deepEqual([850, 1234, 12_000, 192_000, 7_500_000, 90_000_000].map(formatDuration), ['850ms', '1.2s', '12s', '3m12s', '2h05m', '1d1h']);
  });
});
