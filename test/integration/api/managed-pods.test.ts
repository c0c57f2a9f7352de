/**
 * Opt-in selection (DESIGN 3.7) against a real API server: a controller run with
 * `--managed-pods-only` caches only pods labelled `podlife.dev/managed: "true"` (the API server
 * filters), a pod marked by podlife's patch builders carries that label and so is seen, and an
 * annotated pod without it is counted and named rather than silently ignored.
 *
 * @releases newest — label-selected informers: GA list and watch, alike on every release.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it, before, after } from 'mocha';
import type { V1Pod } from '@kubernetes/client-node';
import { ContentType, createLogger, resourcePath, silentLogger, type KubeClient, type Logger } from '@podlife/core';
import { ControllerApp, defaultConfig, parseFlags, type ControllerFlags } from '@podlife/controller';
import { UNLABELLED_GAUGE, markContainerOps } from '@podlife/keystone';
import { type ControlPlane, createNamespace, localWebhook, roleKey, startControlPlane, stopKey, waitFor } from '@podlife/testbed';

const podsPath = (ns: string, name?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });

function flags(extra: string[]): ControllerFlags {
  const parsed = parseFlags(['--controllers=keystone', '--metrics-port=0', '--health-port=0', '--log-level=warn', ...extra]);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.flags;
}

function pod(name: string, annotations?: Record<string, string>, labels?: Record<string, string>): V1Pod {
  return {
    metadata: { name, ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) },
    spec: { containers: [{ name: 'app', image: 'example.invalid/app:1' }, { name: 'proxy', image: 'example.invalid/proxy:1' }] },
  };
}

const sidecar = { [roleKey('proxy')]: 'sidecar' };

describe('opt-in selection by the podlife.dev/managed label, on a real API server', function () {
  let cp: ControlPlane;
  let client: KubeClient;
  let ns: string;

  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane();
    client = cp.client;
    ns = await createNamespace(client, 'managed');
    await client.create(podsPath(ns), pod('labelled', sidecar, { 'podlife.dev/managed': 'true' }));
    await client.create(podsPath(ns), pod('unlabelled', sidecar));
    await client.create(podsPath(ns), pod('plain'));
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  async function app(extra: string[], over: Partial<ControllerFlags> = {}, logger: Logger = silentLogger()): Promise<ControllerApp> {
    const a = new ControllerApp({ flags: { ...flags(extra), ...over }, config: { ...defaultConfig, namespaces: [ns] }, client, logger, bindAddress: '127.0.0.1' });
    await a.start();
    return a;
  }

  async function gauge(a: ControllerApp): Promise<number> {
    const metric = await a.manager.registry.getSingleMetric(UNLABELLED_GAUGE)?.get();
    return metric?.values[0]?.value ?? Number.NaN;
  }

  it('--managed-pods-only caches only labelled pods, and counts and names the annotated one without the label', async function () {
    this.timeout(60_000);
    const a = await app(['--managed-pods-only']);
    try {
      const store = a.keystone!.podInformers[0]!.store;
      assert.deepEqual(store.keys(), [`${ns}/labelled`]);
      const finding = await a.keystone!.unlabelled.audit();
      assert.deepEqual(finding, { count: 1, examples: [`${ns}/unlabelled`] });
      assert.equal(await gauge(a), 1);
    } finally {
      await a.stop();
    }
  });

  it('a pod marked by markContainerOps carries the label, so the managed-only controller sees it', async function () {
    this.timeout(60_000);
    const a = await app(['--managed-pods-only']);
    try {
      const created = await client.create<V1Pod>(podsPath(ns), pod('marked-later'));
      const ops = markContainerOps(created, 'proxy', { role: 'sidecar', stop: 'signal:TERM' });
      await client.patch(podsPath(ns, 'marked-later'), ops, ContentType.JsonPatch);
      const store = a.keystone!.podInformers[0]!.store;
      await waitFor('the marked pod in the managed-only cache', async () => store.get(`${ns}/marked-later`));
      assert.equal(store.get(`${ns}/marked-later`)?.metadata?.annotations?.[stopKey('proxy')], 'signal:TERM');
      assert.equal((await a.keystone!.unlabelled.audit()).count, 1, 'still only the hand-annotated pod');
    } finally {
      await a.stop();
    }
  });

  it('the webhook labels an annotated pod it admits, so the managed-only controller sees it', async function () {
    this.timeout(60_000);
    const webhook = await localWebhook(client, `podlife-managed-${randomBytes(3).toString('hex')}`);
    const a = await app(['--managed-pods-only', '--webhook-port=1', `--tls-cert-file=${webhook.certFile}`, `--tls-key-file=${webhook.keyFile}`], { webhookPort: 0 }).catch(async (err: unknown) => {
      await webhook.remove();
      throw err;
    });
    try {
      await webhook.register(a.webhook!.port, [ns]);
      const optedIn = { 'podlife.dev/admission': 'enabled' };
      await waitFor('the webhook in the admission chain', async () => {
        const probe = await client.create<V1Pod>(podsPath(ns), pod(`dry-${randomBytes(3).toString('hex')}`, sidecar, optedIn), { dryRun: 'All' });
        return probe.metadata?.labels?.['podlife.dev/managed'] === 'true';
      }, { timeoutMs: 20_000 });
      const created = await client.create<V1Pod>(podsPath(ns), pod('admitted', sidecar, optedIn));
      assert.equal(created.metadata?.labels?.['podlife.dev/managed'], 'true');
      await waitFor('the admitted pod in the managed-only cache', async () => a.keystone!.podInformers[0]!.store.get(`${ns}/admitted`));
    } finally {
      await a.stop();
      await webhook.remove();
    }
  });

  it('with network-conditions beside keystone, --managed-pods-only says that controller still caches every pod', async function () {
    this.timeout(60_000);
    const lines: string[] = [];
    const logger = createLogger('test', { level: 'warn', destination: { write: (line: string) => void lines.push(line) } });
    const a = await app(['--managed-pods-only'], { controllers: ['keystone', 'network-conditions'] }, logger);
    try {
      const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 40).map((l) => l.msg);
      assert.ok(
        warnings.some((m) => m.includes('network-conditions still lists and watches every pod')),
        `a warning names network-conditions' cache (warnings: ${JSON.stringify(warnings)})`,
      );
      assert.equal(a.keystone!.podInformers[0]!.store.get(`${ns}/plain`), undefined, 'keystone\'s cache is still the labelled pods only');
    } finally {
      await a.stop();
    }
    const quiet: string[] = [];
    const alone = await app(['--managed-pods-only'], {}, createLogger('test', { level: 'warn', destination: { write: (line: string) => void quiet.push(line) } }));
    await alone.stop();
    assert.ok(!quiet.some((l) => l.includes('network-conditions')), `keystone alone: no such warning (${quiet.join('')})`);
  });

  it('without the flag every pod is cached, and the gauge counts the unlabelled annotated ones from the cache', async function () {
    this.timeout(60_000);
    const a = await app([]);
    try {
      const store = a.keystone!.podInformers[0]!.store;
      assert.ok(store.get(`${ns}/plain`) && store.get(`${ns}/unlabelled`) && store.get(`${ns}/labelled`));
      assert.equal(await gauge(a), 1);
    } finally {
      await a.stop();
    }
  });
});
