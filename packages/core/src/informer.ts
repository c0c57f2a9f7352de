/**
 * Informer: a local, eventually consistent copy of one collection, kept by list-then-watch.
 *
 * Guarantees:
 * - the initial sync (and every relist) streams where the transport and server allow it: one
 *   watch that delivers the current objects one by one (`sendInitialEvents`, KEP-3157), each
 *   transformed as it arrives, complete at the `k8s.io/initial-events-end` bookmark; where the
 *   server refuses that, a paged list; a stream that breaks before that bookmark counts for
 *   nothing and is retried with backoff, so the store never takes a partial list;
 * - it never stalls silently: a watch that delivers nothing, not even a bookmark, for
 *   `watchdogMs` is abandoned and reopened from the last resourceVersion (also when the
 *   transport ignores the abort), and a watch that cannot be opened is retried with jittered
 *   exponential backoff (p-retry) for as long as the informer runs;
 * - resourceVersion advances with every event and bookmark, so a reopened watch resumes where
 *   the last one stopped; 410 Gone (resourceVersion compacted away) triggers a relist;
 * - a relist is turned into the events a watch would have delivered: `add` for new keys,
 *   `update` for changed resourceVersions, `delete` (with the last known object) for keys gone;
 * - the transform runs on every object before it is stored or emitted, and then (unless turned
 *   off) equal strings in it are made to share one copy with the rest of the cache;
 * - an object's `metadata.managedFields` is parsed only when something reads it, so a transform
 *   that drops it (`stripManagedFields`) never has it parsed (docs/adr/0282);
 * - a throwing event handler is logged and never stops the informer.
 */
import { EventEmitter } from 'eventemitter3';
import pRetry from 'p-retry';
import { isGone, type KubeClient } from './client.js';
import { StringTable } from './intern.js';
import { silentLogger, type Logger } from './log.js';
import { Store, adoptInto, objectKey, type KubeObject, type StoreDiff } from './store.js';
import { sleep } from './time.js';
import { isInitialEventsEnd, kubeListWatch, refusesStreamingList, type KubeListWatch, type ListWatchTransport, type WatchEvent } from './watch.js';

/** What an Informer lists and watches, and how it transforms and keeps the objects. */
export interface InformerOptions<T> {
  /** Needed unless `transport` is given. */
  client?: KubeClient;
  /** The collection's list path, e.g. `/api/v1/pods` or `/api/v1/namespaces/ns/pods`. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Applied to every object before it is stored, e.g. `stripManagedFields`. The informer owns
   * what it returns (see `internStrings`): return a new object or the one given, never one held
   * elsewhere.
   */
  transform?: (obj: T) => T;
  /**
   * Make equal strings in the cached objects share one copy (`StringTable`), in place, after
   * the transform; default true. Costs a few microseconds an object; saves ~20% of a slim cache.
   */
  internStrings?: boolean;
  /** Restart a watch after this long without any event or bookmark; default 120 s. */
  watchdogMs?: number;
  logger?: Logger;
  /** For logs and metrics; default `path`. */
  name?: string;
  /** Replaces the HTTP list/watch (tests script one). */
  transport?: ListWatchTransport<T>;
  /** Reconnect backoff: first delay and cap, before jitter (x1..2); default 800 ms and 30 s. */
  backoff?: { minMs?: number; maxMs?: number };
  /**
   * How to (re)list: `stream` (default) uses the transport's streaming list and falls back to a
   * paged list when the server refuses it; `list` always pages.
   */
  initialSync?: SyncPath;
}

/** How a sync read the collection: one streaming watch, or a paged list. */
export type SyncPath = 'stream' | 'list';

/** The events an Informer emits and their arguments. */
export type InformerEvents<T> = {
  add: [T];
  /**
   * The new object first, then the one it replaced — unlike client-go's UpdateFunc(old, new):
   * most handlers want only the current object, and level-based ones read the store anyway.
   */
  update: [obj: T, old: T];
  delete: [T];
  synced: [];
  error: [Error];
  relist: [string];
};

/** Raised (and emitted as `error`) when a watch went quiet for longer than the watchdog allows. */
export class StalledWatchError extends Error {
  constructor(name: string, ms: number) {
    super(`watch ${name}: nothing received for ${ms} ms (not even a bookmark); reopening it`);
    this.name = 'StalledWatchError';
  }
}

export const DEFAULT_WATCHDOG_MS = 120_000;

const noop = (): void => undefined;

/**
 * Drops `metadata.managedFields`, usually the largest part of a cached object and never needed by
 * a controller. It never reads the field, so an informer never parses it (docs/adr/0282).
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const from = obj.metadata;
  if (!from || !Object.hasOwn(from, 'managedFields')) return obj;
  const metadata: Record<string, unknown> = {};
  for (const key of Object.keys(from)) if (key !== 'managedFields') metadata[key] = from[key as keyof typeof from];
  return { ...obj, metadata };
}

/**
 * The objects of a streaming list gathered so far, transformed, by key; stored only once complete.
 * A first list's map becomes the store's own table (`adoptInto`): it grew while the list arrived,
 * so no second table of every key is built at once when the list completes (docs/adr/0276).
 */
class PendingList<T extends KubeObject> {
  objects = new Map<string, T>();
  complete = false;
}

/** A stream sent a plain bookmark before the end of its initial events: the server ignored `sendInitialEvents`. */
class NotStreamingError extends Error {
  constructor(name: string) {
    super(`watch ${name}: the server sent no initial-events-end bookmark; it does not serve streaming lists`);
    this.name = 'NotStreamingError';
  }
}

/** A cached, watched copy of one collection; emits add, update and delete, then `synced`. */
export class Informer<T extends KubeObject> extends EventEmitter<InformerEvents<T>> {
  readonly store = new Store<T>();
  readonly name: string;
  private readonly transport: ListWatchTransport<T>;
  /** The built-in transport's paged list, object by object, where the informer built it. */
  private readonly listEach: KubeListWatch<T>['listEach'] | undefined;
  private readonly transform: (obj: T) => T;
  private readonly strings: StringTable | undefined;
  private readonly watchdogMs: number;
  private readonly log: Logger;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly syncPath: SyncPath;
  private lastSync: SyncPath | undefined;
  private rv = '';
  private needList = true;
  private relistReason = '';
  private synced = false;
  private abort: AbortController | undefined;
  private running: Promise<void> | undefined;

  constructor(opts: InformerOptions<T>) {
    super();
    this.name = opts.name ?? opts.path;
    if (opts.transport) this.transport = opts.transport;
    else if (opts.client) {
      const transport = kubeListWatch<T>(opts.client, {
        path: opts.path,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
      });
      this.transport = transport;
      this.listEach = transport.listEach;
    } else throw new Error(`informer ${this.name}: give either a client or a transport`);
    this.transform = opts.transform ?? ((obj) => obj);
    this.strings = opts.internStrings === false ? undefined : new StringTable();
    this.watchdogMs = opts.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    this.log = (opts.logger ?? silentLogger()).child({ informer: this.name });
    this.minBackoffMs = opts.backoff?.minMs ?? 800;
    this.maxBackoffMs = opts.backoff?.maxMs ?? 30_000;
    this.syncPath = opts.initialSync ?? 'stream';
  }

  /** How the last (re)list read the collection; undefined before the first sync. */
  get lastSyncPath(): SyncPath | undefined {
    return this.lastSync;
  }

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.rv;
  }

  start(): void {
    if (this.running) return;
    const abort = new AbortController();
    this.abort = abort;
    this.running = this.run(abort.signal);
  }

  async stop(): Promise<void> {
    this.abort?.abort(new Error(`informer ${this.name} stopped`));
    await this.running;
    this.running = undefined;
    this.abort = undefined;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves once the first list is in the store; rejects with the signal's reason if aborted first. */
  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onSynced = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        this.off('synced', onSynced);
        reject(signal?.reason instanceof Error ? signal.reason : new Error(`waiting for ${this.name} to sync was aborted`));
      };
      if (signal?.aborted) return onAbort();
      this.once('synced', onSynced);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await pRetry(() => this.cycle(signal), {
          retries: Infinity,
          factor: 2,
          minTimeout: this.minBackoffMs,
          maxTimeout: this.maxBackoffMs,
          randomize: true,
          signal,
          shouldRetry: () => true,
          onFailedAttempt: ({ error, attemptNumber, retryDelay }) => {
            this.log.warn({ err: error, attempt: attemptNumber, retryInMs: retryDelay }, 'list/watch failed; backing off');
            this.safeEmit('error', error);
          },
        });
      } catch (err) {
        if (signal.aborted) return;
        // p-retry gives up on programming errors (TypeError); keep the informer alive, slowly.
        this.log.error({ err }, 'list/watch failed without retry; trying again after the maximum backoff');
        this.safeEmit('error', asError(err));
        await sleep(this.maxBackoffMs, signal);
      }
    }
  }

  /**
   * One (re)list when needed, streamed or paged, and one watch. Resolves when the next cycle should start at once
   * (the watch made progress, or the server asked for a relist); throws to back off.
   */
  private async cycle(signal: AbortSignal): Promise<void> {
    if (this.needList && this.syncPath === 'stream' && this.transport.watchList) return this.streamOnce(signal);
    if (this.needList) await this.relist(signal);
    return this.settle(await this.watchOnce(signal), signal);
  }

  /** A streaming list and the watch it becomes; a refusal falls back to paging at once. */
  private async streamOnce(signal: AbortSignal): Promise<void> {
    const pending = new PendingList<T>();
    const outcome = await this.watchOnce(signal, pending);
    if (signal.aborted || pending.complete) return this.settle(outcome, signal);
    if (refusesStreamingList(outcome.error) || outcome.error instanceof NotStreamingError) {
      this.log.info({ err: outcome.error }, 'the server does not serve streaming lists; listing in pages');
      await this.relist(signal);
      return this.settle(await this.watchOnce(signal), signal);
    }
    throw outcome.error ?? new Error(`watch ${this.name}: the stream ended before its initial events were complete`);
  }

  private settle({ progressed, error }: { progressed: boolean; error?: Error }, signal: AbortSignal): void {
    if (signal.aborted) return;
    if (error && isGone(error)) {
      this.needList = true;
      this.relistReason = `resourceVersion ${this.rv} is too old (410 Gone)`;
      this.log.info({ resourceVersion: this.rv }, 'watch expired; relisting');
      return;
    }
    if (progressed) {
      if (error) {
        this.log.info({ err: error }, 'watch broke after making progress; reopening');
        this.safeEmit('error', error);
      }
      return;
    }
    throw error ?? new Error(`watch ${this.name}: the server closed the stream without sending anything`);
  }

  private async relist(signal: AbortSignal): Promise<void> {
    if (!this.listEach) {
      const { items, resourceVersion } = await this.transport.list(signal, (obj) => this.applyTransform(obj));
      return this.replaceAll(items, resourceVersion, 'list');
    }
    // Gathered by key as the pages arrive, as a streaming list is: a first list's map becomes the
    // store's table, with no array of every object beside it (docs/adr/0281).
    let pending = new Map<string, T>();
    const resourceVersion = await this.listEach(
      signal,
      (obj) => {
        const out = this.applyTransform(obj);
        pending.set(objectKey(out), out);
      },
      () => (pending = new Map()),
    );
    this.replaceAll(pending, resourceVersion, 'list');
  }

  /** Makes the store hold exactly what a list or a stream read, emitting what changed. */
  private replaceAll(objects: Iterable<T> | Map<string, T>, resourceVersion: string, path: SyncPath): void {
    const adopted = objects instanceof Map && adoptInto(this.store, objects);
    // Adopted, every object is new: its add events are read off the store's own table, not a copy of it.
    const diff: StoreDiff<T> = adopted ? { added: [], updated: [], deleted: [] } : this.store.replace(objects instanceof Map ? objects.values() : objects);
    this.rv = resourceVersion;
    this.needList = false;
    this.lastSync = path;
    if (adopted) for (const obj of objects.values()) this.safeEmit('add', obj);
    for (const obj of diff.added) this.safeEmit('add', obj);
    for (const { old, obj } of diff.updated) this.safeEmit('update', obj, old);
    for (const obj of diff.deleted) this.safeEmit('delete', obj);
    const added = adopted ? objects.size : diff.added.length;
    if (!this.synced) {
      this.synced = true;
      this.log.info({ objects: this.store.size, resourceVersion, path }, 'synced');
      this.safeEmit('synced');
    } else {
      const reason = this.relistReason || 'relist';
      this.log.info({ reason, path, added, updated: diff.updated.length, deleted: diff.deleted.length }, 'relisted');
      this.safeEmit('relist', reason);
    }
    this.relistReason = '';
  }

  /**
   * Consumes one watch until it ends, fails or stalls; never throws. With `pending`, the watch
   * is a streaming list: nothing counts as progress until its initial events are complete.
   */
  private async watchOnce(signal: AbortSignal, pending?: PendingList<T>): Promise<{ progressed: boolean; error?: Error }> {
    // Stopped during the list (e.g. by an event handler): the abort listener below would never fire.
    if (signal.aborted) return { progressed: false, error: asError(signal.reason) };
    const watch = new AbortController();
    let stalled: StalledWatchError | undefined;
    let timer: NodeJS.Timeout | undefined;
    // Abandoning wakes only the step being awaited: racing each step against one long-lived
    // promise would chain every event to it, keeping each one alive for as long as the watch.
    let abandoned = false;
    let wake: ((step: undefined) => void) | undefined;
    const abandon = (): void => {
      abandoned = true;
      wake?.(undefined);
    };
    const arm = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        stalled = new StalledWatchError(this.name, this.watchdogMs);
        watch.abort(stalled);
        abandon();
      }, this.watchdogMs);
    };
    const onStop = (): void => {
      watch.abort(signal.reason);
      abandon();
    };
    signal.addEventListener('abort', onStop, { once: true });
    let progressed = false;
    let iterator: AsyncIterator<WatchEvent<T>> | undefined;
    try {
      arm();
      const events = pending && this.transport.watchList ? this.transport.watchList(watch.signal) : this.transport.watch(this.rv, watch.signal);
      iterator = events[Symbol.asyncIterator]();
      for (;;) {
        const next = iterator.next();
        next.catch(noop);
        const step = abandoned
          ? undefined
          : await new Promise<IteratorResult<WatchEvent<T>> | undefined>((resolve, reject) => {
              wake = resolve;
              next.then(resolve, reject);
            });
        wake = undefined;
        if (step === undefined || watch.signal.aborted) break;
        if (step.done) return { progressed };
        arm();
        if (pending && !pending.complete) {
          this.gather(pending, step.value);
          progressed = pending.complete;
        } else {
          progressed = true;
          this.apply(step.value);
        }
      }
      return { progressed, error: stalled ?? asError(signal.reason) };
    } catch (err) {
      return { progressed, error: stalled ?? asError(err) };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onStop);
      if (!watch.signal.aborted) watch.abort(new Error('watch finished'));
      // Do not wait: a transport that ignores the abort must not hold the informer.
      iterator?.return?.().catch(noop);
    }
  }

  /** One event of a streaming list's initial phase; the end bookmark makes the list the store. */
  private gather(pending: PendingList<T>, event: WatchEvent<T>): void {
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.applyTransform(event.object);
        pending.objects.set(objectKey(obj), obj);
        return;
      }
      case 'DELETED':
        pending.objects.delete(objectKey(event.object));
        return;
      case 'BOOKMARK':
        if (!isInitialEventsEnd(event)) throw new NotStreamingError(this.name);
        pending.complete = true;
        this.replaceAll(pending.objects, event.object?.metadata?.resourceVersion ?? '', 'stream');
        pending.objects = new Map();
        return;
      default:
        return;
    }
  }

  private apply(event: WatchEvent<T>): void {
    const rv = event.object?.metadata?.resourceVersion;
    switch (event.type) {
      case 'BOOKMARK':
        break;
      case 'ADDED':
      case 'MODIFIED': {
        const obj = this.applyTransform(event.object);
        const old = this.store.set(obj);
        if (old === undefined) this.safeEmit('add', obj);
        else this.safeEmit('update', obj, old);
        break;
      }
      case 'DELETED': {
        const obj = this.applyTransform(event.object);
        this.store.remove(objectKey(obj));
        this.safeEmit('delete', obj);
        break;
      }
      default:
        break;
    }
    if (rv) this.rv = rv;
  }

  private applyTransform(obj: T): T {
    let out: T;
    try {
      out = this.transform(obj);
    } catch (err) {
      this.log.error({ err, key: objectKey(obj) }, 'transform threw; caching the object untransformed');
      out = obj;
    }
    return this.strings ? this.strings.internDeep(out) : out;
  }

  private safeEmit<E extends keyof InformerEvents<T>>(event: E, ...args: InformerEvents<T>[E]): void {
    try {
      (this.emit as (e: E, ...a: InformerEvents<T>[E]) => boolean)(event, ...args);
    } catch (err) {
      this.log.error({ err, event }, 'informer event handler threw');
    }
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

