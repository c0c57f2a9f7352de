/**
 * A work queue with client-go's `workqueue` guarantees:
 * - Fair: keys are handed out in the order they were added (FIFO), and waiting workers are
 *   served in the order they asked.
 * - Stingy: a key added many times before it is processed is processed once.
 * - Never concurrent on one key: a key added while it is being processed is queued again
 *   only when `done(key)` is called.
 * - Rate limited per key: `addRateLimited` waits base * 2^n (5 ms doubling, capped at
 *   1000 s) where n counts failures since the last `forget(key)`.
 *
 * Every operation is O(1) amortised except delayed adds (O(log n), one heap). Delays share a
 * single unref'd timer armed for the earliest entry, so a queue never keeps a process alive.
 * A delayed key is never handed out before its time, whatever the delay: a timer holds at most
 * 2^31-1 ms (about 24.8 days), so a longer delay is reached in steps of at most that, one timer
 * per step, never a timer the runtime would cut to 1 ms.
 * After `shutDown`, nothing more is handed out: queued and delayed keys are discarded (a
 * level-based controller finds them again on its next list) and waiting `get()`s resolve
 * undefined.
 */
import { MaxTimerMs } from './time.js';

/** What a WorkQueue reports as it runs (WorkQueueMetrics gives client-go's metric names). */
export interface QueueMetrics {
  /** A key entered the queue (dedup'd adds are not counted). */
  adds(): void;
  depth(n: number): void;
  /** Time a key waited between add and get. */
  queueLatency(seconds: number): void;
  /** Time between get and done. */
  workDuration(seconds: number): void;
  /** A rate-limited re-add. */
  retries(): void;
}

/** How a WorkQueue retries and reports: its name, per-key backoff and metrics. */
export interface WorkQueueOptions {
  name?: string;
  /** First retry delay; default 5 ms. */
  baseDelayMs?: number;
  /** Retry delay cap; default 1,000,000 ms (1000 s). */
  maxDelayMs?: number;
  metrics?: QueueMetrics;
  /** Monotonic milliseconds; default performance.now. Used for delays and metrics. */
  now?: () => number;
}

/** FIFO ring buffer: O(1) push and shift, unlike Array#shift which moves every element. */
class Ring<T> {
  private items: (T | undefined)[] = new Array<T | undefined>(16);
  private head = 0;
  size = 0;

  push(item: T): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.head + this.size) & (this.items.length - 1)] = item;
    this.size++;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.size--;
    return item;
  }

  clear(): void {
    this.items = new Array<T | undefined>(16);
    this.head = 0;
    this.size = 0;
  }

  private grow(): void {
    const grown = new Array<T | undefined>(this.items.length * 2);
    for (let i = 0; i < this.size; i++) grown[i] = this.items[(this.head + i) & (this.items.length - 1)];
    this.items = grown;
    this.head = 0;
  }
}

interface Delayed<K> {
  key: K;
  readyAt: number;
  /** Insertion order, so equal readyAt keeps FIFO order. */
  seq: number;
  /** Position in the heap array, kept current so an entry can move up in O(log n). */
  index: number;
}

/** Min-heap of delayed keys by (readyAt, seq), at most one entry per key. */
class DelayHeap<K> {
  private readonly heap: Delayed<K>[] = [];
  private readonly byKey = new Map<K, Delayed<K>>();
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  peek(): Delayed<K> | undefined {
    return this.heap[0];
  }

  /** Schedule `key` at `readyAt`, or move its existing entry earlier; a later time never delays it. */
  schedule(key: K, readyAt: number): void {
    const existing = this.byKey.get(key);
    if (existing !== undefined) {
      if (readyAt < existing.readyAt) {
        existing.readyAt = readyAt;
        this.up(existing.index);
      }
      return;
    }
    const entry: Delayed<K> = { key, readyAt, seq: this.seq++, index: this.heap.length };
    this.heap.push(entry);
    this.byKey.set(key, entry);
    this.up(entry.index);
  }

  pop(): Delayed<K> | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    const last = this.heap.pop() as Delayed<K>;
    if (last !== top) {
      last.index = 0;
      this.heap[0] = last;
      this.down(0);
    }
    this.byKey.delete(top.key);
    return top;
  }

  clear(): void {
    this.heap.length = 0;
    this.byKey.clear();
  }

  private less(a: Delayed<K>, b: Delayed<K>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
  }

  private up(i: number): void {
    const entry = this.heap[i] as Delayed<K>;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = this.heap[parentIndex] as Delayed<K>;
      if (!this.less(entry, parent)) break;
      parent.index = i;
      this.heap[i] = parent;
      i = parentIndex;
    }
    entry.index = i;
    this.heap[i] = entry;
  }

  private down(i: number): void {
    const n = this.heap.length;
    const entry = this.heap[i] as Delayed<K>;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      let child = left;
      if (right < n && this.less(this.heap[right] as Delayed<K>, this.heap[left] as Delayed<K>)) child = right;
      const childEntry = this.heap[child] as Delayed<K>;
      if (!this.less(childEntry, entry)) break;
      childEntry.index = i;
      this.heap[i] = childEntry;
      i = child;
    }
    entry.index = i;
    this.heap[i] = entry;
  }
}

/** The work queue of the guarantees above; keys are handed out by `get()` and returned with `done()`. */
export class WorkQueue<K = string> {
  readonly name: string;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly metrics: QueueMetrics | undefined;
  private readonly now: () => number;

  private readonly queue = new Ring<K>();
  /** Keys that need processing: queued, or re-added while processing. */
  private readonly dirty = new Set<K>();
  private readonly processing = new Set<K>();
  private readonly waiters = new Ring<(key: K | undefined) => void>();
  private readonly failures = new Map<K, number>();
  private readonly delayed = new DelayHeap<K>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Infinity;
  /** Only kept with metrics, so a queue without them pays no memory for timestamps. */
  private readonly addedAt = new Map<K, number>();
  private readonly startedAt = new Map<K, number>();
  private shutdown = false;
  private drained: (() => void) | undefined;
  private drainPromise: Promise<void> | undefined;

  constructor(opts: WorkQueueOptions = {}) {
    this.name = opts.name ?? '';
    this.baseDelayMs = opts.baseDelayMs ?? 5;
    this.maxDelayMs = opts.maxDelayMs ?? 1_000_000;
    this.metrics = opts.metrics;
    this.now = opts.now ?? (() => performance.now());
  }

  get shuttingDown(): boolean {
    return this.shutdown;
  }

  /** Keys waiting to be handed out (not counting those being processed or delayed). */
  len(): number {
    return this.queue.size;
  }

  add(key: K): void {
    if (this.shutdown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.metrics) {
      this.metrics.adds();
      this.addedAt.set(key, this.now());
    }
    // Re-queued by done(); handing it out now would put two workers on one key.
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Add `key` once `delayMs` has passed; at once when it is not positive, never when it is Infinity. */
  addAfter(key: K, delayMs: number): void {
    if (this.shutdown || delayMs === Infinity) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.now() + delayMs;
    this.delayed.schedule(key, readyAt);
    if (readyAt < this.timerAt) this.arm(readyAt);
  }

  addRateLimited(key: K): void {
    if (this.shutdown) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.metrics?.retries();
    this.addAfter(key, this.backoffMs(n));
  }

  /** The delay the n-th consecutive failure (from 0) waits. */
  backoffMs(n: number): number {
    // 2 ** n is Infinity for large n, which Math.min turns into the cap.
    return Math.min(this.baseDelayMs * 2 ** n, this.maxDelayMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  numRequeues(key: K): number {
    return this.failures.get(key) ?? 0;
  }

  get(): Promise<K | undefined> {
    if (this.shutdown) return Promise.resolve(undefined);
    if (this.queue.size > 0) {
      const key = this.queue.shift() as K;
      this.start(key);
      this.metrics?.depth(this.queue.size);
      return Promise.resolve(key);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  done(key: K): void {
    if (!this.processing.delete(key)) return;
    if (this.metrics) {
      const started = this.startedAt.get(key);
      this.startedAt.delete(key);
      if (started !== undefined) this.metrics.workDuration((this.now() - started) / 1000);
    }
    if (this.shutdown) {
      if (this.processing.size === 0) this.drained?.();
      return;
    }
    if (this.dirty.has(key)) this.enqueue(key);
  }

  /** Stop handing out keys: queued and delayed keys are dropped, waiting get()s resolve undefined. */
  shutDown(): void {
    if (this.shutdown) return;
    this.shutdown = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.delayed.clear();
    this.queue.clear();
    // Keys still processing stay dirty-free: done() will not re-queue them.
    this.dirty.clear();
    this.addedAt.clear();
    for (let waiter = this.waiters.shift(); waiter !== undefined; waiter = this.waiters.shift()) waiter(undefined);
    this.metrics?.depth(0);
  }

  /** shutDown, then resolve once every key handed out has been done(). */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0) return Promise.resolve();
    this.drainPromise ??= new Promise<void>((resolve) => {
      this.drained = resolve;
    });
    return this.drainPromise;
  }

  /** Hand `key` to the longest-waiting worker, or queue it. */
  private enqueue(key: K): void {
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      this.start(key);
      waiter(key);
      return;
    }
    this.queue.push(key);
    this.metrics?.depth(this.queue.size);
  }

  private start(key: K): void {
    this.dirty.delete(key);
    this.processing.add(key);
    if (this.metrics) {
      const now = this.now();
      const added = this.addedAt.get(key);
      this.addedAt.delete(key);
      if (added !== undefined) this.metrics.queueLatency((now - added) / 1000);
      this.startedAt.set(key, now);
    }
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    // Timers tick in whole milliseconds and may fire a fraction early against now(); fire()
    // re-arms for anything not yet due rather than adding it early. A due time past what one
    // timer holds is reached in steps: the step fires with nothing due and re-arms.
    const delay = Math.min(MaxTimerMs, Math.max(0, Math.ceil(at - this.now())));
    this.timer = setTimeout(() => this.fire(), delay);
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.now();
    for (let next = this.delayed.peek(); next !== undefined && next.readyAt <= now; next = this.delayed.peek()) {
      this.delayed.pop();
      this.add(next.key);
    }
    const next = this.delayed.peek();
    if (next !== undefined) this.arm(next.readyAt);
  }
}
