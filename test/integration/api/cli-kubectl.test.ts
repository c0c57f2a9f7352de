/**
 * The podlife CLI as a user installs it — the built `dist/cli/podlife.js` under its package `bin`
 * names on PATH — driven by a real kubectl (built from k8s.io/kubectl by scripts/go-tools.mjs)
 * against a real API server: `kubectl podlife …` through kubectl's plugin mechanism, kubectl's
 * cluster flags, output formats, 80 columns, and completion through kubectl and through bash; and
 * `explain --unlabelled` naming the annotated pods without the managed label.
 *
 * @releases newest — the CLI as kubectl runs it; kubectl is built with the newest release only,
 *   and nothing here is release-specific.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ContentType, resourcePath } from '@podlife/core';
import { ensureGoTool } from '../../../scripts/go-tools.mjs';
import { type ControlPlane, roleKey, sharedControlPlane, stopKey } from '@podlife/testbed';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dist = join(repo, 'packages/controller/dist/cli/podlife.js');
const bins = (JSON.parse(readFileSync(join(repo, 'packages/controller/package.json'), 'utf8')) as { bin: Record<string, string> }).bin;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('podlife as kubectl podlife (real kubectl, real API server)', function () {
  this.timeout(120_000);
  const ns = `kubectl-${randomBytes(3).toString('hex')}`;
  let cp: ControlPlane;
  let kubectl = '';
  let binDir = '';
  let env: NodeJS.ProcessEnv = {};
  let brokenKubeconfig = '';
  let twoContexts = '';

  const run = (cmd: string, args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> =>
    new Promise((resolve) => {
      execFile(cmd, args, { env: { ...env, ...extraEnv } }, (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      });
    });

  before(async function () {
    this.timeout(30 * 60_000);
    kubectl = (await ensureGoTool('kubectl')).path;
    // The test command builds dist (tsc -b) first; a single file run builds it here.
    const tsc = spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-b', join(repo, 'packages/controller')], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, tsc.stdout + tsc.stderr);
    // What npm and pnpm do for each `bin` entry: an executable link under that name on PATH.
    binDir = mkdtempSync(join(tmpdir(), 'podlife-bin-'));
    chmodSync(dist, 0o755);
    for (const [name, target] of Object.entries(bins)) {
      if (target === './dist/cli/podlife.js') symlinkSync(dist, join(binDir, name));
    }
    cp = await sharedControlPlane();
    // A kubeconfig whose current context points nowhere, and the real one as context "real".
    const kc = parse(readFileSync(cp.kubeconfigPath, 'utf8')) as { clusters: { name: string; cluster: Record<string, unknown> }[]; contexts: { name: string; context: Record<string, unknown> }[]; 'current-context': string };
    const real = kc.contexts.find((c) => c.name === kc['current-context'])!;
    kc.clusters.push({ name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } });
    kc.contexts = [{ name: 'real', context: { ...real.context, namespace: ns } }, { name: 'broken', context: { ...real.context, cluster: 'nowhere' } }];
    kc['current-context'] = 'broken';
    const dir = mkdtempSync(join(tmpdir(), 'podlife-kc-'));
    twoContexts = join(dir, 'two-contexts');
    writeFileSync(twoContexts, JSON.stringify(kc));
    brokenKubeconfig = join(dir, 'broken');
    writeFileSync(brokenKubeconfig, JSON.stringify({ ...kc, contexts: kc.contexts.filter((c) => c.name === 'broken') }));
    // node for the `#!/usr/bin/env node` of the bins: the project's Node 22, first on PATH.
    env = { ...process.env, PATH: `${binDir}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`, KUBECONFIG: cp.kubeconfigPath };

    await cp.client.create(resourcePath({ version: 'v1', resource: 'namespaces' }), { metadata: { name: ns } });
    const pods = resourcePath({ version: 'v1', resource: 'pods', namespace: ns });
    const annotations = { [roleKey('proxy')]: 'sidecar', [stopKey('proxy')]: 'preset:envoy' };
    const containers = [
      { name: 'app', image: 'busybox:1.36' },
      { name: 'proxy', image: 'envoy:1' },
    ];
    await cp.client.create(pods, { metadata: { name: 'report-0', annotations, labels: { 'podlife.dev/managed': 'true' } }, spec: { containers } });
    await cp.client.create(pods, { metadata: { name: 'plain' }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] } });
    // The controller's record, as it writes it: the sidecar is being stopped.
    await cp.client.patch(
      `${pods}/report-0/status`,
      { status: { conditions: [{ type: 'podlife.dev/SidecarsStopped', status: 'False', reason: 'Stopping', message: 'stopping proxy; issued: proxy', lastTransitionTime: new Date().toISOString() }] } },
      ContentType.StrategicMergePatch,
    );
  });

  after(async () => {
    await cp?.client.delete(resourcePath({ version: 'v1', resource: 'namespaces', name: ns })).catch(() => undefined);
    if (binDir) rmSync(binDir, { recursive: true, force: true });
    if (twoContexts) rmSync(dirname(twoContexts), { recursive: true, force: true });
  });

  it('the package installs the CLI as podlife, kubectl-podlife and kubectl_complete-podlife', () =>
    assert.deepEqual(Object.keys(bins).filter((b) => bins[b] === './dist/cli/podlife.js').sort(), ['kubectl-podlife', 'kubectl_complete-podlife', 'podlife']));

  it('kubectl lists it as a plugin', async () => {
    const r = await run(kubectl, ['plugin', 'list']);
    assert.match(r.stdout, /kubectl-podlife/);
  });

  it('kubectl podlife explain <pod> -n <ns>: the explanation, within 80 columns', async () => {
    const r = await run(kubectl, ['podlife', 'explain', 'report-0', '-n', ns]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /report-0/);
    assert.match(r.stdout, /stuck at: scheduled/);
    for (const line of r.stdout.split('\n')) assert.ok([...line].length <= 80, `${line.length} columns: ${line}`);
  });

  it('kubectl podlife --help names it as kubectl podlife; a bad command line says so with exit 2', async () => {
    const help = await run(kubectl, ['podlife', '--help']);
    assert.match(help.stdout, /^ {2}kubectl podlife explain <pod>/m);
    const bad = await run(kubectl, ['podlife', 'explain']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^kubectl podlife: explain needs a pod or node/);
  });

  it('pods -A -o yaml: the managed pods of every namespace, with their roles and the controller\'s record', async () => {
    const r = await run(kubectl, ['podlife', 'pods', '-A', '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    const { items } = parse(r.stdout) as { items: { namespace: string; name: string; roles: string; lifecycle: string; message: string; stops: string; managedLabel: boolean }[] };
    const ours = items.filter((i) => i.namespace === ns);
    assert.deepEqual(ours.map((i) => [i.name, i.roles, i.lifecycle, i.message, i.stops, i.managedLabel]), [['report-0', 'proxy=sidecar', 'Stopping', 'stopping proxy; issued: proxy', 'proxy=preset:envoy', true]]);
  });

  it('pods -n <ns> -o json, and -o wide adds the stop specs on one line a pod', async () => {
    const json = await run('podlife', ['pods', '-n', ns, '-o', 'json']);
    assert.deepEqual((JSON.parse(json.stdout) as { items: { name: string }[] }).items.map((i) => i.name), ['report-0']);
    const wide = await run('podlife', ['pods', '-n', ns, '-o', 'wide']);
    assert.match(wide.stdout, /^NAME\s+ROLES\s+LIFECYCLE\s+AGE\s+NODE\s+STOP\s+MANAGED\s+MESSAGE$/m);
    assert.match(wide.stdout, /^report-0\s+proxy=sidecar\s+Stopping\s+\S+\s+-\s+proxy=preset:envoy\s+yes\s+stopping proxy; issued: proxy$/m);
  });

  it('--context picks a context (and its namespace), --kubeconfig a file over KUBECONFIG', async () => {
    const broken = await run('podlife', ['pods'], { KUBECONFIG: twoContexts });
    assert.equal(broken.code, 1, 'the current context points nowhere');
    const real = await run('podlife', ['pods', '--context', 'real', '-o', 'json'], { KUBECONFIG: twoContexts });
    assert.equal(real.code, 0, real.stderr);
    assert.deepEqual((JSON.parse(real.stdout) as { items: { name: string }[] }).items.map((i) => i.name), ['report-0'], "the context's namespace");
    const file = await run('podlife', ['pods', '--kubeconfig', twoContexts, '--context', 'real', '-o', 'json'], { KUBECONFIG: brokenKubeconfig });
    assert.equal(file.code, 0, file.stderr);
    const unknown = await run('podlife', ['pods', '--context', 'nope'], { KUBECONFIG: twoContexts });
    assert.match(unknown.stderr, /--context "nope": no such context in the kubeconfig \(it has real, broken\)/);
  });

  it('explain --unlabelled names exactly the annotated pod without the managed label, -A too, and its kubectl command labels it', async () => {
    const fresh = `unlabelled-${randomBytes(3).toString('hex')}`;
    await cp.client.create(resourcePath({ version: 'v1', resource: 'namespaces' }), { metadata: { name: fresh } });
    try {
      const pods = resourcePath({ version: 'v1', resource: 'pods', namespace: fresh });
      const annotations = { [roleKey('proxy')]: 'sidecar', [stopKey('proxy')]: 'preset:envoy' };
      const containers = [
        { name: 'app', image: 'busybox:1.36' },
        { name: 'proxy', image: 'envoy:1' },
      ];
      await cp.client.create(pods, { metadata: { name: 'annotated', annotations }, spec: { containers } });
      await cp.client.create(pods, { metadata: { name: 'labelled', annotations, labels: { 'podlife.dev/managed': 'true' } }, spec: { containers } });
      await cp.client.create(pods, { metadata: { name: 'neither' }, spec: { containers } });

      const text = await run('podlife', ['explain', '--unlabelled', '-n', fresh]);
      assert.equal(text.code, 0, text.stderr);
      assert.deepEqual(text.stdout.split('\n').filter((l) => l.includes('/') && !l.includes(' ')), [`${fresh}/annotated`]);
      const command = text.stdout.split('\n').find((l) => l.startsWith('  kubectl label'));
      assert.equal(command, `  kubectl label pod -n ${fresh} annotated podlife.dev/managed=true`);

      const all = await run(kubectl, ['podlife', 'explain', '--unlabeled', '-A', '-o', 'json']);
      assert.equal(all.code, 0, all.stderr);
      const { items } = JSON.parse(all.stdout) as { items: { namespace: string; name: string }[] };
      assert.deepEqual(items.filter((i) => i.namespace === fresh).map((i) => i.name), ['annotated']);

      const listed = await run('podlife', ['pods', '-n', fresh]);
      assert.match(listed.stderr, /^podlife: 1 of these pods has lifecycle annotations/);

      const label = await run(kubectl, command!.trim().split(' ').slice(1));
      assert.equal(label.code, 0, label.stderr);
      const after = await run('podlife', ['explain', '--unlabelled', '-n', fresh, '--width', '200']);
      assert.equal(after.code, 0, after.stderr);
      assert.equal(after.stdout, `no pod in namespace ${fresh} has podlife lifecycle annotations without the label podlife.dev/managed: "true"\n`);
    } finally {
      await cp.client.delete(resourcePath({ version: 'v1', resource: 'namespaces', name: fresh })).catch(() => undefined);
    }
  });

  it('kubectl completes the plugin through kubectl_complete-podlife: pods of the namespace given', async () => {
    const r = await run(kubectl, ['__complete', 'podlife', 'explain', '-n', ns, 're']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n').filter((l) => l !== '' && !l.startsWith(':')), ['report-0']);
    assert.match(r.stdout, /^:4$/m);
    const commands = await run(kubectl, ['__complete', 'podlife', '']);
    assert.deepEqual(commands.stdout.split('\n').filter((l) => l !== '' && !l.startsWith(':')), ['explain', 'nodes', 'pods', 'migrate', 'completion']);
  });

  it('bash completes podlife with the script podlife completion bash prints', async () => {
    const script = (await run('podlife', ['completion', 'bash'])).stdout;
    const complete = (words: string[]) =>
      spawnSync('bash', ['--norc', '-c', `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _podlife_complete; printf '%s\\n' "\${COMPREPLY[@]}"`], { env, encoding: 'utf8' }).stdout.trim().split('\n');
    assert.deepEqual(complete(['podlife', 'ex']), ['explain']);
    assert.deepEqual(complete(['podlife', 'explain', '-n', ns, '']), ['node', 'plain', 'report-0']);
    assert.deepEqual(complete(['podlife', 'pods', '-o', 'y']), ['yaml']);
  });
});
