/**
 * List and watch over HTTP: the transport an `Informer` drives.
 *
 * Guarantees:
 * - `list` returns every object and the collection's resourceVersion, reading in pages, each
 *   item of a page parsed alone as its bytes arrive and transformed before the next is parsed
 *   (never a page's body or objects whole, docs/adr/0281); when a continue token expires mid-way (410),
 *   the pages read so far are dropped and the list starts over in pages from a fresh read, at
 *   most EXPIRED_LIST_ATTEMPTS times before the 410 is thrown — never one unpaged list, which
 *   would hold every object in full at once (docs/adr/0252);
 * - `watch` yields one event per line of the API's line-delimited JSON stream, bookmarks
 *   included, and ends when the server ends the stream; an ERROR event is thrown as an
 *   `ApiError` (410 for an expired resourceVersion, so `isGone` recognises it);
 * - `watchList` is the streaming list (KEP-3157): the same stream, opened with
 *   `sendInitialEvents=true`, so the current objects arrive one event at a time and the whole
 *   collection is never one response; a server that does not serve it answers an `ApiError`
 *   (422 while its WatchList feature is off), which `refusesStreamingList` recognises;
 * - a watch has no client-side request timeout (it is not cut after N seconds however healthy);
 *   liveness is the caller's inactivity watchdog, and the server's `timeoutSeconds` ends each
 *   watch cleanly after 5 to 10 minutes so connections are recycled.
 */
import type { V1Status } from '@kubernetes/client-node';
import { ApiError, isGone, type KubeClient, type Query } from './client.js';
import { parseDeferringManagedFields } from './managed-fields.js';
import { readPage, type PageFields } from './page.js';
import type { KubeObject } from './store.js';

/** The event types of a watch stream. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** One event of a watch stream. */
export interface WatchEvent<T> {
  type: WatchEventType;
  object: T;
}

/** A complete list and the resourceVersion a watch resumes from. */
export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

/** The annotation on the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** True for the bookmark after which a streaming list's objects are complete. */
export function isInitialEventsEnd(event: WatchEvent<KubeObject>): boolean {
  return event.type === 'BOOKMARK' && event.object?.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true';
}

/**
 * True when the API server declined a streaming list (client error: the WatchList feature off,
 * an unknown parameter, no permission) rather than failing to serve it; 410 and 429 are failures
 * worth retrying as they are.
 */
export function refusesStreamingList(err: unknown): boolean {
  return err instanceof ApiError && err.status >= 400 && err.status < 500 && ![408, 410, 429].includes(err.status);
}

/** What an informer needs from the API; tests pass a scripted one. */
export interface ListWatchTransport<T> {
  /**
   * Every object, each passed through `each` as soon as it is read: a paged list then never
   * holds more than one page of untransformed objects, so a slimming transform bounds the
   * memory of the whole list, not only of the cache that follows it.
   */
  list(signal: AbortSignal, each: (obj: T) => T): Promise<ListResult<T>>;
  /** Events after `resourceVersion`; the iterable ends when the server closes the stream. */
  watch(resourceVersion: string, signal: AbortSignal): AsyncIterable<WatchEvent<T>>;
  /**
   * The streaming list, where the transport has one: every current object as an ADDED event,
   * then a BOOKMARK annotated `k8s.io/initial-events-end: "true"` (`isInitialEventsEnd`), then
   * the events `watch` would deliver, on the same stream.
   */
  watchList?(signal: AbortSignal): AsyncIterable<WatchEvent<T>>;
}

export interface KubeListWatchOptions {
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Objects per list page; default 100. A page is read one item at a time, so its size sets the
   * number of requests, not the memory of the list (docs/adr/0281; whole pages of 500 pods had
   * peaked at 1.8x the steady cache at 150k pods, ADR 0080).
   */
  pageSize?: number;
}

/**
 * Paged lists started per `list` call when continue tokens keep expiring (410): each starts at a
 * fresh read, so only a compaction during that list expires it again; past this, the 410 is the
 * caller's (an informer backs off and lists again).
 */
export const EXPIRED_LIST_ATTEMPTS = 3;

/**
 * The built-in transport, with what an `Informer` that built it uses besides the public interface:
 * `listEach`, the paged list handing over each transformed object as it is read (rather than an
 * array of them) and saying when an expired list starts over, so the informer can gather them
 * into the table its store adopts. Internal to core.
 */
export interface KubeListWatch<T> extends ListWatchTransport<T> {
  /** Each object of the collection through `each`; `startOver` when what was handed over so far is void. Resolves with the resourceVersion. */
  listEach(signal: AbortSignal, each: (obj: T) => void, startOver: () => void): Promise<string>;
}

/** How long a list page may go without a byte from the API server. */
const PAGE_TIMEOUT_MS = 30_000;

/** The real transport: list and watch `path` through `client`. */
export function kubeListWatch<T extends KubeObject>(client: KubeClient, opts: KubeListWatchOptions): KubeListWatch<T> {
  const selectors: Query = { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector };
  const pageSize = opts.pageSize ?? 100;
  const what = `listing ${opts.path}`;

  /**
   * One page, read item by item as its bytes arrive (`readPage`): each full object is transformed
   * and let go before the next is parsed, so neither the page's body nor its objects are ever held
   * whole (docs/adr/0281). Resolves with the page's metadata.
   */
  async function page(signal: AbortSignal, token: string | undefined, each: (obj: T) => void): Promise<{ resourceVersion?: string; continue?: string }> {
    const res = await client.stream({ path: opts.path, query: { ...selectors, limit: pageSize, continue: token }, signal, timeoutMs: PAGE_TIMEOUT_MS });
    // Items read before the page named its kind (no API server writes one so) wait for the end of the page.
    const early: T[] = [];
    const typed = (item: unknown, fields: PageFields): T => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new Error(`${what}: an item of the answer is ${JSON.stringify(item)?.slice(0, 40)}, not an object`);
      const obj = item as T;
      // List items come without apiVersion/kind; watch events carry them. Make both look alike.
      obj.apiVersion ??= fields.apiVersion as string | undefined;
      obj.kind ??= (fields.kind as string | undefined)?.replace(/List$/, '');
      return obj;
    };
    let fields: PageFields;
    try {
      fields = await readPage(
        res,
        what,
        (item, sofar) => {
          if (sofar.kind === undefined || sofar.apiVersion === undefined) early.push(item as T);
          else each(typed(item, sofar));
        },
        parseItem,
      );
    } finally {
      res.destroy();
    }
    for (const item of early) each(typed(item, fields));
    const metadata = (fields.metadata ?? {}) as { resourceVersion?: string; continue?: string };
    return metadata;
  }

  async function listPaged(signal: AbortSignal, each: (obj: T) => void): Promise<string> {
    for (let token: string | undefined; ; ) {
      const metadata = await page(signal, token, each);
      token = metadata.continue || undefined;
      if (!token) return metadata.resourceVersion ?? '';
    }
  }

  async function listEach(signal: AbortSignal, each: (obj: T) => void, startOver: () => void): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await listPaged(signal, each);
      } catch (err) {
        // An expired continue token: the pages so far may be inconsistent with the rest.
        if (!isGone(err) || attempt >= EXPIRED_LIST_ATTEMPTS) throw err;
        startOver();
      }
    }
  }

  return {
    listEach,
    async list(signal, each) {
      let items: T[] = [];
      const resourceVersion = await listEach(
        signal,
        (obj) => items.push(each(obj)),
        () => (items = []),
      );
      return { items, resourceVersion };
    },
    watch(resourceVersion, signal) {
      return events({ resourceVersion }, signal);
    },
    watchList(signal) {
      // resourceVersion "" with NotOlderThan: a consistent read, never older than etcd now.
      return events({ resourceVersion: '', sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' }, signal);
    },
  };

  async function* events(query: Query, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
    const res = await client.stream({
      path: opts.path,
      query: { ...selectors, watch: true, allowWatchBookmarks: true, ...query, timeoutSeconds },
      signal,
    });
    try {
      for await (const line of lines(res)) {
        const event = parseEvent<T>(line, opts.path);
        if (event) yield event;
      }
    } finally {
      res.destroy();
    }
  }
}

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into non-empty text lines.
 *
 * Lines are cut from the bytes and each is decoded on its own, so no string is ever longer than a
 * line. A stream's reader hands over everything buffered at once (often well over 128 KiB while the
 * reader is busy); decoded whole, or joined to the unfinished line before it, that would be a string
 * in V8's large-object space, which a scavenge that finds it still in use promotes and only a full
 * collection frees: one such string per scavenge, kept until the next full collection, was a fifth
 * of the informer's peak during a 150k-pod streaming list (docs/adr/0276).
 */
export async function* lines(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  // The bytes of the line not finished yet: views into the chunks that carried them.
  let carried: Buffer[] = [];
  for await (const chunk of chunks) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    let start = 0;
    // A newline byte never occurs inside a multi-byte UTF-8 character, so every line decodes whole.
    for (let nl = bytes.indexOf(NEWLINE); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
      const tail = bytes.subarray(start, nl);
      const line = carried.length === 0 ? decoder.decode(tail) : decoder.decode(Buffer.concat([...carried, tail]));
      carried = [];
      start = nl + 1;
      const trimmed = line.trim();
      if (trimmed) yield trimmed;
    }
    if (start < bytes.length) carried.push(start === 0 ? bytes : bytes.subarray(start));
  }
  const last = carried.length === 0 ? '' : decoder.decode(Buffer.concat(carried)).trim();
  if (last) yield last;
}

/** An item of a list page: its `metadata.managedFields` parsed only if read (docs/adr/0282). */
const parseItem = (text: string): unknown => parseDeferringManagedFields(text, 'object');

/** One watch line as an event; throws the API's ERROR events, skips lines that are not events. */
export function parseEvent<T>(line: string, path: string): WatchEvent<T> | undefined {
  let raw: unknown;
  try {
    // The object's managedFields parsed only if read (docs/adr/0282).
    raw = parseDeferringManagedFields(line, 'event');
  } catch {
    throw new Error(`watch ${path}: malformed event line: ${line.slice(0, 120)}`);
  }
  const event = raw as { type?: string; object?: unknown };
  if (event.type === 'ERROR') {
    const status = (event.object ?? {}) as V1Status;
    const code = status.code ?? 500;
    throw new ApiError(code, status.reason ?? 'Unknown', `watch ${path}: ${code} ${status.message ?? ''}`.trim(), status);
  }
  switch (event.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED':
    case 'BOOKMARK':
      return { type: event.type, object: event.object as T };
    default:
      return undefined;
  }
}
