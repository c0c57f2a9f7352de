/**
 * The controller's admission webhook server: HTTPS only, TLS 1.2 or newer.
 *
 * Guarantees:
 * - the certificate and key are re-read from disk when they change and applied to new
 *   connections with `setSecureContext`, without a restart; a bad pair never replaces a good one;
 * - a request body larger than `maxBodyBytes` is refused with 413 before it is buffered;
 *   a request that is not complete within `requestTimeoutMs`, or a handler that does not answer
 *   within it, gets an error answer — a slow client or handler cannot pin the server;
 * - a handler that throws is answered 500 with the reason; nothing a client sends crashes the process;
 * - only POST to a registered path reaches a handler (404 / 405 / 415 otherwise);
 * - what `observe` is told about a request is bounded whatever the client sends: the route is a
 *   registered path, or `other` (OTHER_ROUTE) for any path that is not one;
 * - the server as a whole is bounded, not only each request: past `maxConnections` open
 *   connections a request is answered 503 (and past twice that a connection is dropped), and
 *   request bodies buffered at once never exceed `maxBufferedBytes` — a request that would
 *   cross it is answered 503 with Retry-After (the webhook fails open, so the API server lets
 *   the pod through unconverted);
 * - an idle kept-alive connection stays open longer than the API server's client keeps one
 *   (90 s), so the client is the side that closes it: a server that closes first races the
 *   client's next request on that connection, which then fails with EOF (docs/adr/0242);
 * - TLS 1.3, or TLS 1.2 with ECDHE key exchange and AEAD ciphers only (no CBC, no SHA-1 MACs).
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebhookAnswer, WebhookHandler } from '@podlife/keystone';
import { TlsFiles, type TlsPair } from './tls-files.js';

// The route types belong to keystone's webhook helpers (an injector needs only keystone); kept
// reachable from here for code that builds routes for this server.
export type { WebhookAnswer, WebhookHandler };

/** The subset of a pino logger the server uses. */
export interface WebhookLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Certificate files, port, routes and bounds of the webhook server. */
export interface WebhookServerOptions {
  certFile: string;
  keyFile: string;
  port: number;
  /** Default 0.0.0.0 (reachable from the API server inside a cluster); tests use 127.0.0.1. */
  host?: string;
  routes: Record<string, WebhookHandler>;
  /** Default 3 MiB: the API server's own request limit, so any pod it accepts fits. */
  maxBodyBytes?: number;
  /** Default 10 s: the API server's default webhook timeout. */
  requestTimeoutMs?: number;
  /**
   * How long an idle kept-alive connection is kept open. Default 120 s: longer than the 90 s
   * after which the API server's webhook client drops an idle connection itself.
   */
  keepAliveTimeoutMs?: number;
  /** Open connections served; more get 503, more than twice this are dropped. Default 128. */
  maxConnections?: number;
  /** Request bytes buffered at once across all connections; default 32 MiB. */
  maxBufferedBytes?: number;
  /** Certificate poll period, default 10 s (file events usually come first). */
  certPollMs?: number;
  log?: WebhookLog;
  /** Called after each answered request (metrics): `route` is a registered path or OTHER_ROUTE, never the request's own. */
  observe?(route: string, status: number, seconds: number): void;
}

/** The route every request to an unregistered path is counted under: a label never comes from the URL. */
export const OTHER_ROUTE = 'other';

/** Above the 90 s idle timeout of the API server's HTTP transport (client-go's default). */
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 120_000;

const noLog: WebhookLog = { info() {}, warn() {}, error() {} };

/** TLS 1.2: ECDHE and AEAD only; TLS 1.3: its three standard suites (all AEAD). */
export const WEBHOOK_CIPHERS = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

const tlsOptions = { minVersion: 'TLSv1.2', ciphers: WEBHOOK_CIPHERS, honorCipherOrder: true } as const;

/** Bytes buffered by all requests together; a reservation that would cross the limit is refused. */
class ByteBudget {
  private used = 0;
  constructor(private readonly limit: number) {}
  reserve(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }
  release(bytes: number): void {
    this.used -= bytes;
  }
}

/** The HTTPS admission webhook server (see the guarantees above). */
export class WebhookServer {
  private readonly opts: WebhookServerOptions;
  private readonly log: WebhookLog;
  private readonly tls: TlsFiles;
  private server: https.Server | undefined;
  private connections = 0;
  private readonly budget: ByteBudget;

  constructor(opts: WebhookServerOptions) {
    this.opts = opts;
    this.budget = new ByteBudget(opts.maxBufferedBytes ?? 32 * 1024 * 1024);
    this.log = opts.log ?? noLog;
    this.tls = new TlsFiles({
      certFile: opts.certFile,
      keyFile: opts.keyFile,
      pollMs: opts.certPollMs,
      onChange: (pair) => this.useCertificate(pair),
      onError: (reason) => this.log.error({ reason }, 'webhook certificate not reloaded; keeping the previous one'),
    });
  }

  /** The bound port (useful with port 0). */
  get port(): number {
    const addr = this.server?.address() as AddressInfo | null | undefined;
    if (!addr) throw new Error('webhook server is not listening');
    return addr.port;
  }

  /** Expiry of the certificate in use. */
  get certificateNotAfterMs(): number | undefined {
    return this.tls.current?.notAfterMs;
  }

  /** Loads the certificate (rejects when unusable) and listens. */
  async start(): Promise<void> {
    const pair = await this.tls.load();
    const timeoutMs = this.opts.requestTimeoutMs ?? 10_000;
    const server = https.createServer(
      { cert: pair.cert, key: pair.key, ...tlsOptions, requestTimeout: timeoutMs, headersTimeout: Math.min(timeoutMs, 60_000) },
      (req, res) => void this.serve(req, res),
    );
    server.maxConnections = 2 * this.maxConnections;
    server.keepAliveTimeout = this.opts.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
    server.on('connection', (socket) => {
      this.connections++;
      socket.once('close', () => this.connections--);
    });
    server.on('tlsClientError', () => undefined);
    server.on('clientError', (_err, socket) => socket.destroy());
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.tls.start();
    this.log.info({ port: this.port, notAfter: new Date(pair.notAfterMs).toISOString() }, 'webhook server listening');
  }

  /** Re-reads the certificate files now (they are also watched). */
  reloadCertificate(): Promise<void> {
    return this.tls.reload();
  }

  async stop(): Promise<void> {
    this.tls.stop();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2_000).unref();
    });
  }

  private useCertificate(pair: TlsPair): void {
    this.server?.setSecureContext({ cert: pair.cert, key: pair.key, ...tlsOptions });
    this.log.info({ notAfter: new Date(pair.notAfterMs).toISOString() }, 'webhook certificate reloaded');
  }

  private get maxConnections(): number {
    return this.opts.maxConnections ?? 128;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const handler = Object.hasOwn(this.opts.routes, path) ? this.opts.routes[path] : undefined;
    const route = handler ? path : OTHER_ROUTE;
    const answer = (status: number, body: unknown): void => {
      if (res.headersSent || res.destroyed) return;
      const text = JSON.stringify(body);
      const busy = status === 503 ? { 'Retry-After': '1', Connection: 'close' } : {};
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...busy });
      res.end(text);
      this.opts.observe?.(route, status, (performance.now() - started) / 1000);
    };
    if (this.connections > this.maxConnections) {
      res.shouldKeepAlive = false;
      return answer(503, { error: `more than ${this.maxConnections} open connections; retry later` });
    }
    if (!handler) return answer(404, { error: `no route ${path.length > 100 ? `${path.slice(0, 100)}...` : path}` });
    if (req.method !== 'POST') return answer(405, { error: `${req.method ?? ''} not allowed; use POST` });
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) return answer(415, { error: `content type must be application/json, not "${type}"` });

    const max = this.opts.maxBodyBytes ?? 3 * 1024 * 1024;
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > max) {
      res.shouldKeepAlive = false;
      return answer(413, { error: `request body of ${declared} bytes exceeds the limit of ${max}` });
    }

    const controller = new AbortController();
    const timeoutMs = this.opts.requestTimeoutMs ?? 10_000;
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    try {
      const body = await readLimited(req, max, controller.signal, this.budget);
      if (body === 'too-large') {
        res.shouldKeepAlive = false;
        return answer(413, { error: `request body exceeds the limit of ${max} bytes` });
      }
      if (body === 'busy') {
        res.shouldKeepAlive = false;
        return answer(503, { error: 'too many request bytes buffered at once; retry later' });
      }
      const result = await Promise.race([
        Promise.resolve(handler(body, controller.signal)),
        new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason as Error), { once: true })),
      ]);
      answer(result.status, result.body);
    } catch (err) {
      const reason = (err as Error).message;
      this.log.warn({ path, reason }, 'webhook request failed');
      answer(controller.signal.aborted ? 504 : 500, { error: reason });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Reads a body of at most `max` bytes, reserving each chunk in the shared budget; all of it is released once read. */
function readLimited(req: IncomingMessage, max: number, signal: AbortSignal, budget: ByteBudget): Promise<Buffer | 'too-large' | 'busy'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (): void => {
      settled = true;
      budget.release(size);
      signal.removeEventListener('abort', onAbort);
    };
    const stop = (why: 'too-large' | 'busy'): void => {
      finish();
      req.removeAllListeners('data');
      req.resume();
      resolve(why);
    };
    const onAbort = (): void => {
      if (settled) return;
      finish();
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('data', (chunk: Buffer) => {
      if (settled) return;
      if (size + chunk.length > max) return stop('too-large');
      if (!budget.reserve(chunk.length)) return stop('busy');
      size += chunk.length;
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (settled) return;
      const body = Buffer.concat(chunks, size);
      finish();
      resolve(body);
    });
    req.on('error', (err) => {
      if (settled) return;
      finish();
      reject(err);
    });
  });
}
