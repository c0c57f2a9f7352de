import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const SECRET_TOKEN = 'tok-3f9a1c0ffee-SECRET';
const SECRET_KEY = 'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tc2VjcmV0';

// The token line is indented wrongly, so the parser fails right next to the secrets.
const malformed = `apiVersion: v1
kind: Config
clusters:
- cluster:
    server: https://127.0.0.1:6443
  name: c
users:
- name: u
  user:
    client-key-data: ${SECRET_KEY}
      token: ${SECRET_TOKEN}
contexts:
- context: { cluster: c, user: u }
  name: x
current-context: x
`;

/** Runs a binary's source as its bin would, with only the environment given. */
function run(entry: string, args: string[], env: Record<string, string>): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=@podlife/source', join(src, entry), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr };
}

describe('kubeconfig errors in both binaries', function () {
  this.timeout(60_000);
  let home: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'podlife-home-'));
    writeFileSync(join(home, 'malformed.yaml'), malformed);
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  for (const [name, entry, args] of [
    ['podlife-controller', 'main.ts', ['--controllers=keystone']],
    ['podlife', 'cli/podlife.ts', ['nodes']],
  ] as const) {
    it(`${name}: no kubeconfig at all says so and where it looked`, () => {
      const r = run(entry, [...args], { HOME: home });
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /no kubeconfig found \(looked at [^)]*\.kube\/config/);
      assert.doesNotMatch(r.stderr, /HTTP protocol is not allowed/);
    });

    it(`${name}: a malformed kubeconfig is reported without its contents`, () => {
      const r = run(entry, [...args], { HOME: home, KUBECONFIG: join(home, 'malformed.yaml') });
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /malformed\.yaml/);
      assert.ok(!r.stderr.includes(SECRET_TOKEN), r.stderr);
      assert.ok(!r.stderr.includes(SECRET_KEY), r.stderr);
    });
  }
});
