import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { WebhookServer, type WebhookHandler } from '../src/webhook/server.js';
import { webhookRequestDuration } from '../src/webhook/metrics.js';
import { devCertificates, type DevCertificates } from '../src/webhook/dev-certificates.js';

interface Reply {
  status: number;
  body: unknown;
}

function post(port: number, ca: string, path: string, body: string | Buffer, extra: https.RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, agent: false, headers: { 'Content-Type': 'application/json' }, ...extra },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) as unknown }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('webhook server', () => {
  let dir: string;
  let certs: DevCertificates;
  let server: WebhookServer;
  const echo: WebhookHandler = (body) => ({ status: 200, body: { got: JSON.parse(body.toString()) as unknown } });

  async function start(routes: Record<string, WebhookHandler>, opts: { maxBodyBytes?: number; requestTimeoutMs?: number; keepAliveTimeoutMs?: number } = {}): Promise<number> {
    server = new WebhookServer({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), port: 0, host: '127.0.0.1', routes, ...opts });
    await server.start();
    return server.port;
  }

  before(async () => {
    certs = await devCertificates();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'podlife-webhook-'));
    await writeFile(join(dir, 'tls.crt'), certs.certPem);
    await writeFile(join(dir, 'tls.key'), certs.keyPem);
  });
  afterEach(async () => {
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers a POST to a route with the handler\'s JSON', async () => {
    const port = await start({ '/mutate-pods': echo });
    assert.deepEqual(await post(port, certs.caPem, '/mutate-pods', '{"a":1}'), { status: 200, body: { got: { a: 1 } } });
  });

  it('refuses clients that offer only TLS 1.1', async () => {
    const port = await start({ '/mutate-pods': echo });
    // The client is allowed to go that low, so the refusal (a protocol_version alert) is the server's.
    const legacy = { maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' } as const;
    await assert.rejects(post(port, certs.caPem, '/mutate-pods', '{}', legacy), /alert protocol version/);
  });

  it('answers 404 for a path with no route and 405 for a GET', async () => {
    const port = await start({ '/mutate-pods': echo });
    assert.equal((await post(port, certs.caPem, '/other', '{}')).status, 404);
    assert.equal((await post(port, certs.caPem, '/mutate-pods', '', { method: 'GET' })).status, 405);
  });

  it('labels its latency metric by registered route or "other": many unique paths make a bounded number of series', async () => {
    const registry = new Registry();
    const duration = webhookRequestDuration(registry);
    server = new WebhookServer({
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      port: 0,
      host: '127.0.0.1',
      routes: { '/mutate-pods': echo },
      observe: (route, status, seconds) => duration.observe({ route, status: String(status) }, seconds),
    });
    await server.start();
    for (let i = 0; i < 200; i++) await post(server.port, certs.caPem, `/probe-${i}-${'x'.repeat(2000)}`, '{}');
    await post(server.port, certs.caPem, '/mutate-pods', '{}');
    const series = (await duration.get()).values.filter((v) => v.metricName === 'podlife_webhook_request_duration_seconds_count');
    assert.deepEqual(series.map((v) => [v.labels.route, v.labels.status, v.value]).sort(), [['/mutate-pods', '200', 1], ['other', '404', 200]]);
    assert.ok((await registry.metrics()).length < 10_000, 'the rendered metrics stay small');
  });

  it('refuses a body that declares more than the limit without reading it', async () => {
    const port = await start({ '/mutate-pods': echo }, { maxBodyBytes: 100 });
    assert.equal((await post(port, certs.caPem, '/mutate-pods', Buffer.alloc(1000, 0x20))).status, 413);
  });

  it('refuses a streamed body that grows past the limit', async () => {
    const port = await start({ '/mutate-pods': echo }, { maxBodyBytes: 100 });
    const reply = await post(port, certs.caPem, '/mutate-pods', Buffer.alloc(1000, 0x20), { headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } });
    assert.equal(reply.status, 413);
  });

  it('answers 500 with the reason when the handler throws', async () => {
    const port = await start({ '/mutate-pods': () => { throw new Error('boom'); } });
    assert.deepEqual(await post(port, certs.caPem, '/mutate-pods', '{}'), { status: 500, body: { error: 'boom' } });
  });

  it('answers 504 when the handler does not answer in time', async () => {
    const port = await start({ '/mutate-pods': () => new Promise(() => undefined) }, { requestTimeoutMs: 100 });
    assert.equal((await post(port, certs.caPem, '/mutate-pods', '{}')).status, 504);
  });

  /** Two requests on one kept-alive agent, `idleMs` apart: whether the second went out on the first one's connection. */
  async function reusedAfter(port: number, idleMs: number): Promise<boolean> {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: certs.caPem });
    const send = () =>
      new Promise<boolean>((resolve, reject) => {
        const req = https.request({ host: '127.0.0.1', port, path: '/mutate-pods', method: 'POST', agent, headers: { 'Content-Type': 'application/json' } }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve(req.reusedSocket) : reject(new Error(`HTTP ${res.statusCode}`))));
        });
        req.on('error', reject);
        req.end('{}');
      });
    try {
      assert.equal(await send(), false, 'the first request opens the connection');
      await new Promise((r) => setTimeout(r, idleMs));
      return await send();
    } finally {
      agent.destroy();
    }
  }

  it('keeps an idle connection open past the 5 s that Node closes one after, so the client closes it first', async function () {
    this.timeout(15_000);
    const port = await start({ '/mutate-pods': echo });
    assert.equal(await reusedAfter(port, 5_500), true);
  });

  it('closes an idle connection after keepAliveTimeoutMs', async () => {
    const port = await start({ '/mutate-pods': echo }, { keepAliveTimeoutMs: 200 });
    assert.equal(await reusedAfter(port, 600), false);
  });

  it('serves a rotated certificate to new connections without a restart', async () => {
    const port = await start({ '/mutate-pods': echo });
    const rotated = await devCertificates();
    await writeFile(join(dir, 'tls.key'), rotated.keyPem);
    await writeFile(join(dir, 'tls.crt'), rotated.certPem);
    await server.reloadCertificate();
    assert.equal((await post(port, rotated.caPem, '/mutate-pods', '{}')).status, 200);
    await assert.rejects(post(port, certs.caPem, '/mutate-pods', '{}'));
  });

  it('notices a rotated certificate on its own', async () => {
    const port = await start({ '/mutate-pods': echo });
    const rotated = await devCertificates();
    await writeFile(join(dir, 'tls.key'), rotated.keyPem);
    await writeFile(join(dir, 'tls.crt'), rotated.certPem);
    const deadline = Date.now() + 3000;
    for (;;) {
      const ok = await post(port, rotated.caPem, '/mutate-pods', '{}').then(() => true, () => false);
      if (ok) break;
      assert.ok(Date.now() < deadline, 'rotated certificate not served within 3 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('keeps the previous certificate when the new key does not match', async () => {
    const port = await start({ '/mutate-pods': echo });
    const rotated = await devCertificates();
    await writeFile(join(dir, 'tls.crt'), rotated.certPem);
    await server.reloadCertificate();
    assert.equal((await post(port, certs.caPem, '/mutate-pods', '{}')).status, 200);
  });

  it('refuses to start with a certificate that does not match its key', async () => {
    const other = await devCertificates();
    await writeFile(join(dir, 'tls.key'), other.keyPem);
    await assert.rejects(start({ '/mutate-pods': echo }), /does not match/);
  });
});
