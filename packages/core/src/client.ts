/**
 * KubeClient: the one way podlife talks to the API server.
 *
 * Guarantees:
 * - credentials and TLS come from a client-node KubeConfig, exactly as kubectl would use them,
 *   or from an address and credentials given as they are (`fromConnection`), in which case the
 *   client library is never loaded;
 * - objects travel as wire JSON (timestamps stay RFC 3339 strings; see `time.ts`);
 * - a non-2xx answer is an `ApiError` carrying the HTTP status and the API's `reason`;
 * - every request can be aborted and has a timeout; watches are streams the caller reads;
 * - a client built with `maxResponseBytes` (or a request with `maxBytes`) never holds more than that
 *   many bytes of one answer: a larger one is refused with an error naming the request and the limit.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** One request to the API server: method, path, query, body and its Content-Type. */
export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  /** Content-Type of the body; defaults to application/json. */
  contentType?: string;
  /**
   * Accept header; default application/json. E.g. `application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
   * (`METADATA_LIST`) for a list of metadata only.
   */
  accept?: string;
  signal?: AbortSignal;
  /** Milliseconds before the request is abandoned; 0 means none (watches). Default 30 s. */
  timeoutMs?: number;
  /** The most bytes of the answer's body read before the request fails; default the client's `maxResponseBytes`. */
  maxBytes?: number;
}

/** Settings of a client: connections kept, and the largest answer it reads. */
export interface ClientOptions {
  /** Connections kept to the API server (each request in flight holds one over HTTP/1.1); default 128. */
  maxSockets?: number;
  /** The largest response body one request reads (watches excepted); default no limit. */
  maxResponseBytes?: number;
}

/** A Kubernetes API error: `status` is the HTTP code, `reason` the metav1.Status reason. */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly body: unknown;
  constructor(status: number, reason: string, message: string, body: unknown) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.reason = reason;
    this.body = body;
  }
}

/** Accept header asking a list for the objects' metadata only (the API server's PartialObjectMetadataList). */
export const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

/** True for a 404 Not Found `ApiError`. */
export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404;
}
/** True for a 409 Conflict: the object changed since it was read (or already exists). */
export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.status === 409;
}
/** True for a 410 Gone: the resourceVersion asked for has been compacted away; relist. */
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && err.status === 410;
}

/** Where a resource lives: `/api/v1/namespaces/ns/pods/name/status`. */
export interface ResourceRef {
  group?: string;
  version: string;
  resource: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** The REST path of a resource, a collection or a subresource (`/api/v1/namespaces/ns/pods/p/status`). */
export function resourcePath(ref: ResourceRef): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  let path = base;
  if (ref.namespace) path += `/namespaces/${encodeURIComponent(ref.namespace)}`;
  path += `/${ref.resource}`;
  if (ref.name) path += `/${encodeURIComponent(ref.name)}`;
  if (ref.subresource) path += `/${ref.subresource}`;
  return path;
}

export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** An API server address and the credentials to use there (`KubeClient.fromConnection`). */
export interface Connection {
  /** e.g. `https://10.0.0.1:443`. */
  server: string;
  /** PEM certificates to trust instead of the system's. */
  ca?: string | Buffer;
  /** Bearer token. */
  token?: string;
  /** PEM client certificate and key. */
  cert?: string | Buffer;
  key?: string | Buffer;
  /** Do not verify the server's certificate (a local test server only). */
  insecureSkipTLSVerify?: boolean;
}

/** Connections kept to the API server per client (`ClientOptions.maxSockets`). */
const DEFAULT_MAX_SOCKETS = 128;

function agentFor(server: URL, base: https.RequestOptions, maxSockets = DEFAULT_MAX_SOCKETS): http.Agent {
  const agentOpts = { keepAlive: true, maxSockets };
  return server.protocol === 'https:'
    ? new https.Agent({ ...agentOpts, ca: base.ca, cert: base.cert, key: base.key, rejectUnauthorized: base.rejectUnauthorized ?? true })
    : new http.Agent(agentOpts);
}

/** What a client was built from: a KubeConfig, or a connection given as it is. */
export type ClientOrigin = { readonly kubeConfig: KubeConfig } | { readonly connection: Connection };

/** The API client every podlife package uses: JSON requests, watches as line streams, errors as `ApiError`. */
export class KubeClient {
  readonly server: URL;
  private readonly base: https.RequestOptions;
  private readonly agent: http.Agent;
  private readonly maxBytes: number;
  private readonly from: ClientOrigin;

  private constructor(server: URL, base: https.RequestOptions, opts: ClientOptions, from: ClientOrigin) {
    this.server = server;
    this.base = base;
    this.from = from;
    this.agent = agentFor(server, base, opts.maxSockets);
    this.maxBytes = opts.maxResponseBytes ?? Infinity;
  }

  /**
   * Builds a client from an address and credentials alone, without loading a kubeconfig (and
   * so without the client library's generated API): for an in-cluster service account, or a
   * process that was handed its connection.
   */
  static fromConnection(conn: Connection, opts: ClientOptions = {}): KubeClient {
    let server: URL;
    try {
      server = new URL(conn.server);
    } catch {
      throw new Error(`connection: server "${conn.server}" is not a URL (want e.g. https://10.0.0.1:443)`);
    }
    if (server.protocol !== 'https:' && server.protocol !== 'http:') throw new Error(`connection: server "${conn.server}" must be http:// or https://`);
    const base: https.RequestOptions = {
      ...(conn.token ? { headers: { Authorization: `Bearer ${conn.token}` } } : {}),
      ...(conn.ca !== undefined ? { ca: conn.ca } : {}),
      ...(conn.cert !== undefined ? { cert: conn.cert } : {}),
      ...(conn.key !== undefined ? { key: conn.key } : {}),
      ...(conn.insecureSkipTLSVerify ? { rejectUnauthorized: false } : {}),
    };
    return new KubeClient(server, base, opts, { connection: conn });
  }

  /** Builds a client from a KubeConfig (its current context). */
  static async fromKubeConfig(kc: KubeConfig, opts: ClientOptions = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster: set a context with a cluster');
    const server = new URL(cluster.server);
    const base: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(base);
    return new KubeClient(server, base, opts, { kubeConfig: kc });
  }

  /**
   * The KubeConfig or connection this client was built from, for a transport it does not carry
   * itself (pods/exec over a websocket): the same server and credentials. A method, so that the
   * credentials never show in a dump of the client.
   */
  origin(): ClientOrigin {
    return this.from;
  }

  /** Loads the kubeconfig the way kubectl does (KUBECONFIG, ~/.kube/config, in-cluster). */
  static async fromDefault(context?: string): Promise<KubeClient> {
    // Loaded on demand: the library's generated API weighs ~90 MiB of RSS in a process that
    // builds its client another way (`fromConnection`).
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    kc.loadFromDefault();
    if (context) kc.setCurrentContext(context);
    return KubeClient.fromKubeConfig(kc);
  }

  /** Sends a request and resolves with the parsed JSON answer. */
  async request<T = unknown>(opts: RequestOptions): Promise<T> {
    const res = await this.send(opts);
    const text = await readBody(res, opts.maxBytes ?? this.maxBytes, opts);
    const status = res.statusCode ?? 0;
    const parsed = text.length > 0 ? safeParse(text) : undefined;
    if (status < 200 || status >= 300) throw toApiError(status, parsed, text, opts);
    return parsed as T;
  }

  /** Opens a streaming request (watches, logs); the caller consumes and destroys the response. */
  async stream(opts: RequestOptions): Promise<http.IncomingMessage> {
    const res = await this.send({ timeoutMs: 0, ...opts });
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text = await readBody(res, opts.maxBytes ?? this.maxBytes, opts);
      throw toApiError(status, safeParse(text), text, opts);
    }
    return res;
  }

  get<T = unknown>(path: string, query?: Query, signal?: AbortSignal): Promise<T> {
    return this.request<T>({ path, query, signal });
  }
  create<T = unknown>(path: string, body: unknown, query?: Query): Promise<T> {
    return this.request<T>({ method: 'POST', path, body, query });
  }
  replace<T = unknown>(path: string, body: unknown, query?: Query): Promise<T> {
    return this.request<T>({ method: 'PUT', path, body, query });
  }
  patch<T = unknown>(path: string, body: unknown, contentType: string, query?: Query): Promise<T> {
    return this.request<T>({ method: 'PATCH', path, body, contentType, query });
  }
  delete<T = unknown>(path: string, body?: unknown, query?: Query): Promise<T> {
    return this.request<T>({ method: 'DELETE', path, body, query });
  }

  /** Releases pooled connections. */
  close(): void {
    this.agent.destroy();
  }

  private send(opts: RequestOptions): Promise<http.IncomingMessage> {
    const secure = this.server.protocol === 'https:';
    const payload =
      opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const headers: http.OutgoingHttpHeaders = { ...(this.base.headers as http.OutgoingHttpHeaders | undefined), Accept: opts.accept ?? 'application/json' };
    if (payload !== undefined) {
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      headers['Content-Length'] = Buffer.byteLength(payload);
    }
    const timeoutMs = opts.timeoutMs ?? 30_000;
    const reqOpts: https.RequestOptions = {
      protocol: this.server.protocol,
      hostname: this.server.hostname,
      port: this.server.port,
      method: opts.method ?? 'GET',
      path: `${this.server.pathname.replace(/\/$/, '')}${opts.path}${queryString(opts.query)}`,
      headers,
      agent: this.agent,
      signal: opts.signal,
    };
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(reqOpts, resolve);
      req.on('error', reject);
      if (timeoutMs > 0) {
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`request to ${opts.path} timed out after ${timeoutMs} ms`)));
      }
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }
}

/** `64 MiB`, `512 KiB`, `100 bytes`: a limit as a person reads it. */
function formatBytes(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)} MiB`;
  if (n >= 1 << 10 && n % (1 << 10) === 0) return `${n / (1 << 10)} KiB`;
  return `${n} bytes`;
}

/** The body as text, refused (and the connection dropped) once it passes `maxBytes`. */
function readBody(res: http.IncomingMessage, maxBytes: number, opts: RequestOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    let refused = false;
    const tooLarge = () => {
      if (refused) return;
      refused = true;
      res.destroy();
      reject(new Error(`${opts.method ?? 'GET'} ${opts.path}: the answer is larger than ${formatBytes(maxBytes)}, the most this client reads of one response`));
    };
    if (Number(res.headers['content-length'] ?? 0) > maxBytes) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) tooLarge();
      else chunks.push(c);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function toApiError(status: number, parsed: unknown, text: string, opts: RequestOptions): ApiError {
  const s = (parsed ?? {}) as { reason?: string; message?: string };
  const reason = s.reason ?? (status === 404 ? 'NotFound' : status === 409 ? 'Conflict' : 'Unknown');
  const message = `${opts.method ?? 'GET'} ${opts.path}: ${status} ${s.message ?? text.slice(0, 200)}`;
  return new ApiError(status, reason, message, parsed);
}
