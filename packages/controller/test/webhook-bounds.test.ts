import assert from 'node:assert/strict';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookServer, type WebhookHandler, type WebhookServerOptions } from '../src/webhook/server.js';
import { devCertificates, type DevCertificates } from '../src/webhook/dev-certificates.js';

describe('webhook server: bounds on the whole server, and TLS suites', () => {
  let dir: string;
  let certs: DevCertificates;
  let server: WebhookServer;
  const ok: WebhookHandler = () => ({ status: 200, body: { ok: true } });
  const open: ClientRequest[] = [];

  async function start(opts: Partial<WebhookServerOptions> = {}): Promise<number> {
    server = new WebhookServer({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), port: 0, host: '127.0.0.1', routes: { '/mutate-pods': ok }, ...opts });
    await server.start();
    return server.port;
  }

  /** A POST that sends `bytes` of its body now and the rest when `finish` is called. */
  function partial(port: number, bytes: number, total: number): { status: Promise<number>; finish(): void } {
    let finish = (): void => undefined;
    const status = new Promise<number>((resolve, reject) => {
      const req = https.request(
        { host: '127.0.0.1', port, path: '/mutate-pods', method: 'POST', ca: certs.caPem, agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': total } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      open.push(req);
      req.write(Buffer.alloc(bytes, 0x20));
      finish = () => req.end(Buffer.concat([Buffer.alloc(total - bytes - 2, 0x20), Buffer.from('{}')]));
    });
    return { status, finish: () => finish() };
  }

  function handshake(port: number, options: tls.ConnectionOptions): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, ca: certs.caPem, servername: 'localhost', ...options }, () => {
        const cipher = socket.getCipher().name;
        socket.end();
        resolve(cipher);
      });
      socket.on('error', reject);
    });
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
    for (const req of open.splice(0)) req.destroy();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 to a request whose body would push the bytes buffered at once past the bound', async () => {
    const port = await start({ maxBodyBytes: 1024 * 1024, maxBufferedBytes: 1024 * 1024 });
    const first = partial(port, 700 * 1024, 800 * 1024);
    await new Promise((r) => setTimeout(r, 200));
    const second = partial(port, 700 * 1024, 800 * 1024);
    assert.equal(await second.status, 503);
    first.finish();
    assert.equal(await first.status, 200);
  });

  it('answers 503 on connections past the bound, and serves again once they close', async () => {
    const port = await start({ maxConnections: 2 });
    const held = [partial(port, 10, 100), partial(port, 10, 100)];
    await new Promise((r) => setTimeout(r, 200));
    const third = partial(port, 0, 100);
    third.finish();
    assert.equal(await third.status, 503);
    for (const h of held) h.finish();
    assert.deepEqual(await Promise.all(held.map((h) => h.status)), [200, 200]);
    for (const req of open.splice(0)) req.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const later = partial(port, 0, 100);
    later.finish();
    assert.equal(await later.status, 200);
  });

  it('refuses TLS 1.2 clients that offer only CBC or SHA-1 suites', async () => {
    const port = await start();
    await assert.rejects(handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES128-SHA:AES128-SHA:AES128-SHA256:ECDHE-RSA-AES128-SHA256:ECDHE-ECDSA-AES128-SHA256' }));
  });

  it('accepts TLS 1.2 with ECDHE and AES-GCM, and TLS 1.3', async () => {
    const port = await start();
    assert.match(await handshake(port, { maxVersion: 'TLSv1.2' }), /^ECDHE-.*(GCM|CHACHA20)/);
    assert.match(await handshake(port, { minVersion: 'TLSv1.3' }), /^TLS_/);
  });
});
