// A scripted ListWatchTransport: tests decide what each list returns and push watch events by hand.
// With `{ streaming: true }` it also offers a streaming list, whose events tests push the same way.
import type { ListResult, ListWatchTransport, WatchEvent } from '../../src/watch.js';
import type { KubeObject } from '../../src/store.js';
import { ApiError } from '../../src/client.js';

export interface TestObject extends KubeObject {
  spec?: { value?: string };
}

export function obj(name: string, rv: string, value = 'v', namespace = 'ns'): TestObject {
  return { apiVersion: 'v1', kind: 'Thing', metadata: { name, namespace, resourceVersion: rv }, spec: { value } };
}

export function bookmark(rv: string): WatchEvent<TestObject> {
  return { type: 'BOOKMARK', object: { metadata: { resourceVersion: rv } } };
}

/** The bookmark that closes a streaming list's initial events. */
export function initialEventsEnd(rv: string): WatchEvent<TestObject> {
  return { type: 'BOOKMARK', object: { metadata: { resourceVersion: rv, annotations: { 'k8s.io/initial-events-end': 'true' } } } };
}

/** One watch stream; ignores aborts when `deaf` (to prove the watchdog does not rely on them). */
export class FakeStream implements AsyncIterable<WatchEvent<TestObject>> {
  private readonly buffered: (WatchEvent<TestObject> | Error | 'end')[] = [];
  private waiter: ((v: WatchEvent<TestObject> | Error | 'end') => void) | undefined;
  readonly rv: string;
  /** Opened as a streaming list rather than a watch from `rv`. */
  readonly streamingList: boolean;

  constructor(rv: string, signal: AbortSignal, deaf: boolean, streamingList = false) {
    this.rv = rv;
    this.streamingList = streamingList;
    if (!deaf) signal.addEventListener('abort', () => this.fail(new Error('aborted')), { once: true });
  }

  push(event: WatchEvent<TestObject>): void {
    this.deliver(event);
  }
  end(): void {
    this.deliver('end');
  }
  fail(err: Error): void {
    this.deliver(err);
  }
  gone(): void {
    this.fail(new ApiError(410, 'Expired', 'too old resource version', undefined));
  }

  private deliver(v: WatchEvent<TestObject> | Error | 'end'): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(v);
    } else this.buffered.push(v);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WatchEvent<TestObject>> {
    for (;;) {
      const v = this.buffered.shift() ?? (await new Promise<WatchEvent<TestObject> | Error | 'end'>((r) => (this.waiter = r)));
      if (v === 'end') return;
      if (v instanceof Error) throw v;
      yield v;
    }
  }
}

export class FakeTransport implements ListWatchTransport<TestObject> {
  /** Answers for successive lists; the last one repeats. */
  lists: (ListResult<TestObject> | Error)[] = [];
  readonly watches: FakeStream[] = [];
  listCalls = 0;
  deaf = false;
  private watchWaiters: (() => void)[] = [];
  watchList?: (signal: AbortSignal) => AsyncIterable<WatchEvent<TestObject>>;

  constructor(opts: { streaming?: boolean } = {}) {
    if (opts.streaming) this.watchList = (signal) => this.open(new FakeStream('', signal, this.deaf, true));
  }

  async list(_signal: AbortSignal, each: (obj: TestObject) => TestObject): Promise<ListResult<TestObject>> {
    this.listCalls++;
    const next = this.lists.length > 1 ? this.lists.shift() : this.lists[0];
    if (next === undefined) throw new Error('no list scripted');
    if (next instanceof Error) throw next;
    return { items: next.items.map((o) => each(structuredClone(o))), resourceVersion: next.resourceVersion };
  }

  watch(resourceVersion: string, signal: AbortSignal): AsyncIterable<WatchEvent<TestObject>> {
    return this.open(new FakeStream(resourceVersion, signal, this.deaf));
  }

  private open(stream: FakeStream): FakeStream {
    this.watches.push(stream);
    const waiters = this.watchWaiters;
    this.watchWaiters = [];
    for (const w of waiters) w();
    return stream;
  }

  /** Resolves with the n-th watch (1-based) once it has been opened. */
  async watchNo(n: number): Promise<FakeStream> {
    while (this.watches.length < n) await new Promise<void>((r) => this.watchWaiters.push(r));
    return this.watches[n - 1]!;
  }
}
