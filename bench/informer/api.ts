/**
 * A loopback stand-in for the API server's pod collection, so the informer under test runs its
 * production path end to end: `KubeClient` over HTTP, paged list, JSON parsing, watch stream.
 *
 * Guarantees:
 * - `GET /api/v1/pods?limit=L&continue=T` answers a PodList page exactly as the API server
 *   shapes it (items without apiVersion/kind, `metadata.continue` and `remainingItemCount`
 *   while more remain), generating each page on demand so the server holds no pods;
 * - `GET /api/v1/namespaces/empty/pods` answers an empty list (the baseline process);
 * - `?watch=true&sendInitialEvents=true` is a streaming list as the API server serves one: an
 *   ADDED event per pod, written as fast as the client reads (never ahead of the socket's
 *   backpressure, so the server holds at most one pod), then the BOOKMARK annotated
 *   `k8s.io/initial-events-end`, then an idle watch; with `streaming: false` it is refused
 *   with 422, as by a server whose WatchList feature is off;
 * - `?watch=true` opens a watch that stays idle: headers at once, then only a BOOKMARK every
 *   `bookmarkMs`, until the client goes away;
 * - every `OPT_IN_EVERY`-th pod (5%) carries `podlife.dev/managed: "true"`, and a list or stream
 *   with `labelSelector=podlife.dev/managed=true` serves only those, as the API server filters;
 * - `rawBytes` is the total size of the pod items served in the first complete unfiltered list or stream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pod } from './pods.js';

export interface FakePodApi {
  readonly url: string;
  /** Bytes of the pod items of one full list (known after the first full list was served). */
  readonly rawBytes: number | undefined;
  close(): Promise<void>;
}

const RESOURCE_VERSION = '2000000';

/** One pod in this many opted in to podlife's cache (DESIGN 10: 5%). */
export const OPT_IN_EVERY = 20;
const MANAGED_SELECTOR = 'podlife.dev/managed=true';

/** The pod at index `i`, labelled when it opted in. */
function served(i: number): string {
  const p = pod(i);
  if (i % OPT_IN_EVERY === 0) p.metadata = { ...p.metadata, labels: { ...p.metadata?.labels, 'podlife.dev/managed': 'true' } };
  return JSON.stringify(p);
}

/** How many pods a list selects, and the index of the n-th of them. */
function selection(total: number, selector: string | null): { count: number; index: (n: number) => number } {
  if (selector === MANAGED_SELECTOR) return { count: Math.ceil(total / OPT_IN_EVERY), index: (n) => n * OPT_IN_EVERY };
  if (selector) throw new Error(`the fake API filters only by ${MANAGED_SELECTOR}, not ${selector}`);
  return { count: total, index: (n) => n };
}

function continueToken(start: number): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: Number(RESOURCE_VERSION), start: String(start) })).toString('base64url');
}

function startOf(token: string | null): number {
  if (!token) return 0;
  const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { start?: string };
  return Number(parsed.start ?? 0);
}

/** Resolves when `res` can take more, or is gone. */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resume) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resume();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export function startFakePodApi(opts: { pods: number; bookmarkMs?: number; streaming?: boolean }): Promise<FakePodApi> {
  const bookmarkMs = opts.bookmarkMs ?? 30_000;
  let counted = 0;
  let rawBytes: number | undefined;
  let countedUpTo = 0;

  /** Counts each index once, in order, so a repeated list does not count twice. */
  function count(i: number, item: string, total: number): void {
    if (rawBytes !== undefined || i !== countedUpTo) return;
    counted += Buffer.byteLength(item);
    countedUpTo++;
    if (countedUpTo === total) rawBytes = counted;
  }

  const bookmark = (annotations?: Record<string, string>): string =>
    `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: RESOURCE_VERSION, ...(annotations ? { annotations } : {}) } } })}\n`;

  function idle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const timer = setInterval(() => res.write(bookmark()), bookmarkMs);
    const end = (): void => clearInterval(timer);
    req.on('close', end);
    res.on('close', end);
  }

  async function streamList(req: http.IncomingMessage, res: http.ServerResponse, total: number, selector: string | null): Promise<void> {
    let gone = false;
    req.on('close', () => (gone = true));
    const { count: selected, index } = selection(total, selector);
    for (let n = 0; n < selected && !gone; n++) {
      const i = index(n);
      const item = served(i);
      if (!selector) count(i, item, total);
      const line = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1",${item.slice(1)}}\n`;
      if (!res.write(line)) await drained(res);
    }
    if (gone) return;
    res.write(bookmark({ 'k8s.io/initial-events-end': 'true' }));
    idle(req, res);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const empty = url.pathname === '/api/v1/namespaces/empty/pods';
    if (url.pathname !== '/api/v1/pods' && !empty) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${url.pathname} not found` }));
      return;
    }
    const total = empty ? 0 : opts.pods;
    const streamingList = url.searchParams.get('sendInitialEvents') === 'true';
    if (url.searchParams.get('watch') === 'true' && streamingList && opts.streaming === false) {
      res.writeHead(422, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422, message: 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' }));
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      if (streamingList) void streamList(req, res, total, url.searchParams.get('labelSelector'));
      else idle(req, res);
      return;
    }
    const selector = url.searchParams.get('labelSelector');
    const { count: selected, index } = selection(total, selector);
    const limit = Number(url.searchParams.get('limit') ?? 0) || selected;
    const start = startOf(url.searchParams.get('continue'));
    const end = Math.min(selected, start + limit);
    const items: string[] = [];
    for (let n = start; n < end; n++) {
      const i = index(n);
      const item = served(i);
      items.push(item);
      if (!empty && !selector) count(i, item, total);
    }
    const metadata: Record<string, unknown> = { resourceVersion: RESOURCE_VERSION };
    if (end < selected) {
      metadata.continue = continueToken(end);
      metadata.remainingItemCount = selected - end;
    }
    const body = `{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        get rawBytes() {
          return rawBytes;
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
