import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourcePath } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import type { ExplainUnlabelledArgs, PodsArgs } from '../src/cli/args.js';
import { runPods } from '../src/cli/pods.js';
import { findUnlabelled, labelCommands, renderUnlabelled, runExplainUnlabelled, shellLines, type UnlabelledReport } from '../src/cli/unlabelled.js';

const annotations = { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'preset:envoy' };
const managed = (value: string) => ({ 'podlife.dev/managed': value });
const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));

/** What a command wrote to stdout and stderr. */
function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), columns: undefined }, stdout: () => out.join(''), stderr: () => err.join('') };
}

function report(items: [string, string][], namespace?: string): UnlabelledReport {
  return { ...(namespace !== undefined ? { namespace } : {}), label: 'podlife.dev/managed=true', count: items.length, items: items.map(([ns, name]) => ({ namespace: ns, name })) };
}

describe('podlife explain --unlabelled: naming the annotated pods without the managed label', () => {
  let server: FakeApiServer;
  let dir: string;
  let kubeconfig: string;

  before(async () => {
    server = await FakeApiServer.start();
    const client = server.client();
    const create = (namespace: string, name: string, meta: { annotations?: Record<string, string>; labels?: Record<string, string> }) =>
      client.create(resourcePath({ version: 'v1', resource: 'pods', namespace }), { metadata: { name, ...meta }, spec: { containers: [{ name: 'app' }, { name: 'proxy' }] } });
    await create('shop', 'web-0', { annotations });
    await create('shop', 'web-1', { annotations, labels: managed('false') });
    await create('shop', 'web-2', { annotations, labels: managed('true') });
    await create('shop', 'plain', {});
    await create('shop', 'labelled-only', { labels: managed('true') });
    await create('shop', 'foreign', { annotations: { 'example.com/owner': 'team-a' } });
    await create('batch', 'job-1', { annotations });
    await create('tidy', 'report-0', { annotations, labels: managed('true') });
    dir = mkdtempSync(join(tmpdir(), 'podlife-unlabelled-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'fake', cluster: { server: server.url, 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: {} }],
        contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'u', namespace: 'shop' } }],
        'current-context': 'fake',
      }),
    );
  });

  after(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const explain = (over: Partial<ExplainUnlabelledArgs> = {}): ExplainUnlabelledArgs => ({ command: 'explain-unlabelled', output: 'text', allNamespaces: false, kubeconfig, ...over });

  describe('the list', () => {
    it('pages through the pods the server finds without the label, and keeps the annotated ones', async () => {
      const before = server.requests.length;
      const found = await findUnlabelled(server.client(), 'shop', 1);
      assert.deepEqual(found.items, [
        { namespace: 'shop', name: 'web-0' },
        { namespace: 'shop', name: 'web-1' },
      ]);
      const asked = server.requests.slice(before);
      assert.ok(asked.length > 1, 'more than one page');
      assert.deepEqual(
        asked.map((r) => [r.path, r.query.labelSelector, r.query.limit, r.query.continue !== undefined]),
        asked.map((_, i) => ['/api/v1/namespaces/shop/pods', 'podlife.dev/managed!=true', '1', i > 0]),
      );
    });

    it('the label set to "false" is no label; a pod labelled "true", or without podlife annotations, is not named', async () => {
      const names = (await findUnlabelled(server.client(), 'shop')).items.map((p) => p.name);
      assert.ok(names.includes('web-1'));
      for (const absent of ['web-2', 'plain', 'labelled-only', 'foreign']) assert.ok(!names.includes(absent), absent);
    });

    it('every namespace, sorted by namespace then name', async () => {
      const found = await findUnlabelled(server.client(), undefined, 2);
      assert.deepEqual(
        found.items.map((p) => `${p.namespace}/${p.name}`),
        ['batch/job-1', 'shop/web-0', 'shop/web-1'],
      );
      assert.equal(found.count, 3);
      assert.equal(found.namespace, undefined);
    });
  });

  describe('the command', () => {
    it('text: one namespace/name a line, the count, and the kubectl command that labels them; exit 0', async () => {
      const c = capture();
      assert.equal(await runExplainUnlabelled(explain(), c.io), 0);
      const lines = c.stdout().trimEnd().split('\n');
      assert.deepEqual(lines.slice(0, 2), ['shop/web-0', 'shop/web-1']);
      assert.match(c.stdout(), /^2 pods have podlife lifecycle annotations but not the label podlife\.dev\/managed:\s+"true"/m);
      assert.equal(lines.at(-1), '  kubectl label pod -n shop web-0 web-1 podlife.dev/managed=true');
      assert.equal(c.stderr(), '');
    });

    it('-A: every namespace, one kubectl command per namespace', async () => {
      const c = capture();
      assert.equal(await runExplainUnlabelled(explain({ allNamespaces: true }), c.io), 0);
      const text = c.stdout();
      assert.deepEqual(text.split('\n').slice(0, 3), ['batch/job-1', 'shop/web-0', 'shop/web-1']);
      assert.match(text, /^ {2}kubectl label pod -n batch job-1 podlife\.dev\/managed=true$/m);
      assert.match(text, /^ {2}kubectl label pod -n shop web-0 web-1 podlife\.dev\/managed=true$/m);
    });

    it('-o json: the report as data, naming every pod', async () => {
      const c = capture();
      assert.equal(await runExplainUnlabelled(explain({ namespace: 'shop', output: 'json' }), c.io), 0);
      assert.deepEqual(JSON.parse(c.stdout()), report([['shop', 'web-0'], ['shop', 'web-1']], 'shop'));
    });

    it('none: a line that says so, still exit 0', async () => {
      const c = capture();
      assert.equal(await runExplainUnlabelled(explain({ namespace: 'tidy', width: 120 }), c.io), 0);
      assert.equal(c.stdout(), 'no pod in namespace tidy has podlife lifecycle annotations without the label podlife.dev/managed: "true"\n');
      const data = capture();
      assert.equal(await runExplainUnlabelled(explain({ namespace: 'tidy', output: 'yaml' }), data.io), 0);
      assert.match(data.stdout(), /^count: 0$/m);
    });

    it('an API server that does not answer is an error naming where it listed', async () => {
      const unreachable = join(dir, 'unreachable');
      writeFileSync(
        unreachable,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'gone', cluster: { server: 'http://127.0.0.1:1', 'insecure-skip-tls-verify': true } }],
          users: [{ name: 'u', user: {} }],
          contexts: [{ name: 'gone', context: { cluster: 'gone', user: 'u' } }],
          'current-context': 'gone',
        }),
      );
      const c = capture();
      await assert.rejects(runExplainUnlabelled(explain({ kubeconfig: unreachable, namespace: 'shop' }), c.io), /^Error: cannot list the pods in namespace shop: .*ECONNREFUSED/);
      assert.equal(c.stdout(), '');
    });
  });

  describe('the text', () => {
    const many = report([...Array.from({ length: 25 }, (_, i): [string, string] => ['analytics-batch-production', `report-generator-nightly-${String(i).padStart(2, '0')}-x7k2p`]), ['web', 'a'], ['web', 'b']]);

    it('label commands: at most namesPerCommand names each, at most `commands` of them, and how many they leave out', () => {
      const { commands, left } = labelCommands(many.items, { namesPerCommand: 10, commands: 3 });
      assert.deepEqual(commands.map((c) => [c[4], c.length - 6]), [['analytics-batch-production', 10], ['analytics-batch-production', 10], ['analytics-batch-production', 5]]);
      assert.equal(left, 2);
      assert.deepEqual(labelCommands(many.items).commands.map((c) => c.slice(5, -1).length), [20, 5, 2]);
      const text = renderUnlabelled(many, { output: 'wide', width: 80, bounds: { namesPerCommand: 10, commands: 3 } });
      assert.match(text, /\(2 more pods are not in these commands: run them, then podlife explain --unlabelled again for the next\)$/);
    });

    it('fits 80 columns, every name whole on its line, commands continued with a backslash', () => {
      const text = renderUnlabelled(many, { output: 'text', width: 80 });
      assert.ok(widest(text) <= 80, text);
      for (const p of many.items) assert.ok(text.split('\n').includes(`${p.namespace}/${p.name}`), p.name);
      const command = text.slice(text.indexOf('  kubectl')).split('\n  kubectl')[0] ?? '';
      assert.match(command, / \\\n/);
      assert.equal(command.replace(/ \\\n +/g, ' ').trim(), `kubectl label pod -n analytics-batch-production ${many.items.slice(0, 20).map((p) => p.name).join(' ')} podlife.dev/managed=true`);
    });

    it('-o wide: a command on one line', () => {
      const text = renderUnlabelled(many, { output: 'wide', width: 80 });
      assert.match(text, /^ {2}kubectl label pod -n analytics-batch-production report-generator-nightly-00-x7k2p .* podlife\.dev\/managed=true$/m);
      assert.doesNotMatch(text, / \\$/m);
    });

    it('a word longer than the line stays whole', () => {
      const long = 'x'.repeat(90);
      assert.deepEqual(shellLines(['kubectl', long, 'y'], 40), ['  kubectl \\', `      ${long} \\`, '      y']);
    });

    it('one pod: singular, and JSON and YAML carry the same data', () => {
      const one = report([['shop', 'web-0']], 'shop');
      assert.match(renderUnlabelled(one, { output: 'wide', width: 80 }), /^1 pod has .* does not see it\.\nTo label it:$/m);
      assert.deepEqual(JSON.parse(renderUnlabelled(one, { output: 'json', width: 80 })), one);
      assert.match(renderUnlabelled(one, { output: 'yaml', width: 80 }), /^items:\n {2}- namespace: shop\n {4}name: web-0$/m);
    });
  });

  describe('podlife pods points at them', () => {
    const pods = (over: Partial<PodsArgs> = {}): PodsArgs => ({ command: 'pods', output: 'text', allNamespaces: false, kubeconfig, ...over });

    it('a line after the table: how many of the pods listed lack the label, and the command that names them', async () => {
      const c = capture();
      assert.equal(await runPods(pods({ namespace: 'shop' }), c.io), 0);
      assert.match(c.stdout(), /^NAME +ROLES +LIFECYCLE +AGE\n/);
      assert.equal(c.stdout().trimEnd().split('\n').length, 5, 'the header and web-0, web-1, web-2, labelled-only: the table as it was');
      assert.match(c.stderr().trimEnd().replace(/\n\s*/g, ' '), /^podlife: 2 of these pods have lifecycle annotations but not the label podlife\.dev\/managed: "true" .*: podlife explain --unlabelled -n shop names them and how to label them$/);
      assert.ok(widest(c.stderr()) <= 80, c.stderr());
    });

    it('-A points at explain --unlabelled -A; -o wide keeps it on one line', async () => {
      const c = capture();
      assert.equal(await runPods(pods({ allNamespaces: true, output: 'wide' }), c.io), 0);
      assert.match(c.stderr(), /^podlife: 3 of these pods have .* podlife explain --unlabelled -A names them and how to label them\n$/);
    });

    it('no line when every pod listed has the label, nor in JSON or YAML', async () => {
      const tidy = capture();
      assert.equal(await runPods(pods({ namespace: 'tidy' }), tidy.io), 0);
      assert.match(tidy.stdout(), /report-0/);
      assert.equal(tidy.stderr(), '');
      const json = capture();
      assert.equal(await runPods(pods({ namespace: 'shop', output: 'json' }), json.io), 0);
      assert.equal(json.stderr(), '');
    });
  });
});
