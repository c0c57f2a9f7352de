import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'mocha';
import { postScriptArgv } from '../src/strategies/commands.js';

/** Runs the stop script with busybox's sh and applets, as a busybox stop image would. */
function run(port: number, path: string): Promise<number> {
  const [, ...argv] = postScriptArgv(port, path);
  return new Promise((resolve) => {
    execFile('busybox', ['sh', ...argv], { timeout: 10_000 }, (err) => resolve(err ? ((err as { code?: number }).code ?? 1) : 0));
  });
}

describe('the http stop script (busybox sh + nc)', () => {
  let server: http.Server;
  const seen: string[] = [];
  before(async () => {
    const found = await new Promise<boolean>((resolve) => execFile('busybox', ['true'], (err) => resolve(err === null)));
    assert.ok(found, 'busybox is not on PATH: install Debian\'s busybox-static (`node scripts/node-assets.mjs --host-packages`, as root, does; `pnpm test` runs it)');
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith('/redirect')) res.writeHead(302, { Location: '/followed' }).end();
      else if (req.url === '/fail') res.writeHead(500).end();
      else res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  after(() => server?.close());
  beforeEach(() => void seen.splice(0));
  const port = () => (server.address() as AddressInfo).port;

  it('POSTs the path as given and succeeds on 2xx', async () => {
    assert.equal(await run(port(), '/quit?a=1&b=$(id)'), 0);
    assert.deepEqual(seen, ['POST /quit?a=1&b=$(id)']);
  });

  it('does not follow a redirect, and reports it as a failure', async () => {
    assert.notEqual(await run(port(), '/redirect'), 0);
    assert.deepEqual(seen, ['POST /redirect']);
  });

  it('fails on an error status', async () => {
    assert.notEqual(await run(port(), '/fail'), 0);
  });
});
