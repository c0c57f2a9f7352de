import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'mocha';
import { ApiError, KubeClient } from '../src/client.js';

describe('KubeClient.fromConnection: a client from an address and credentials, no kubeconfig', () => {
  let server: http.Server;
  let url = '';
  const seen: http.IncomingHttpHeaders[] = [];
  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/api/v1/namespaces/a/pods/missing') {
        res.statusCode = 404;
        res.end(JSON.stringify({ kind: 'Status', reason: 'NotFound', message: 'pods "missing" not found' }));
        return;
      }
      res.end(JSON.stringify({ kind: 'Pod', metadata: { name: 'p' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends the bearer token and reads the answer', async () => {
    const client = KubeClient.fromConnection({ server: url, token: 'secret-token' });
    try {
      const pod = await client.get<{ metadata: { name: string } }>('/api/v1/namespaces/a/pods/p');
      assert.equal(pod.metadata.name, 'p');
      assert.equal(seen.at(-1)?.authorization, 'Bearer secret-token');
    } finally {
      client.close();
    }
  });

  it('sends no Authorization header without a token, and API errors still carry their reason', async () => {
    const client = KubeClient.fromConnection({ server: url });
    try {
      await assert.rejects(client.get('/api/v1/namespaces/a/pods/missing'), (err: unknown) => err instanceof ApiError && err.status === 404 && err.reason === 'NotFound');
      assert.equal(seen.at(-1)?.authorization, undefined);
    } finally {
      client.close();
    }
  });

  it('refuses a server that is not an http(s) URL, naming it', () => {
    assert.throws(() => KubeClient.fromConnection({ server: '10.0.0.1:443' }), /server "10\.0\.0\.1:443"/);
    assert.throws(() => KubeClient.fromConnection({ server: 'ftp://10.0.0.1' }), /must be http:\/\/ or https:\/\//);
  });
});

describe('KubeClient: the largest answer it reads', () => {
  let server: http.Server;
  let url = '';
  before(async () => {
    server = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      const body = JSON.stringify({ kind: 'List', items: [], pad: 'x'.repeat(100_000) });
      if (req.url === '/chunked') {
        // No Content-Length: the size is known only as it arrives.
        res.write(body.slice(0, 50_000));
        setTimeout(() => res.end(body.slice(50_000)), 5);
      } else res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('no limit unless asked for', async () => {
    const client = KubeClient.fromConnection({ server: url });
    try {
      assert.equal(((await client.get('/sized')) as { pad: string }).pad.length, 100_000);
    } finally {
      client.close();
    }
  });

  it('maxResponseBytes refuses a larger answer, announced or not, naming the request and the limit', async () => {
    const client = KubeClient.fromConnection({ server: url, token: 't' }, { maxResponseBytes: 64 * 1024 });
    try {
      await assert.rejects(client.get('/sized'), /^Error: GET \/sized: the answer is larger than 64 KiB, the most this client reads of one response$/);
      await assert.rejects(client.get('/chunked'), /^Error: GET \/chunked: the answer is larger than 64 KiB/);
    } finally {
      client.close();
    }
  });

  it("a request's maxBytes overrides the client's", async () => {
    const client = KubeClient.fromConnection({ server: url }, { maxResponseBytes: 64 * 1024 });
    try {
      assert.equal(((await client.request({ path: '/chunked', maxBytes: 200_000 })) as { pad: string }).pad.length, 100_000);
      await assert.rejects(client.request({ path: '/sized', maxBytes: 1000 }), /larger than 1000 bytes/);
    } finally {
      client.close();
    }
  });
});
