/**
 * A loopback stand-in for the API server's pod and node collections, so the informer under test
 * runs its production path end to end: `KubeClient` over HTTP, paged list, JSON parsing, watch stream.
 *
 * Guarantees:
 * - `GET /api/v1/pods?limit=L&continue=T` answers a PodList page exactly as the API server
 *   shapes it (items without apiVersion/kind, `metadata.continue` and `remainingItemCount`
 *   while more remain), generating each page on demand so the server holds no pods;
 * - `GET /api/v1/namespaces/empty/pods` answers an empty list (the baseline process);
 * - `/api/v1/nodes` serves `nodes` generated Nodes (none by default) the same ways, list and
 *   streaming list, without label selection;
 * - `?watch=true&sendInitialEvents=true` is a streaming list as the API server serves one: an
 *   ADDED event per pod, written as fast as the client reads (never ahead of the socket's
 *   backpressure, so the server holds at most one pod), then the BOOKMARK annotated
 *   `k8s.io/initial-events-end`, then an idle watch; with `streaming: false` it is refused
 *   with 422, as by a server whose WatchList feature is off;
 * - `?watch=true` opens a watch that stays idle: headers at once, then only a BOOKMARK every
 *   `bookmarkMs`, until the client goes away;
 * - every `OPT_IN_EVERY`-th pod (5%) carries `podlife.dev/managed: "true"`, and a list or stream
 *   with `labelSelector=podlife.dev/managed=true` serves only those, as the API server filters;
 * - `rawBytes` (`nodeRawBytes`) is the total size of the pod (node) items served in the first
 *   complete unfiltered list or stream.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { node } from './nodes.js';
import { OPT_IN_EVERY } from './opt-in.js';
import { pod } from './pods.js';

export interface FakePodApi {
  readonly url: string;
  /** Bytes of the pod items of one full list (known after the first full list was served). */
  readonly rawBytes: number | undefined;
  /** The same for the nodes. */
  readonly nodeRawBytes: number | undefined;
  close(): Promise<void>;
}

const RESOURCE_VERSION = '2000000';

export { OPT_IN_EVERY };
const MANAGED_SELECTOR = 'podlife.dev/managed=true';

/** The pod at index `i`, labelled when it opted in. */
function servedPod(i: number): string {
  const p = pod(i);
  if (i % OPT_IN_EVERY === 0) p.metadata = { ...p.metadata, labels: { ...p.metadata?.labels, 'podlife.dev/managed': 'true' } };
  return JSON.stringify(p);
}

/** How many pods a list selects, and the index of the n-th of them. */
function podSelection(total: number, selector: string | null): { count: number; index: (n: number) => number } {
  if (selector === MANAGED_SELECTOR) return { count: Math.ceil(total / OPT_IN_EVERY), index: (n) => n * OPT_IN_EVERY };
  if (selector) throw new Error(`the fake API filters only by ${MANAGED_SELECTOR}, not ${selector}`);
  return { count: total, index: (n) => n };
}

function nodeSelection(total: number, selector: string | null): { count: number; index: (n: number) => number } {
  if (selector) throw new Error(`the fake API does not filter nodes, asked for ${selector}`);
  return { count: total, index: (n) => n };
}

/** One collection the fake API serves: its kind, its items by index, and how a selector picks them. */
interface Collection {
  kind: 'Pod' | 'Node';
  total: number;
  item: (i: number) => string;
  selection: typeof podSelection;
  /** Counts each index once, in order, so a repeated list does not count twice. */
  count: (i: number, item: string) => void;
  rawBytes: () => number | undefined;
}

function collection(kind: Collection['kind'], total: number, item: Collection['item'], selection: Collection['selection']): Collection {
  let counted = 0;
  let countedUpTo = 0;
  let rawBytes: number | undefined;
  return {
    kind,
    total,
    item,
    selection,
    count(i, served) {
      if (rawBytes !== undefined || i !== countedUpTo) return;
      counted += Buffer.byteLength(served);
      countedUpTo++;
      if (countedUpTo === total) rawBytes = counted;
    },
    rawBytes: () => rawBytes,
  };
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

export function startFakePodApi(opts: { pods: number; nodes?: number; bookmarkMs?: number; streaming?: boolean }): Promise<FakePodApi> {
  const bookmarkMs = opts.bookmarkMs ?? 30_000;
  const pods = collection('Pod', opts.pods, servedPod, podSelection);
  const nodes = collection('Node', opts.nodes ?? 0, (i) => JSON.stringify(node(i)), nodeSelection);
  const collections = new Map<string, { served: Collection; empty: boolean }>([
    ['/api/v1/pods', { served: pods, empty: false }],
    ['/api/v1/namespaces/empty/pods', { served: pods, empty: true }],
    ['/api/v1/nodes', { served: nodes, empty: false }],
  ]);

  const bookmark = (kind: Collection['kind'], annotations?: Record<string, string>): string =>
    `${JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion: 'v1', metadata: { resourceVersion: RESOURCE_VERSION, ...(annotations ? { annotations } : {}) } } })}\n`;

  function idle(req: http.IncomingMessage, res: http.ServerResponse, kind: Collection['kind']): void {
    const timer = setInterval(() => res.write(bookmark(kind)), bookmarkMs);
    const end = (): void => clearInterval(timer);
    req.on('close', end);
    res.on('close', end);
  }

  async function streamList(req: http.IncomingMessage, res: http.ServerResponse, c: Collection, total: number, selector: string | null): Promise<void> {
    let gone = false;
    req.on('close', () => (gone = true));
    const { count: selected, index } = c.selection(total, selector);
    for (let n = 0; n < selected && !gone; n++) {
      const i = index(n);
      const item = c.item(i);
      if (!selector) c.count(i, item);
      const line = `{"type":"ADDED","object":{"kind":"${c.kind}","apiVersion":"v1",${item.slice(1)}}\n`;
      if (!res.write(line)) await drained(res);
    }
    if (gone) return;
    res.write(bookmark(c.kind, { 'k8s.io/initial-events-end': 'true' }));
    idle(req, res, c.kind);
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const found = collections.get(url.pathname);
    if (!found) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `${url.pathname} not found` }));
      return;
    }
    const { served: c, empty } = found;
    const total = empty ? 0 : c.total;
    const streamingList = url.searchParams.get('sendInitialEvents') === 'true';
    if (url.searchParams.get('watch') === 'true' && streamingList && opts.streaming === false) {
      res.writeHead(422, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422, message: 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled' }));
      return;
    }
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.flushHeaders();
      if (streamingList) void streamList(req, res, c, total, url.searchParams.get('labelSelector'));
      else idle(req, res, c.kind);
      return;
    }
    const selector = url.searchParams.get('labelSelector');
    const { count: selected, index } = c.selection(total, selector);
    const limit = Number(url.searchParams.get('limit') ?? 0) || selected;
    const start = startOf(url.searchParams.get('continue'));
    const end = Math.min(selected, start + limit);
    const items: string[] = [];
    for (let n = start; n < end; n++) {
      const i = index(n);
      const item = c.item(i);
      items.push(item);
      if (!empty && !selector) c.count(i, item);
    }
    const metadata: Record<string, unknown> = { resourceVersion: RESOURCE_VERSION };
    if (end < selected) {
      metadata.continue = continueToken(end);
      metadata.remainingItemCount = selected - end;
    }
    const body = `{"kind":"${c.kind}List","apiVersion":"v1","metadata":${JSON.stringify(metadata)},"items":[${items.join(',')}]}`;
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
          return pods.rawBytes();
        },
        get nodeRawBytes() {
          return nodes.rawBytes();
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
