/**
 * Controller: runs a level-based Reconciler over a WorkQueue.
 *
 * Guarantees:
 * - level-based: informer events only enqueue keys; `reconcile(key)` reads current state itself;
 * - one key is never reconciled by two workers at once, and at most `concurrency` keys are
 *   reconciled at a time (the queue's guarantees);
 * - a failed reconcile is retried with per-key exponential backoff (`addRateLimited`), a
 *   successful one resets that backoff (`forget`), `requeueAfterMs` schedules the next pass;
 * - workers start only once every watched informer has synced, so a reconciler never acts on
 *   a half-filled cache;
 * - `stop()` aborts the signal passed to in-flight reconciles and waits for them to return.
 */
import { Registry } from 'prom-client';
import type { Informer } from './informer.js';
import { silentLogger, type Logger } from './log.js';
import { ControllerMetrics, WorkQueueMetrics } from './metrics.js';
import { WorkQueue } from './queue.js';
import { objectKey, type KubeObject } from './store.js';

/** What a reconcile asks of its controller besides success. */
export interface ReconcileResult {
  /** Reconcile this key again after this many milliseconds (e.g. when a deadline will pass). */
  requeueAfterMs?: number;
}

/** Brings one key to its wanted state; rejects to be retried with backoff. */
export interface Reconciler {
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void>;
}

/** A controller's name, reconciler, concurrency and retry backoff. */
export interface ControllerOptions {
  name: string;
  reconciler: Reconciler;
  /** Keys reconciled at once; default 1. */
  concurrency?: number;
  logger?: Logger;
  /** Where metrics go; a Manager supplies its own when none is given. */
  registry?: Registry;
  /** Per-key retry backoff; default 5 ms doubling to 1000 s. */
  baseDelayMs?: number;
  maxDelayMs?: number;
}

/** Runs a Reconciler over the keys of the informers it watches (see the guarantees above). */
export class Controller {
  readonly name: string;
  private readonly reconciler: Reconciler;
  private readonly concurrency: number;
  private log: Logger;
  private readonly hasLogger: boolean;
  private registry: Registry | undefined;
  private readonly delays: { baseDelayMs?: number; maxDelayMs?: number };
  private q: WorkQueue<string> | undefined;
  private metrics: ControllerMetrics | undefined;
  private readonly informers: Informer<KubeObject>[] = [];
  private abort: AbortController | undefined;
  private workers: Promise<void>[] = [];
  private starting: Promise<void> | undefined;

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.reconciler = opts.reconciler;
    this.concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
    this.log = (opts.logger ?? silentLogger()).child({ controller: opts.name });
    this.hasLogger = opts.logger !== undefined;
    this.registry = opts.registry;
    this.delays = { baseDelayMs: opts.baseDelayMs, maxDelayMs: opts.maxDelayMs };
  }

  /**
   * Used by Manager.add: gives a controller built without a registry (and logger) the manager's,
   * as long as its queue does not exist yet. Returns whether the registry was taken.
   */
  adopt(registry: Registry, logger?: Logger): boolean {
    if (logger && !this.hasLogger) this.log = logger.child({ controller: this.name });
    if (this.registry || this.q) return false;
    this.registry = registry;
    return true;
  }

  /** Enqueue the keys `toKeys` maps each added, updated or deleted object to (default: its own key). */
  watch<T extends KubeObject>(informer: Informer<T>, toKeys: (obj: T) => string[] = (obj) => [objectKey(obj)]): this {
    const enqueue = (obj: T): void => {
      for (const key of toKeys(obj)) this.enqueue(key);
    };
    informer.on('add', enqueue);
    informer.on('update', (obj, old) => {
      enqueue(old);
      enqueue(obj);
    });
    informer.on('delete', enqueue);
    this.informers.push(informer as unknown as Informer<KubeObject>);
    return this;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** The work queue (created on first use). */
  get queue(): WorkQueue<string> {
    if (!this.q) {
      const registry = (this.registry ??= new Registry());
      this.q = new WorkQueue<string>({ name: this.name, metrics: new WorkQueueMetrics(registry, this.name), ...definedOnly(this.delays) });
    }
    return this.q;
  }

  start(): void {
    if (this.abort) return;
    const abort = new AbortController();
    this.abort = abort;
    const queue = this.queue;
    this.metrics ??= new ControllerMetrics(this.registry ?? new Registry(), this.name);
    this.metrics.maxConcurrent(this.concurrency);
    this.starting = (async () => {
      try {
        await Promise.all(this.informers.map((i) => i.waitForSync(abort.signal)));
      } catch {
        return; // stopped before the caches synced
      }
      this.log.info({ concurrency: this.concurrency }, 'starting workers');
      for (let i = 0; i < this.concurrency; i++) this.workers.push(this.work(queue, abort.signal));
    })();
  }

  async stop(): Promise<void> {
    const abort = this.abort;
    if (!abort) return;
    abort.abort(new Error(`controller ${this.name} stopping`));
    await this.starting;
    await this.queue.shutDownWithDrain();
    await Promise.all(this.workers);
    this.workers = [];
    this.log.info('stopped');
  }

  private async work(queue: WorkQueue<string>, signal: AbortSignal): Promise<void> {
    const metrics = this.metrics;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      metrics?.workerStarted();
      const started = performance.now();
      try {
        const result = await this.reconciler.reconcile(key, signal);
        const after = result?.requeueAfterMs;
        queue.forget(key);
        if (after !== undefined && after > 0) {
          queue.addAfter(key, after);
          metrics?.reconciled('requeue_after', (performance.now() - started) / 1000);
        } else {
          metrics?.reconciled('success', (performance.now() - started) / 1000);
        }
      } catch (err) {
        metrics?.reconciled('error', (performance.now() - started) / 1000);
        if (signal.aborted) {
          this.log.debug({ key, err }, 'reconcile ended by shutdown');
        } else {
          this.log.error({ key, err, retries: queue.numRequeues(key) }, 'reconcile failed; retrying with backoff');
          queue.addRateLimited(key);
        }
      } finally {
        queue.done(key);
        metrics?.workerFinished();
      }
    }
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
