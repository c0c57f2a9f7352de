import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { Informer, METADATA_LIST, silentLogger, type KubeClient, type Logger, type RequestOptions } from '@podlife/core';
import { Registry } from 'prom-client';
import { UNLABELLED_GAUGE, UnlabelledPodAudit, isUnlabelledAnnotated } from '@podlife/keystone';
import { podlifeNotes, renderExplained } from '../src/cli/explain.js';

const annotated = { 'role.podlife.dev/app': 'keystone' };
const managed = { 'podlife.dev/managed': 'true' };

function pod(name: string, annotations?: Record<string, string>, labels?: Record<string, string>): V1Pod {
  return { metadata: { name, namespace: 'ns', resourceVersion: '1', ...(annotations ? { annotations } : {}), ...(labels ? { labels } : {}) } };
}

async function gauge(registry: Registry): Promise<number> {
  const metric = await registry.getSingleMetric(UNLABELLED_GAUGE)?.get();
  return metric?.values[0]?.value ?? Number.NaN;
}

function warnings(): { logger: Logger; seen: unknown[] } {
  const seen: unknown[] = [];
  const logger = { ...silentLogger(), warn: (obj: unknown) => void seen.push(obj) } as unknown as Logger;
  return { logger, seen };
}

describe('annotated pods without the managed label', () => {
  it('are those with lifecycle annotations and without podlife.dev/managed: "true"', () => {
    assert.equal(isUnlabelledAnnotated(pod('a', annotated).metadata), true);
    assert.equal(isUnlabelledAnnotated(pod('a', annotated, { 'podlife.dev/managed': 'false' }).metadata), true);
    assert.equal(isUnlabelledAnnotated(pod('a', annotated, managed).metadata), false);
    assert.equal(isUnlabelledAnnotated(pod('a', { unrelated: 'x' }).metadata), false);
  });

  it('watching every pod: the gauge counts them in the pod cache at each scrape', async () => {
    const informer = new Informer<V1Pod>({ path: '/api/v1/pods', transport: { list: async () => ({ items: [], resourceVersion: '1' }), watch: async function* () {} } });
    for (const p of [pod('a', annotated), pod('b', annotated, managed), pod('c'), pod('d', annotated)]) informer.store.set(p);
    const registry = new Registry();
    new UnlabelledPodAudit({ registry, logger: silentLogger(), informers: [informer] });
    assert.equal(await gauge(registry), 2);
    informer.store.remove('ns/a');
    assert.equal(await gauge(registry), 1);
  });

  it('watching labelled pods only: an audit lists the metadata of unlabelled pods page by page, filtered by the server', async () => {
    const asked: RequestOptions[] = [];
    const pages: Record<string, { items: V1Pod[]; metadata: { continue?: string } }> = {
      '': { items: [pod('a', annotated), pod('c')], metadata: { continue: 'p2' } },
      p2: { items: [pod('d', annotated)], metadata: {} },
    };
    const client = { request: async (req: RequestOptions) => (asked.push(req), structuredClone(pages[String(req.query?.continue ?? '')])) } as unknown as KubeClient;
    const registry = new Registry();
    const { logger, seen } = warnings();
    const audit = new UnlabelledPodAudit({ registry, logger, audit: { client, paths: ['/api/v1/pods'], intervalMs: 60_000 } });
    assert.ok(Number.isNaN(await gauge(registry)), 'not known before the first audit ends');
    await audit.audit();
    assert.equal(await gauge(registry), 2);
    assert.deepEqual(asked.map((r) => [r.path, r.accept, r.query?.labelSelector, r.query?.continue]), [
      ['/api/v1/pods', METADATA_LIST, 'podlife.dev/managed!=true', undefined],
      ['/api/v1/pods', METADATA_LIST, 'podlife.dev/managed!=true', 'p2'],
    ]);
    assert.deepEqual(seen, [{ count: 2, examples: ['ns/a', 'ns/d'] }]);
  });

  it('watching labelled pods only: a scrape starts an audit only when the last one is older than the interval', async () => {
    let requests = 0;
    const client = { request: async () => (requests++, { items: [], metadata: {} }) } as unknown as KubeClient;
    const registry = new Registry();
    new UnlabelledPodAudit({ registry, logger: silentLogger(), audit: { client, paths: ['/api/v1/pods'], intervalMs: 60_000 } });
    while (Number.isNaN(await gauge(registry))) await new Promise((r) => setTimeout(r, 5));
    assert.equal(await gauge(registry), 0);
    await gauge(registry);
    assert.equal(requests, 1);
  });
});

describe('podlife explain names a pod the managed-only controller does not see', () => {
  const explanation = { pod: 'x' } as unknown as Parameters<typeof renderExplained>[0]['explanation'];

  it('a note for an annotated pod without the label, none otherwise', () => {
    assert.match(podlifeNotes(pod('web', annotated))[0] ?? '', /podlife\.dev\/managed.*--managed-pods-only.*\(kubectl label pod -n ns web podlife\.dev\/managed=true\)$/);
    assert.deepEqual(podlifeNotes(pod('web', annotated, managed)), []);
    assert.deepEqual(podlifeNotes(pod('web')), []);
  });

  it("the note's command names the pod's namespace, and quotes its name for the shell", () => {
    const odd = pod('a; curl x | sh #', annotated);
    odd.metadata!.namespace = "team's";
    assert.match(podlifeNotes(odd)[0] ?? '', /\(kubectl label pod -n 'team'\\''s' 'a; curl x \| sh #' podlife\.dev\/managed=true\)$/);
  });

  it('JSON output carries the notes only when there are some', () => {
    const json = (notes: string[]): unknown => JSON.parse(renderExplained({ explanation, notes }, { output: 'json', compact: true, width: 80 }));
    assert.deepEqual(json(['n']), { pod: 'x', notes: ['n'] });
    assert.deepEqual(json([]), { pod: 'x' });
  });
});
