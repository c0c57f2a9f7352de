/** A list/watch transport driven by the test: push events, end or break the watch, change what a list returns. */
import type { V1Pod } from '@kubernetes/client-node';
import type { ListResult, ListWatchTransport, WatchEvent } from '@podlife/core';

export class ScriptedTransport implements ListWatchTransport<V1Pod> {
  items: V1Pod[];
  lists = 0;
  watches = 0;
  private rv = 1;
  private push: ((e: WatchEvent<V1Pod> | Error | 'end') => void) | undefined;
  private pending: (WatchEvent<V1Pod> | Error | 'end')[] = [];

  constructor(items: V1Pod[]) {
    this.items = items;
  }

  async list(_signal: AbortSignal, each: (pod: V1Pod) => V1Pod): Promise<ListResult<V1Pod>> {
    this.lists++;
    return { items: structuredClone(this.items).map(each), resourceVersion: String(this.rv) };
  }

  send(type: WatchEvent<V1Pod>['type'], pod: V1Pod): void {
    this.rv++;
    const object = structuredClone({ ...pod, metadata: { ...pod.metadata, resourceVersion: String(this.rv) } });
    this.deliver({ type, object });
  }
  /** The server closes the stream (as on an API server restart). */
  end(): void {
    this.deliver('end');
  }
  fail(err: Error): void {
    this.deliver(err);
  }

  private deliver(item: WatchEvent<V1Pod> | Error | 'end'): void {
    const push = this.push;
    this.push = undefined;
    if (push) push(item);
    else this.pending.push(item);
  }

  async *watch(_rv: string, signal: AbortSignal): AsyncIterable<WatchEvent<V1Pod>> {
    this.watches++;
    for (;;) {
      // Like a real request, a watch opened with an aborted signal fails at once.
      if (signal.aborted) throw signal.reason;
      const item = this.pending.shift() ?? (await new Promise<WatchEvent<V1Pod> | Error | 'end'>((resolve, reject) => {
        this.push = resolve;
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }));
      if (item === 'end') return;
      if (item instanceof Error) throw item;
      yield item;
    }
  }
}

export const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));
