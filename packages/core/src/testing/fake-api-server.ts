/**
 * FakeApiServer: an in-memory Kubernetes API over HTTP on 127.0.0.1, for unit tests of
 * controllers built on podlife. Point a real `KubeClient` at it (`server.client()`), so the code
 * under test runs its real informers, queues, patches and retries; no binaries, no cluster.
 *
 * Guarantees (what it serves, as kube-apiserver does for any resource path, core or grouped):
 * - get, list (label selectors `=`, `==`, `!=`, `in`, `notin`, `k`, `!k`; field selectors on any
 *   dotted path with `=`/`!=`; `limit`/`continue` pages), create (generateName, uid,
 *   creationTimestamp, 409 AlreadyExists), replace and patch (JSON, merge and strategic merge;
 *   a stale `metadata.resourceVersion` is 409 Conflict, a failed JSON patch `test` 422), delete
 *   (an object with finalizers gets a deletionTimestamp and goes when they are removed);
 * - `status` and `ephemeralcontainers` subresources write only their part of the object;
 * - watch from a resourceVersion (replayed from history, 410 Gone once `compact()` dropped it),
 *   streaming lists (`sendInitialEvents`, ending with the initial-events-end bookmark), periodic
 *   bookmarks, `timeoutSeconds`; a change that moves an object in or out of a watch's selector
 *   arrives as ADDED / DELETED, as the real server sends it;
 * - every error is a `Status` with the reason and code the real server uses; `requests` records
 *   method, path, query and content type of every request, for assertions.
 * Not served: authentication and authorisation, admission, validation of object schemas,
 * exec/attach/log/portforward, server-side apply, defaulting, garbage collection.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient } from '../client.js';
import { ContentType, type JsonPatchOp } from '../patch.js';
import { PatchError, applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './apply-patch.js';

/** An object as stored: any Kubernetes object. */
export interface StoredObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    finalizers?: string[];
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/** One request the fake server answered, as `requests` records it. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType?: string;
}

/** Settings of `FakeApiServer.start`. */
export interface FakeApiServerOptions {
  /** How often a watch that asked for bookmarks gets one; default 1000 ms. */
  bookmarkIntervalMs?: number;
}

interface Target {
  /** `v1/pods`, `apps/v1/deployments`: one collection. */
  collection: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface Change {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  collection: string;
  object: StoredObject;
  old?: StoredObject;
}

interface Watcher {
  collection: string;
  namespace?: string;
  matches(obj: StoredObject): boolean;
  send(type: string, obj: StoredObject): void;
  /** Ends the stream and its timers. */
  close(): void;
}

class HttpError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });

/** The in-memory API server; `start()` listens on a free loopback port, `stop()` closes every watch. */
export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  private readonly objects = new Map<string, Map<string, StoredObject>>();
  private readonly history: Change[] = [];
  private readonly watchers = new Set<Watcher>();
  private rv = 1;
  /** Watches may start after this resourceVersion; older ones get 410 Gone. */
  private oldest = 0;
  private readonly server: http.Server;
  private readonly bookmarkMs: number;
  private clients: KubeClient[] = [];

  private constructor(opts: FakeApiServerOptions) {
    this.bookmarkMs = opts.bookmarkIntervalMs ?? 1000;
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  static async start(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const fake = new FakeApiServer(opts);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** e.g. `http://127.0.0.1:41234`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A client of this server; closed by `stop()`. */
  client(): KubeClient {
    const client = KubeClient.fromConnection({ server: this.url });
    this.clients.push(client);
    return client;
  }

  /** The stored object at an object path (`/api/v1/namespaces/ns/pods/p`), or undefined; a copy. */
  get<T = StoredObject>(path: string): T | undefined {
    const t = parsePath(path);
    const obj = t && t.name !== undefined ? this.objects.get(t.collection)?.get(key(t.namespace, t.name)) : undefined;
    return obj ? (structuredClone(obj) as T) : undefined;
  }

  /** Forgets the change history: a watch from any earlier resourceVersion gets 410 Gone, as after etcd compaction. */
  compact(): void {
    this.history.length = 0;
    this.oldest = this.rv;
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.close();
    for (const w of [...this.watchers]) w.close();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const contentType = req.headers['content-type']?.split(';')[0]?.trim();
    this.requests.push({ method: req.method ?? 'GET', path: url.pathname, query, ...(contentType ? { contentType } : {}) });
    try {
      const target = parsePath(url.pathname);
      if (!target) throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${url.pathname})`);
      if (req.method === 'PATCH' && !PATCH_TYPES.includes(contentType ?? '')) patch({}, contentType, undefined);
      const body = await readBody(req);
      if (req.method === 'GET' && (query.watch === 'true' || query.watch === '1')) return this.watch(target, query, res);
      const answer = this.dispatch(req.method ?? 'GET', target, query, contentType, body);
      send(res, answer.code, answer.body);
    } catch (err) {
      if (err instanceof HttpError) send(res, err.code, status(err.code, err.reason, err.message));
      else if (err instanceof PatchError) send(res, 422, status(422, 'Invalid', err.message));
      else send(res, 500, status(500, 'InternalError', err instanceof Error ? err.message : String(err)));
    }
  }

  private dispatch(method: string, t: Target, query: Record<string, string>, contentType: string | undefined, body: unknown): { code: number; body: unknown } {
    if (t.subresource && !['status', 'ephemeralcontainers'].includes(t.subresource)) {
      throw new HttpError(404, 'NotFound', `the fake API server does not serve the ${t.subresource} subresource`);
    }
    if (method === 'GET') return { code: 200, body: t.name === undefined ? this.list(t, query) : this.read(t) };
    if (method === 'POST' && t.name === undefined) return { code: 201, body: this.create(t, body) };
    if (method === 'PUT' && t.name !== undefined) return { code: 200, body: this.update(t, () => body as StoredObject, body) };
    if (method === 'PATCH' && t.name !== undefined) return { code: 200, body: this.update(t, (current) => patch(current, contentType, body), body) };
    if (method === 'DELETE' && t.name !== undefined) return { code: 200, body: this.remove(t) };
    throw new HttpError(405, 'MethodNotAllowed', `${method} is not allowed on ${t.name === undefined ? 'a collection' : 'an object'}`);
  }

  private store(collection: string): Map<string, StoredObject> {
    let m = this.objects.get(collection);
    if (!m) this.objects.set(collection, (m = new Map()));
    return m;
  }

  private read(t: Target): StoredObject {
    const obj = this.store(t.collection).get(key(t.namespace, t.name as string));
    if (!obj) throw notFound(t);
    return obj;
  }

  private list(t: Target, query: Record<string, string>): unknown {
    const selected = this.select(t, query);
    const limit = Number(query.limit ?? 0);
    const start = query.continue ? Number(Buffer.from(query.continue, 'base64url').toString()) : 0;
    const page = limit > 0 ? selected.slice(start, start + limit) : selected.slice(start);
    const next = limit > 0 && start + limit < selected.length ? Buffer.from(String(start + limit)).toString('base64url') : undefined;
    return { kind: 'List', apiVersion: 'v1', metadata: { resourceVersion: String(this.rv), ...(next ? { continue: next } : {}) }, items: page };
  }

  private select(t: Target, query: Record<string, string>): StoredObject[] {
    const matches = selectorMatcher(query);
    return [...this.store(t.collection).values()].filter((o) => (t.namespace === undefined || o.metadata?.namespace === t.namespace) && matches(o));
  }

  private create(t: Target, body: unknown): StoredObject {
    if (t.subresource) throw new HttpError(405, 'MethodNotAllowed', 'create on a subresource');
    const obj = structuredClone(body) as StoredObject;
    if (typeof obj !== 'object' || obj === null) throw new HttpError(400, 'BadRequest', 'body is not an object');
    const meta = (obj.metadata ??= {});
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomUUID().slice(0, 5)}`;
    if (!meta.name) throw new HttpError(422, 'Invalid', 'metadata.name: Required value: name or generateName is required');
    if (t.namespace !== undefined) {
      if (meta.namespace !== undefined && meta.namespace !== t.namespace) throw new HttpError(400, 'BadRequest', `the namespace of the object (${meta.namespace}) does not match the namespace of the request (${t.namespace})`);
      meta.namespace = t.namespace;
    }
    const k = key(meta.namespace, meta.name);
    if (this.store(t.collection).has(k)) throw new HttpError(409, 'AlreadyExists', `${t.collection.split('/').pop()} "${meta.name}" already exists`);
    meta.uid = randomUUID();
    meta.creationTimestamp = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    delete meta.deletionTimestamp;
    this.write(t.collection, k, obj, 'ADDED');
    return obj;
  }

  private update(t: Target, change: (current: StoredObject) => StoredObject, body: unknown): StoredObject {
    const current = this.read(t);
    const asked = (body as StoredObject | undefined)?.metadata?.resourceVersion;
    if (asked !== undefined && asked !== current.metadata?.resourceVersion) {
      throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${t.collection.split('/').pop()} "${t.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    const changed = change(structuredClone(current));
    let next: StoredObject;
    if (t.subresource === 'status') next = { ...current, status: changed.status };
    else if (t.subresource === 'ephemeralcontainers') next = { ...current, spec: { ...(current.spec as object), ephemeralContainers: (changed.spec as { ephemeralContainers?: unknown } | undefined)?.ephemeralContainers } };
    else next = changed;
    // Identity fields are the server's.
    next.metadata = { ...next.metadata, name: current.metadata?.name, namespace: current.metadata?.namespace, uid: current.metadata?.uid, creationTimestamp: current.metadata?.creationTimestamp };
    if (current.metadata?.deletionTimestamp) next.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
    const k = key(t.namespace, t.name as string);
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length)) {
      this.write(t.collection, k, next, 'DELETED');
      return next;
    }
    this.write(t.collection, k, next, 'MODIFIED', current);
    return next;
  }

  private remove(t: Target): StoredObject {
    const current = this.read(t);
    const k = key(t.namespace, t.name as string);
    if (current.metadata?.finalizers?.length) {
      if (current.metadata.deletionTimestamp) return current;
      const next = { ...current, metadata: { ...current.metadata, deletionTimestamp: new Date().toISOString() } };
      this.write(t.collection, k, next, 'MODIFIED', current);
      return next;
    }
    this.write(t.collection, k, { ...current, metadata: { ...current.metadata } }, 'DELETED');
    return current;
  }

  private write(collection: string, k: string, obj: StoredObject, type: Change['type'], old?: StoredObject): void {
    this.rv++;
    (obj.metadata ??= {}).resourceVersion = String(this.rv);
    if (type === 'DELETED') this.store(collection).delete(k);
    else this.store(collection).set(k, obj);
    const change: Change = { rv: this.rv, type, collection, object: structuredClone(obj), ...(old ? { old } : {}) };
    this.history.push(change);
    for (const w of this.watchers) deliver(w, change);
  }

  private watch(t: Target, query: Record<string, string>, res: http.ServerResponse): void {
    const from = query.resourceVersion;
    const initial = query.sendInitialEvents === 'true';
    if (!initial && from && from !== '0' && Number(from) < this.oldest) {
      send(res, 410, status(410, 'Expired', `too old resource version: ${from} (${this.oldest})`));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    const matches = selectorMatcher(query);
    const timers: NodeJS.Timeout[] = [];
    const watcher: Watcher = {
      collection: t.collection,
      ...(t.namespace !== undefined ? { namespace: t.namespace } : {}),
      matches: (o) => (t.namespace === undefined || o.metadata?.namespace === t.namespace) && matches(o),
      send: (type, object) => void res.write(`${JSON.stringify({ type, object })}\n`),
      close: () => {
        this.watchers.delete(watcher);
        for (const timer of timers) clearTimeout(timer);
        res.end();
      },
    };
    if (initial || !from || from === '0') {
      for (const o of this.select(t, query)) watcher.send('ADDED', o);
      if (initial) watcher.send('BOOKMARK', { kind: 'Bookmark', metadata: { resourceVersion: String(this.rv), annotations: { 'k8s.io/initial-events-end': 'true' } } });
    } else {
      for (const change of this.history) if (change.rv > Number(from)) deliver(watcher, change);
    }
    this.watchers.add(watcher);
    if (query.allowWatchBookmarks === 'true') {
      timers.push(setInterval(() => watcher.send('BOOKMARK', { kind: 'Bookmark', metadata: { resourceVersion: String(this.rv) } }), this.bookmarkMs));
    }
    const seconds = Number(query.timeoutSeconds ?? 0);
    if (seconds > 0) timers.push(setTimeout(watcher.close, seconds * 1000));
    // The response closes when the client goes away (an aborted watch) or the server drops the connection.
    res.on('close', watcher.close);
  }
}

function deliver(w: Watcher, change: Change): void {
  if (change.collection !== w.collection) return;
  const now = w.matches(change.object);
  const before = change.old ? w.matches(change.old) : false;
  if (change.type === 'MODIFIED') {
    if (now && before) w.send('MODIFIED', change.object);
    else if (now) w.send('ADDED', change.object);
    else if (before) w.send('DELETED', change.object);
  } else if (now) w.send(change.type, change.object);
}

const PATCH_TYPES: readonly string[] = [ContentType.JsonPatch, ContentType.MergePatch, ContentType.StrategicMergePatch];

function patch(current: StoredObject, contentType: string | undefined, body: unknown): StoredObject {
  switch (contentType) {
    case ContentType.JsonPatch:
      return applyJsonPatch(current, body as JsonPatchOp[]);
    case ContentType.MergePatch:
      return applyMergePatch(current, body);
    case ContentType.StrategicMergePatch:
      return applyStrategicMergePatch(current, body);
    default:
      throw new HttpError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${ContentType.JsonPatch}, ${ContentType.MergePatch}, ${ContentType.StrategicMergePatch}`);
  }
}

/** `/api/v1/namespaces/ns/pods/p/status` -> { collection: 'v1/pods', namespace: 'ns', name: 'p', subresource: 'status' }. */
function parsePath(path: string): Target | undefined {
  const all = path.split('/').filter(Boolean).map(decodeURIComponent);
  let gv: string;
  let parts: string[];
  if (all[0] === 'api' && all.length >= 2) {
    gv = all[1] as string;
    parts = all.slice(2);
  } else if (all[0] === 'apis' && all.length >= 3) {
    gv = `${all[1]}/${all[2]}`;
    parts = all.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (parts[0] === 'namespaces' && parts.length >= 3) {
    namespace = parts[1];
    parts = parts.slice(2);
  }
  const [resource, name, subresource, ...rest] = parts;
  if (!resource || rest.length > 0) return undefined;
  return { collection: `${gv}/${resource}`, ...(namespace !== undefined ? { namespace } : {}), ...(name !== undefined ? { name } : {}), ...(subresource !== undefined ? { subresource } : {}) };
}

function key(namespace: string | undefined, name: string): string {
  return namespace === undefined ? name : `${namespace}/${name}`;
}

function notFound(t: Target): HttpError {
  return new HttpError(404, 'NotFound', `${t.collection.split('/').pop()} "${t.name}" not found`);
}

/** Splits on commas outside parentheses (`a in (x,y),b` is two requirements). */
function requirements(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

function labelRequirement(req: string): (labels: Record<string, string>) => boolean {
  let m: RegExpExecArray | null;
  if ((m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(req))) {
    const [, k, op, list] = m as unknown as [string, string, string, string];
    const values = list.split(',').map((v) => v.trim());
    return op === 'in' ? (l) => values.includes(l[k] ?? '\0') : (l) => !values.includes(l[k] ?? '\0');
  }
  if ((m = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(req))) {
    const [, k, op, v] = m as unknown as [string, string, string, string];
    return op === '!=' ? (l) => l[k] !== v : (l) => l[k] === v;
  }
  if ((m = /^!(\S+)$/.exec(req))) {
    const k = m[1] as string;
    return (l) => !Object.hasOwn(l, k);
  }
  if (/^\S+$/.test(req)) return (l) => Object.hasOwn(l, req);
  throw new HttpError(400, 'BadRequest', `unable to parse requirement: ${JSON.stringify(req)}`);
}

function fieldValue(obj: StoredObject, path: string): string | undefined {
  let at: unknown = obj;
  for (const p of path.split('.')) at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[p] : undefined;
  return at === undefined || at === null ? undefined : String(at);
}

function selectorMatcher(query: Record<string, string>): (obj: StoredObject) => boolean {
  const labels = query.labelSelector ? requirements(query.labelSelector).map(labelRequirement) : [];
  const fields = (query.fieldSelector ? requirements(query.fieldSelector) : []).map((req) => {
    const m = /^([^!=]+)(==|=|!=)(.*)$/.exec(req);
    if (!m) throw new HttpError(400, 'BadRequest', `invalid field selector: ${JSON.stringify(req)}`);
    const [, path, op, v] = m as unknown as [string, string, string, string];
    return (o: StoredObject) => (op === '!=' ? (fieldValue(o, path) ?? '') !== v : (fieldValue(o, path) ?? '') === v);
  });
  return (obj) => labels.every((f) => f(obj.metadata?.labels ?? {})) && fields.every((f) => f(obj));
}

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', reject);
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (!text) return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new HttpError(400, 'BadRequest', 'the request body is not JSON'));
      }
    });
  });
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
