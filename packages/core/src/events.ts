/**
 * EventRecorder: Kubernetes Events (events.k8s.io/v1) about the objects a controller acts on.
 *
 * Guarantees:
 * - `event()` never throws or rejects: an Event is advice to a human, so a failure to write one
 *   is logged and the caller carries on;
 * - repeats are folded into a series like client-go's events recorder: the same
 *   (regarding object, type, reason, action, note) within `seriesWindowMs` of its last
 *   occurrence updates `series.count` / `series.lastObservedTime` of the first Event instead of
 *   creating another; the first repeat is written at once, later ones are coalesced and
 *   flushed every `flushMs`, so a hot loop cannot flood the API server;
 * - fields are cut to the API's limits (note 1 kB, reason/action 128 characters) rather than
 *   rejected.
 */
import { isNotFound, resourcePath, type KubeClient } from './client.js';
import { microTime } from './leader.js';
import { silentLogger, type Logger } from './log.js';
import { ContentType } from './patch.js';
import type { KubeObject } from './store.js';

/** The type of an Event. */
export type EventType = 'Normal' | 'Warning';

/** The object an Event regards. */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

/** An events.k8s.io/v1 Event as written on the wire. */
export interface EventObject {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  regarding: ObjectReference;
  note: string;
  type: EventType;
  series?: { count: number; lastObservedTime: string };
}

/** Where Events are written; the real one uses KubeClient, tests record calls. */
export interface EventSink {
  create(event: EventObject): Promise<unknown>;
  /** Merge-patches the series of an existing Event; rejects with 404 when it is gone. */
  updateSeries(namespace: string, name: string, series: { count: number; lastObservedTime: string }): Promise<unknown>;
}

export function kubeEventSink(client: KubeClient): EventSink {
  const ref = { group: 'events.k8s.io', version: 'v1', resource: 'events' };
  return {
    create: (event) => client.create(resourcePath({ ...ref, namespace: event.metadata.namespace }), event),
    updateSeries: (namespace, name, series) =>
      client.patch(resourcePath({ ...ref, namespace, name }), { series }, ContentType.MergePatch),
  };
}

/**
 * What a reconciler needs to post an Event: `EventRecorder` has this shape, and a test can stub it.
 * `event()` must not reject for a failure to write (Events are best effort).
 */
export interface EventRecorderLike {
  event(regarding: KubeObject, type: EventType, reason: string, note: string, action?: string): Promise<void>;
}

/** Who reports (controller, instance), where Events go, and how repeats are folded. */
export interface EventRecorderOptions {
  client?: KubeClient;
  /** reportingController, e.g. `podlife.dev/controller`. */
  controller: string;
  /** reportingInstance, e.g. the pod name. */
  instance: string;
  sink?: EventSink;
  logger?: Logger;
  /** Repeats closer together than this join a series; default 6 minutes (client-go). */
  seriesWindowMs?: number;
  /** How often coalesced series counts are written; default 30 s. */
  flushMs?: number;
  now?: () => number;
}

interface Series {
  namespace: string;
  name: string;
  count: number;
  lastObserved: number;
  /** The count last written to the API. */
  written: number;
  /** Settles when the Event exists (or failed to be created). */
  ready: Promise<boolean>;
}

const NOTE_MAX_BYTES = 1024;
const FIELD_MAX = 128;

/** Writes Events, folding repeats into series (see the guarantees above). */
export class EventRecorder implements EventRecorderLike {
  private readonly sink: EventSink;
  private readonly controller: string;
  private readonly instance: string;
  private readonly log: Logger;
  private readonly windowMs: number;
  private readonly flushMs: number;
  private readonly now: () => number;
  private readonly series = new Map<string, Series>();
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  constructor(opts: EventRecorderOptions) {
    if (opts.sink) this.sink = opts.sink;
    else if (opts.client) this.sink = kubeEventSink(opts.client);
    else throw new Error('EventRecorder: give either a client or a sink');
    this.controller = opts.controller.slice(0, FIELD_MAX);
    this.instance = opts.instance.slice(0, FIELD_MAX);
    this.log = (opts.logger ?? silentLogger()).child({ component: 'events' });
    this.windowMs = opts.seriesWindowMs ?? 6 * 60_000;
    this.flushMs = opts.flushMs ?? 30_000;
    this.now = opts.now ?? Date.now;
  }

  async event(regarding: KubeObject, type: EventType, reason: string, note: string, action?: string): Promise<void> {
    try {
      await this.record(regarding, type, reason, note, action ?? reason);
    } catch (err) {
      this.log.warn({ err, reason, regarding: refName(regarding) }, 'could not record an event');
    }
  }

  /** Writes pending series counts and stops the flush timer. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush(true);
  }

  private async record(regarding: KubeObject, type: EventType, reason: string, note: string, action: string): Promise<void> {
    const ref = reference(regarding);
    const fields = { type, reason: reason.slice(0, FIELD_MAX), action: action.slice(0, FIELD_MAX), note: truncateBytes(note, NOTE_MAX_BYTES) };
    const key = JSON.stringify([ref.apiVersion, ref.kind, ref.namespace, ref.name, ref.uid, fields.type, fields.reason, fields.action, fields.note]);
    const now = this.now();
    const existing = this.series.get(key);
    if (existing && now - existing.lastObserved <= this.windowMs) {
      existing.count++;
      existing.lastObserved = now;
      if (existing.count === 2) await this.writeSeries(key, existing);
      else this.ensureTimer();
      return;
    }
    await this.create(key, ref, fields, now);
  }

  private async create(
    key: string,
    regarding: ObjectReference,
    fields: { type: EventType; reason: string; action: string; note: string },
    now: number,
  ): Promise<void> {
    const namespace = regarding.namespace || 'default';
    const name = `${(regarding.name || 'unknown').slice(0, 200)}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`;
    const event: EventObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name, namespace },
      eventTime: microTime(now),
      reportingController: this.controller,
      reportingInstance: this.instance,
      regarding,
      ...fields,
    };
    let settle: (ok: boolean) => void = () => undefined;
    const entry: Series = { namespace, name, count: 1, lastObserved: now, written: 1, ready: new Promise((r) => (settle = r)) };
    this.series.set(key, entry);
    this.ensureTimer();
    try {
      await this.sink.create(event);
      settle(true);
    } catch (err) {
      settle(false);
      if (this.series.get(key) === entry) this.series.delete(key);
      throw err;
    }
  }

  private async writeSeries(key: string, entry: Series): Promise<void> {
    if (!(await entry.ready)) return;
    const count = entry.count;
    if (count <= entry.written) return;
    try {
      await this.sink.updateSeries(entry.namespace, entry.name, { count, lastObservedTime: microTime(entry.lastObserved) });
      entry.written = Math.max(entry.written, count);
    } catch (err) {
      // The Event expired (events have a TTL) or was deleted: the next repeat starts a new one.
      if (isNotFound(err) && this.series.get(key) === entry) this.series.delete(key);
      throw err;
    }
  }

  private ensureTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(false), this.flushMs);
    this.timer.unref();
  }

  private async flush(all: boolean): Promise<void> {
    const now = this.now();
    const writes: Promise<void>[] = [];
    for (const [key, entry] of this.series) {
      if (entry.count > entry.written) {
        writes.push(this.writeSeries(key, entry).catch((err: unknown) => this.log.warn({ err, event: entry.name }, 'could not update an event series')));
      } else if (now - entry.lastObserved > this.windowMs) {
        this.series.delete(key);
      }
    }
    await Promise.all(writes);
    if (!all && this.series.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function reference(obj: KubeObject): ObjectReference {
  const m = obj.metadata ?? {};
  const ref: ObjectReference = {};
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (m.name) ref.name = m.name;
  if (m.namespace) ref.namespace = m.namespace;
  if (m.uid) ref.uid = m.uid;
  if (m.resourceVersion) ref.resourceVersion = m.resourceVersion;
  return ref;
}

function refName(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return `${obj.kind ?? 'object'} ${m.namespace ? `${m.namespace}/` : ''}${m.name ?? '?'}`;
}

function truncateBytes(s: string, max: number): string {
  if (Buffer.byteLength(s) <= max) return s;
  let out = Buffer.from(s).subarray(0, max).toString('utf8');
  // A cut through a multi-byte character decodes to U+FFFD; drop it.
  while (Buffer.byteLength(out) > max || out.endsWith('\uFFFD')) out = out.slice(0, -1);
  return out;
}
