import assert from 'node:assert/strict';
import { describe, it, beforeEach, afterEach } from 'mocha';
import sinon from 'sinon';
import { EventRecorder, type EventObject, type EventSink } from '../src/events.js';
import type { KubeObject } from '../src/store.js';

class RecordingSink implements EventSink {
  created: EventObject[] = [];
  series: { name: string; count: number; lastObservedTime: string }[] = [];
  fail = false;
  async create(event: EventObject): Promise<unknown> {
    if (this.fail) throw new Error('forbidden');
    this.created.push(event);
    return event;
  }
  async updateSeries(_ns: string, name: string, s: { count: number; lastObservedTime: string }): Promise<unknown> {
    if (this.fail) throw new Error('forbidden');
    this.series.push({ name, ...s });
    return {};
  }
}

const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web-0', namespace: 'shop', uid: 'u1', resourceVersion: '7' } };

describe('EventRecorder', () => {
  let clock: sinon.SinonFakeTimers;
  let sink: RecordingSink;
  let rec: EventRecorder;

  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: Date.UTC(2026, 0, 1), toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    sink = new RecordingSink();
    rec = new EventRecorder({ sink, controller: 'podlife.dev/controller', instance: 'ctl-1', flushMs: 30_000 });
  });
  afterEach(async () => {
    await rec.close();
    clock.restore();
  });

  it('writes an events.k8s.io/v1 Event about the regarding object', async () => {
    await rec.event(pod, 'Warning', 'KeystoneExited', 'container app exited with 1', 'StopPod');
    assert.equal(sink.created.length, 1);
    const e = sink.created[0]!;
    assert.equal(e.apiVersion, 'events.k8s.io/v1');
    assert.equal(e.metadata.namespace, 'shop');
    assert.match(e.metadata.name, /^web-0\.[0-9a-f]+$/);
    assert.deepEqual(e.regarding, { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u1', resourceVersion: '7' });
    assert.equal(e.reportingController, 'podlife.dev/controller');
    assert.equal(e.reportingInstance, 'ctl-1');
    assert.equal(e.type, 'Warning');
    assert.equal(e.reason, 'KeystoneExited');
    assert.equal(e.action, 'StopPod');
    assert.equal(e.eventTime, '2026-01-01T00:00:00.000000Z');
  });

  it('turns the first repeat into a series of 2 on the same Event', async () => {
    await rec.event(pod, 'Normal', 'Synced', 'ok');
    clock.tick(1_000);
    await rec.event({ ...pod, metadata: { ...pod.metadata, resourceVersion: '8' } }, 'Normal', 'Synced', 'ok');
    assert.equal(sink.created.length, 1);
    assert.deepEqual(sink.series, [{ name: sink.created[0]!.metadata.name, count: 2, lastObservedTime: '2026-01-01T00:00:01.000000Z' }]);
  });

  it('coalesces further repeats into one series update per flush period', async () => {
    for (let i = 0; i < 12; i++) await rec.event(pod, 'Normal', 'Synced', 'ok');
    assert.equal(sink.series.length, 1);
    await clock.tickAsync(30_000);
    assert.equal(sink.created.length, 1);
    assert.equal(sink.series.length, 2);
    assert.equal(sink.series[1]!.count, 12);
  });

  it('starts a new Event when the repeat comes after the series window', async () => {
    await rec.event(pod, 'Normal', 'Synced', 'ok');
    await clock.tickAsync(6 * 60_000 + 1);
    await rec.event(pod, 'Normal', 'Synced', 'ok');
    assert.equal(sink.created.length, 2);
    assert.equal(sink.series.length, 0);
  });

  it('keeps events with a different reason or note apart', async () => {
    await rec.event(pod, 'Normal', 'Synced', 'ok');
    await rec.event(pod, 'Normal', 'Synced', 'other note');
    await rec.event(pod, 'Warning', 'Failed', 'ok');
    assert.equal(sink.created.length, 3);
  });

  it('never rejects when the API refuses the Event', async () => {
    sink.fail = true;
    await rec.event(pod, 'Normal', 'Synced', 'ok');
    sink.fail = false;
    await rec.event(pod, 'Normal', 'Synced', 'ok');
    assert.equal(sink.created.length, 1, 'a failed Event is not treated as the start of a series');
  });

  it("records a cluster-scoped object's events in the default namespace", async () => {
    await rec.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'u' } }, 'Normal', 'TaintRemoved', 'ready');
    assert.equal(sink.created[0]?.metadata.namespace, 'default');
  });

  it('cuts the note to 1 kB without breaking a character', async () => {
    await rec.event(pod, 'Normal', 'Long', 'é'.repeat(2_000));
    const note = sink.created[0]!.note;
    assert.ok(Buffer.byteLength(note) <= 1024);
    assert.ok(!note.includes('\uFFFD'));
  });
});
