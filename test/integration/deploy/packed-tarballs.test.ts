/**
 * The packages as a stranger installs them (ADR 0190): every package packed by `pnpm pack`,
 * installed with plain npm into a project outside the workspace, and then
 * - what a registry page and a package manager read: metadata, LICENSE, CHANGELOG, exports with
 *   the `@podlife/source` condition stripped, sibling versions that install together, one copy of
 *   `@kubernetes/client-node` in the tree, source and declaration maps that resolve;
 * - publint and attw on each tarball; every relative link of its Markdown resolves inside it;
 * - the injector-webhook, custom-controller and readiness-gate examples type-checked with
 *   `skipLibCheck: false` under `moduleResolution` nodenext and bundler, and run from the
 *   compiled output against a real API server;
 * - the code blocks of README.md and docs/ (the guides' programs and their tests), extracted by
 *   `scripts/doc-snippets.mjs --extract` and type-checked in the same passes; the blocks marked
 *   to run (no cluster: pure decisions, FakeApiServer and AdmissionReview tests) run from the
 *   tarballs (docs/adr/0262).
 *
 * @releases newest — the packed npm packages installed and run; no release-specific behaviour.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'mocha';
import type { V1Pod } from '@kubernetes/client-node';
import { ApiError, resourcePath, type KubeClient } from '@podlife/core';
import { type ControlPlane, makeTempDir, type ManagedProcess, removeTempDir, roleKey, sharedControlPlane, startProcess, stopKey, waitFor } from '@podlife/testbed';
import { PACKAGES, ROOT, childEnv, copyExample, createConsumer, filesUnder, readJson, sh, typecheck, workspaceManifest, type Consumer } from '../../packaging/consumer.js';
import { anchorsOf, linksOf } from '../../../scripts/link-check.mjs';

type Manifest = Record<string, unknown> & { name: string; version: string; exports: Record<string, Record<string, string>> };

const LIBRARIES = new Set(['core', 'pod-conditions', 'keystone', 'node-readiness']);
const podsPath = (ns: string, name?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });

function withoutSourceCondition(exports: Manifest['exports']): Manifest['exports'] {
  return Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).filter(([c]) => c !== '@podlife/source'))]));
}

/** What a user writes first: a pod by hand, with string times, and podlife's pure decision on it. */
const HAND_WRITTEN_POD = `import { asPod, type Wire } from '@podlife/core';
import type { V1Pod } from '@kubernetes/client-node';
import { evaluatePod } from '@podlife/keystone';

const pod: Wire<V1Pod> = {
  metadata: { name: 'report', namespace: 'batch', annotations: { 'role.podlife.dev/proxy': 'sidecar' } },
  spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 30, containers: [{ name: 'app' }, { name: 'proxy' }] },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', image: 'app', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, finishedAt: '2026-01-02T03:04:05Z' } } },
      { name: 'proxy', image: 'proxy', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-02T03:04:00Z' } } },
    ],
  },
};
const decision = evaluatePod(asPod(pod), { nowMs: Date.parse('2026-01-02T03:04:06Z') });
console.log(decision.action);
`;

/** A code block of the docs, as `doc-snippets.mjs --extract` lists it. */
interface DocModule {
  doc: string;
  line: number;
  path: string;
  run: boolean;
}

/** A user's unit test of a readiness gate, on the fake API server of @podlife/core/testing. */
const GATE_UNIT_TEST = `import { Manager } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import { ReadinessGate } from '@podlife/pod-conditions';

const fake = await FakeApiServer.start();
const manager = new Manager({ client: fake.client() });
new ReadinessGate({ conditionType: 'example.com/warm', evaluate: () => true }).register(manager);
await manager.start();
await fake.client().create('/api/v1/namespaces/ns/pods', { metadata: { name: 'web' }, spec: { readinessGates: [{ conditionType: 'example.com/warm' }], containers: [{ name: 'app' }] } });
let status: string | undefined;
for (let i = 0; i < 500 && status === undefined; i++) {
  await new Promise((r) => setTimeout(r, 10));
  status = fake.get<{ status?: { conditions?: { type: string; status: string }[] } }>('/api/v1/namespaces/ns/pods/web')?.status?.conditions?.find((c) => c.type === 'example.com/warm')?.status;
}
await manager.stop();
await fake.stop();
console.log(status);
`;

describe('packed tarballs, installed with npm outside the workspace', function () {
  this.timeout(15 * 60_000);
  let consumer: Consumer;
  let docModules: DocModule[] = [];

  before(async function () {
    this.timeout(15 * 60_000);
    await sh(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b'], ROOT);
    consumer = await createConsumer();
    for (const example of ['injector-webhook', 'custom-controller', 'readiness-gate']) copyExample(consumer, example);
    writeFileSync(join(consumer.dir, 'src', 'hand-written-pod.ts'), HAND_WRITTEN_POD);
    writeFileSync(join(consumer.dir, 'src', 'gate-unit-test.ts'), GATE_UNIT_TEST);
    const listed = await sh(process.execPath, [join(ROOT, 'scripts/doc-snippets.mjs'), '--extract', consumer.dir], ROOT);
    docModules = JSON.parse(listed.slice(listed.indexOf('['))) as DocModule[];
  });
  after(() => consumer?.remove());

  describe('what was packed', () => {
    for (const pkg of PACKAGES) {
      it(`@podlife/${pkg}: exports without the @podlife/source condition, otherwise the workspace's`, () => {
        const packed = readJson<Manifest>(join(consumer.installed(pkg), 'package.json'));
        const source = workspaceManifest(pkg) as Manifest;
        assert.doesNotMatch(JSON.stringify(packed), /@podlife\/source/);
        assert.deepEqual(packed.exports, withoutSourceCondition(source.exports));
        // The map pnpm swaps in must be the workspace's own minus the condition: an export added to one map only is caught here.
        assert.deepEqual((source.publishConfig as { exports?: unknown } | undefined)?.exports, withoutSourceCondition(source.exports), 'publishConfig.exports in the workspace');
        assert.deepEqual(packed.publishConfig, { access: 'public' });
      });

      it(`@podlife/${pkg}: sibling dependencies name the siblings' exact versions; no workspace: or catalog: survives`, () => {
        const packed = readJson<Manifest>(join(consumer.installed(pkg), 'package.json'));
        const text = JSON.stringify(packed);
        assert.doesNotMatch(text, /"(workspace|catalog):/);
        for (const [name, range] of Object.entries((packed.dependencies ?? {}) as Record<string, string>)) {
          const sibling = PACKAGES.find((p) => workspaceManifest(p).name === name);
          if (sibling) assert.equal(range, workspaceManifest(sibling).version, `${name}`);
        }
      });

      it(`@podlife/${pkg}: registry metadata, the Apache-2.0 LICENSE, README and CHANGELOG`, () => {
        const at = consumer.installed(pkg);
        const packed = readJson<Manifest & { repository: { directory: string }; keywords: string[]; description: string; homepage: string; sideEffects?: boolean }>(join(at, 'package.json'));
        assert.equal(packed.license, 'Apache-2.0');
        assert.equal(readFileSync(join(at, 'LICENSE'), 'utf8'), readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
        assert.match(readFileSync(join(at, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
        assert.ok(existsSync(join(at, 'README.md')) && existsSync(join(at, 'CHANGELOG.md')));
        assert.ok(packed.description.length > 20, 'a description');
        assert.ok(packed.keywords.includes('kubernetes'), 'keywords');
        assert.equal(packed.repository.directory, `packages/${pkg}`);
        assert.match(packed.homepage, /^https:\/\//);
        assert.equal(packed.sideEffects, LIBRARIES.has(pkg) ? false : undefined);
      });

      it(`@podlife/${pkg}: every source map and declaration map names files that ship`, () => {
        const at = consumer.installed(pkg);
        const maps = filesUnder(join(at, 'dist')).filter((f) => f.endsWith('.map'));
        assert.ok(maps.length > 0, 'maps ship');
        const missing: string[] = [];
        for (const map of maps) {
          const { sources } = readJson<{ sources: string[] }>(join(at, 'dist', map));
          for (const source of sources) if (!existsSync(resolve(dirname(join(at, 'dist', map)), source))) missing.push(`${map} -> ${source}`);
        }
        assert.deepEqual(missing, []);
      });

      it(`@podlife/${pkg}: every relative link of its Markdown resolves inside the installed package`, () => {
        const at = consumer.installed(pkg);
        const broken: string[] = [];
        for (const md of filesUnder(at).filter((f) => f.endsWith('.md'))) {
          for (const { line, target } of linksOf(readFileSync(join(at, md), 'utf8'))) {
            if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
            const [path = '', fragment] = target.split('#');
            const dest = path === '' ? join(at, md) : resolve(dirname(join(at, md)), decodeURIComponent(path));
            const inside = dest === at || dest.startsWith(`${at}/`);
            if (!inside || !existsSync(dest)) broken.push(`${md}:${line}: ${target}`);
            else if (fragment !== undefined && dest.endsWith('.md') && !anchorsOf(readFileSync(dest, 'utf8')).has(decodeURIComponent(fragment))) broken.push(`${md}:${line}: ${target} (no such anchor)`);
          }
        }
        assert.deepEqual(broken, []);
      });

      it(`@podlife/${pkg}: the annotation contract ships with it when its README points at it`, () => {
        const readme = readFileSync(join(consumer.installed(pkg), 'README.md'), 'utf8');
        const copy = join(consumer.installed(pkg), 'annotations.md');
        if (!readme.includes('docs/annotations.md')) return assert.equal(existsSync(copy), false, 'a copy nothing points at');
        const shipped = readFileSync(copy, 'utf8');
        // The repository's document, with its links to other files made absolute (checked above).
        const headings = readFileSync(join(ROOT, 'docs', 'annotations.md'), 'utf8').split('\n').filter((l) => l.startsWith('#'));
        assert.deepEqual(headings.filter((h) => !shipped.includes(`\n${h}\n`)), [], 'every section of the contract');
        assert.ok(existsSync(join(ROOT, 'packages', pkg, 'package.json')) && !existsSync(join(ROOT, 'packages', pkg, 'annotations.md')), 'the copy is removed after packing');
      });

      it(`@podlife/${pkg}: tests stay out of the tarball`, () => {
        assert.deepEqual(filesUnder(consumer.installed(pkg)).filter((f) => /(^|\/)test\/|\.test\.ts$/.test(f)), []);
      });
    }

    it('@kubernetes/client-node: one copy in the consumer tree (a peer of the libraries, a caret range of the controller)', () => {
      const copies = filesUnder(join(consumer.dir, 'node_modules')).filter((f) => f.endsWith('@kubernetes/client-node/package.json'));
      assert.deepEqual(copies, ['@kubernetes/client-node/package.json']);
      for (const pkg of PACKAGES) {
        const packed = readJson<{ peerDependencies?: Record<string, string>; dependencies?: Record<string, string> }>(join(consumer.installed(pkg), 'package.json'));
        const range = LIBRARIES.has(pkg) ? packed.peerDependencies?.['@kubernetes/client-node'] : packed.dependencies?.['@kubernetes/client-node'];
        assert.match(range ?? '', /^\^2\./, pkg);
      }
    });
  });

  describe('publint and attw on each tarball', () => {
    for (const pkg of PACKAGES) {
      it(`@podlife/${pkg}: publint --strict`, async () => {
        const out = await sh(process.execPath, [join(ROOT, 'node_modules/publint/src/cli.js'), 'run', consumer.tarballs[pkg], '--strict'], ROOT);
        assert.match(out, /All good!/);
      });
      it(`@podlife/${pkg}: attw (ESM only: node16 from ESM and bundler resolve)`, async () => {
        const out = await sh(
          process.execPath,
          [join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js'), consumer.tarballs[pkg], '--profile', 'esm-only', '--no-definitely-typed', '--no-color', '--no-emoji', '--format', 'json'],
          ROOT,
        );
        // attw exits non-zero on a problem of the profile; the JSON also lists what the profile ignores (CommonJS and node10).
        const report = JSON.parse(out.slice(out.indexOf('{'))) as { problems?: Record<string, { resolutionKind?: string; kind: string }[]> };
        const problems = Object.values(report.problems ?? {}).flat().filter((p) => p.resolutionKind !== 'node10' && p.resolutionKind !== 'node16-cjs');
        assert.deepEqual(problems, []);
      });
    }
  });

  describe('the examples, type-checked with skipLibCheck: false', () => {
    it('no example but the repository demo reaches into the repository (test/support, packages/)', () => {
      const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true }).filter((e) => e.isDirectory() && e.name !== 'demo' && e.name !== 'node_modules');
      const reaching: string[] = [];
      for (const e of examples) {
        for (const file of filesUnder(join(ROOT, 'examples', e.name)).filter((f) => f.endsWith('.ts') && !f.includes('node_modules'))) {
          if (/from '\.\.\/\.\.\//.test(readFileSync(join(ROOT, 'examples', e.name, file), 'utf8'))) reaching.push(`examples/${e.name}/${file}`);
        }
      }
      assert.ok(examples.length >= 3);
      assert.deepEqual(reaching, []);
    });
    it('under moduleResolution nodenext (and compiled, to run below)', async () => {
      await typecheck(consumer, 'nodenext');
      assert.ok(existsSync(join(consumer.dir, 'dist/injector-webhook/main.js')));
    });
    it('under moduleResolution bundler', async () => {
      await typecheck(consumer, 'bundler');
    });
    it('a hand-written pod with string times (Wire<V1Pod>, asPod) runs through evaluatePod: the sidecar is to stop', async () => {
      assert.equal((await sh(process.execPath, [join(consumer.dir, 'dist/hand-written-pod.js')], consumer.dir, childEnv(), 30_000)).trim(), 'stop');
    });
    it("the docs' code blocks are among what was type-checked: the README's and every guide's", () => {
      const docs = new Set(docModules.map((m) => m.doc));
      assert.ok(docs.has('README.md'), 'README.md');
      for (const guide of ['controller-unit-tests', 'injector-webhook', 'jobs-with-sidecars', 'explain', 'node-readiness']) assert.ok(docs.has(`docs/guides/${guide}.md`), guide);
      for (const m of docModules) assert.ok(existsSync(join(consumer.dir, m.path.replace(/^src/, 'dist').replace(/\.ts$/, '.js'))), `${m.doc}:${m.line} compiled`);
    });
    it("the docs' runnable blocks run from the tarballs (the controller's FakeApiServer test, the injector's review test, the pure decisions)", async () => {
      const runnable = docModules.filter((m) => m.run);
      assert.ok(runnable.some((m) => m.path.endsWith('controller.test.ts')) && runnable.some((m) => m.path.endsWith('injector.test.ts')), 'the guides mark their tests to run');
      const failed: string[] = [];
      for (const m of runnable) {
        const js = join(consumer.dir, m.path.replace(/^src/, 'dist').replace(/\.ts$/, '.js'));
        await sh(process.execPath, [js], consumer.dir, childEnv(), 60_000).catch((err: unknown) => failed.push(`${m.doc}:${m.line}: ${(err as Error).message.slice(-1500)}`));
      }
      assert.deepEqual(failed, []);
    });
    it('a unit test on @podlife/core/testing (a subpath export): the gate writes its condition on the fake API server', async () => {
      // Bounded: a fake server that left a watch's timer behind would keep the user's test process alive.
      assert.equal((await sh(process.execPath, [join(consumer.dir, 'dist/gate-unit-test.js')], consumer.dir, childEnv(), 30_000)).trim(), 'True');
    });
  });

  describe('the examples, run from the tarballs against a real API server', () => {
    let cp: ControlPlane;
    let client: KubeClient;
    let logs: string;
    const running: ManagedProcess[] = [];

    before(async () => {
      cp = await sharedControlPlane();
      client = cp.client;
      logs = makeTempDir('podlife-examples-');
    });
    after(async () => {
      await Promise.all(running.map((p) => p.stop()));
      if (logs) removeTempDir(logs);
    });

    function example(name: string, env: NodeJS.ProcessEnv): ManagedProcess {
      const p = startProcess({
        name: `example ${name}`,
        command: process.execPath,
        args: [join(consumer.dir, 'dist', name, 'main.js')],
        logPath: join(logs, `${name}.log`),
        cwd: consumer.dir,
        env: childEnv({ KUBECONFIG: cp.kubeconfigPath, ...env }),
      });
      running.push(p);
      return p;
    }

    async function namespace(name: string): Promise<void> {
      await client.create('/api/v1/namespaces', { metadata: { name } }).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.status === 409)) throw err;
      });
    }

    it('injector-webhook: a labelled pod is admitted with the proxy added and marked; a mutation that throws denies the pod', async () => {
      const serving = await cp.issueCertificate({ commonName: 'proxy-injector', server: true });
      writeFileSync(join(logs, 'tls.crt'), serving.certPem);
      writeFileSync(join(logs, 'tls.key'), serving.keyPem);
      const injector = example('injector-webhook', { TLS_CERT_FILE: join(logs, 'tls.crt'), TLS_KEY_FILE: join(logs, 'tls.key'), PORT: '0', HOST: '127.0.0.1' });
      const port = await waitFor('the injector to listen', async () => {
        if (!injector.running) throw new Error(`exited: ${injector.logTail()}`);
        return /listening on port (\d+)/.exec(readFileSync(injector.logPath, 'utf8'))?.[1];
      });

      const ns = 'packed-injector';
      await namespace(ns);
      const configs = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
      const name = 'packed-proxy-injector';
      await client.create(configs, {
        metadata: { name },
        webhooks: [{
          name: 'inject.example.com',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: `https://127.0.0.1:${port}/inject`, caBundle: Buffer.from(cp.caPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          objectSelector: { matchLabels: { 'inject-proxy': 'true' } },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          timeoutSeconds: 5,
        }],
      });
      try {
        const worker = (podName: string, extra: Partial<V1Pod['spec']> = {}): V1Pod => ({
          metadata: { name: podName, labels: { 'inject-proxy': 'true' } },
          spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'example.invalid/app:1' }], ...extra },
        });
        // The API server picks a new webhook configuration up within a second or so: dry runs until it does.
        await waitFor('the webhook configuration to take effect', async () => {
          const dry = await client.create<V1Pod>(podsPath(ns), worker('probe'), { dryRun: 'All' });
          return dry.spec?.containers.some((c) => c.name === 'proxy');
        });

        const admitted = await client.create<V1Pod>(podsPath(ns), worker('worker'));
        assert.deepEqual(admitted.spec?.containers.map((c) => c.name), ['app', 'proxy']);
        assert.equal(admitted.metadata?.annotations?.[roleKey('proxy')], 'sidecar');
        assert.equal(admitted.metadata?.annotations?.[stopKey('proxy')], 'preset:envoy');
        assert.equal(admitted.metadata?.labels?.['podlife.dev/managed'], 'true');
        assert.equal(admitted.metadata?.labels?.['podlife.dev/admission'], 'enabled');

        // An init container named "proxy": injectContainerOps throws, and the injector's failurePolicy 'Fail' denies.
        await assert.rejects(
          client.create(podsPath(ns), worker('clash', { initContainers: [{ name: 'proxy', image: 'example.invalid/init:1' }] })),
          (err: unknown) => err instanceof ApiError && /mutation failed: injectContainerOps: the pod already has a container named "proxy"/.test(err.message),
        );
      } finally {
        await client.delete(`${configs}/${name}`);
      }
      const exit = await injector.stop();
      assert.equal(exit.code, 0, injector.logTail());
    });

    it('custom-controller: the embedded keystone controller reconciles a pod in namespace batch', async () => {
      await namespace('batch');
      const controller = example('custom-controller', { HEALTH_PORT: '0' });
      await waitFor('the controller to start', async () => {
        if (!controller.running) throw new Error(`exited: ${controller.logTail()}`);
        return readFileSync(controller.logPath, 'utf8').includes('my-controller started');
      });
      // An annotation naming no container: the controller marks the pod invalid, never acts on it.
      await client.create(podsPath('batch'), {
        metadata: { name: 'packed-invalid', annotations: { [roleKey('ghost')]: 'sidecar' } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'example.invalid/app:1' }] },
      });
      const condition = await waitFor('LifecycleValid=False from the embedded controller', async () => {
        const pod = await client.get<V1Pod>(podsPath('batch', 'packed-invalid'));
        return pod.status?.conditions?.find((c) => c.type === 'podlife.dev/LifecycleValid');
      });
      assert.equal(condition.status, 'False');
      assert.match(condition.message ?? '', /role\.podlife\.dev\/ghost/);
      const exit = await controller.stop();
      assert.equal(exit.code, 0, controller.logTail());
    });

    it('readiness-gate: the gate writes its condition on a gated pod', async () => {
      const ns = 'packed-gate';
      await namespace(ns);
      const gate = example('readiness-gate', {});
      await client.create(podsPath(ns), {
        metadata: { name: 'gated' },
        spec: { readinessGates: [{ conditionType: 'example.com/warmed-up' }], containers: [{ name: 'app', image: 'example.invalid/app:1' }] },
      });
      const condition = await waitFor('example.com/warmed-up on the gated pod', async () => {
        if (!gate.running) throw new Error(`exited: ${gate.logTail()}`);
        const pod = await client.get<V1Pod>(podsPath(ns, 'gated'));
        return pod.status?.conditions?.find((c) => c.type === 'example.com/warmed-up');
      });
      assert.deepEqual([condition.status, condition.reason], ['False', 'NotStarted']);
      const exit = await gate.stop();
      assert.equal(exit.code, 0, gate.logTail());
    });
  });
});
