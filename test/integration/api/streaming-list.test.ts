/**
 * The informer's initial sync against a real kube-apiserver: the streaming list
 * (`sendInitialEvents`, KEP-3157) where the server serves it, the paged list where it refuses
 * it (its WatchList feature turned off), and the two ways either can fail before it is complete:
 * the API server restarting (mid-stream, mid-page), and 410 Gone when etcd compacts away the
 * revision the stream or the next page is read at.
 *
 * @releases every — the streaming list (WatchList, beta) is each API server release's own: whether
 *   it serves it by default and how it ends the initial events.
 */
import assert from 'node:assert/strict';
import { describe, it, before, after } from 'mocha';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { ApiError, ContentType, Informer, KubeClient, sleep, stripManagedFields, type Query, type RequestOptions } from '@podlife/core';
import { configMapsPath, type ControlPlane, createNamespace, expectStoreMatchesServer, type HoldingProxy, retry, startControlPlane, startHoldingProxy, type StateOptions, waitFor } from '@podlife/testbed';

/** Reads of the server through restarts and compactions: more attempts, and a longer wait for the store. */
const held: StateOptions = { attempts: 100, timeoutMs: 60_000 };

/** Creates `count` ConfigMaps, `concurrency` at a time, each carrying `bytes` of data. */
async function createMany(client: KubeClient, ns: string, count: number, bytes = 10, concurrency = 16): Promise<void> {
  const value = 'x'.repeat(bytes);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await retry(() => client.create(configMapsPath(ns), { metadata: { name: `cm-${i}` }, data: { value } }), 100);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * A client of its own for the informer, through a proxy that holds its first response after
 * `holdAfterBytes`: the stream stops mid-way, for as long as the test needs to inject a fault.
 */
/** Longer than a test holds a stream (a restart on a loaded machine): only the fault may end it. */
const heldWatchdogMs = 180_000;

async function heldClient(cp: ControlPlane, holdAfterBytes: number): Promise<{ client: KubeClient; proxy: HoldingProxy }> {
  const proxy = await startHoldingProxy(cp.server, { holdAfterBytes });
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  kc.loadFromOptions({
    clusters: kc.clusters.map((c) => ({ ...c, server: proxy.url })),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return { client: await KubeClient.fromKubeConfig(kc), proxy };
}

/**
 * An informer, started, on a client of its own through a proxy that holds its first response
 * after `holdAfterBytes`: what it transformed, the errors it reported, and its store's size at each error
 * before its first sync.
 */
async function heldInformer(cp: ControlPlane, ns: string, holdAfterBytes = 2 * 1024 * 1024): Promise<{
  informerClient: KubeClient;
  proxy: HoldingProxy;
  inf: Informer<V1ConfigMap>;
  errors: Error[];
  storeAtError: number[];
  transformed: () => number;
}> {
  const { client: informerClient, proxy } = await heldClient(cp, holdAfterBytes);
  let count = 0;
  const inf = informer(informerClient, ns, (cm) => {
    count++;
    return stripManagedFields(cm);
  }, heldWatchdogMs);
  const errors: Error[] = [];
  const storeAtError: number[] = [];
  inf.on('error', (err) => {
    errors.push(err);
    if (!inf.hasSynced()) storeAtError.push(inf.store.size);
  });
  inf.start();
  return { informerClient, proxy, inf, errors, storeAtError, transformed: () => count };
}

/**
 * The initial sync of `total` objects in `ns`, held after its first 2 MiB, cut there by an API
 * server restart during which cm-0 goes and during-restart comes: nothing of the cut read reaches
 * the store, and the next read (by `path`) starts again from the first object and syncs exactly.
 * Streamed objects and a page's items alike are transformed as they arrive (docs/adr/0281), so the
 * cut is taken once the first of them have been.
 */
async function restartMidSync(cp: ControlPlane, ns: string, total: number, path: 'stream' | 'list'): Promise<void> {
  const client = cp.client;
  const { informerClient, proxy, inf, errors, storeAtError, transformed } = await heldInformer(cp, ns);
  try {
    await proxy.held;
    await waitFor('the first objects of the read', () => transformed() >= 1, { timeoutMs: 60_000 });
    assert.equal(inf.hasSynced(), false);
    assert.equal(inf.store.size, 0, 'nothing is stored before the whole read has arrived');
    assert.deepEqual(errors, [], 'the read was intact before the restart');
    await cp.restartApiServer();
    // Changes the cut read never carried: the next one must.
    await retry(() => client.delete(configMapsPath(ns, 'cm-0')), 100);
    await retry(() => client.create(configMapsPath(ns), { metadata: { name: 'during-restart' }, data: { value: '1' } }), 100);
    const partial = transformed();
    assert.ok(partial < total, `the held read delivered part of the list (${partial} of ${total} objects)`);
    proxy.release();
    await waitFor('sync', () => inf.hasSynced(), { timeoutMs: 120_000 });
    assert.equal(inf.lastSyncPath, path);
    assert.ok(storeAtError.length >= 1, 'the cut read was reported before the sync');
    assert.deepEqual(new Set(storeAtError), new Set([0]), 'nothing of the cut read reached the store');
    assert.ok(transformed() >= partial + total, `the list was read again from the start (${transformed()} objects transformed, ${partial} before the restart)`);
    assert.equal(inf.store.size, total);
    assert.equal(inf.store.get(`${ns}/cm-0`), undefined);
    assert.ok(inf.store.get(`${ns}/during-restart`));
    await expectStoreMatchesServer(client, ns, inf, held);
  } finally {
    await inf.stop();
    informerClient.close();
    await proxy.close();
  }
}

function informer(
  client: KubeClient,
  ns: string,
  transform: (cm: V1ConfigMap) => V1ConfigMap = stripManagedFields,
  watchdogMs = 30_000,
  initialSync: 'stream' | 'list' = 'stream',
): Informer<V1ConfigMap> {
  return new Informer<V1ConfigMap>({ client, path: configMapsPath(ns), transform, watchdogMs, backoff: { minMs: 200, maxMs: 2_000 }, initialSync });
}

/**
 * A client of its own for the informer, whose list requests (the pages, read as streams; watches
 * are not recorded) are recorded, and `afterFirst` run once the first has its answer.
 */
async function recordingClient(cp: ControlPlane, afterFirst: () => Promise<void>): Promise<{ client: KubeClient; asked: Query[]; failed: number[] }> {
  const client = await KubeClient.fromKubeConfig(cp.kubeConfig);
  const asked: Query[] = [];
  const failed: number[] = [];
  const stream = client.stream.bind(client);
  let first = true;
  client.stream = (async (opts: RequestOptions) => {
    if (opts.query?.watch) return stream(opts);
    asked.push({ ...opts.query });
    try {
      const page = await stream(opts);
      if (first) {
        first = false;
        await afterFirst();
      }
      return page;
    } catch (err) {
      failed.push(err instanceof ApiError ? err.status : 0);
      throw err;
    }
  }) as KubeClient['stream'];
  return { client, asked, failed };
}

describe('initial sync by streaming list, on a real API server (watch cache on, as in production)', function () {
  let cp: ControlPlane;
  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane();
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  it('syncs from one stream, without a list request, then follows changes on it', async function () {
    this.timeout(120_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    await createMany(client, ns, 50);
    const inf = informer(client, ns);
    const errors: Error[] = [];
    inf.on('error', (err) => errors.push(err));
    inf.start();
    try {
      await inf.waitForSync();
      assert.equal(inf.lastSyncPath, 'stream');
      assert.equal(inf.store.size, 50);
      assert.equal(inf.store.get(`${ns}/cm-0`)?.kind, 'ConfigMap');
      assert.equal(inf.store.get(`${ns}/cm-0`)?.metadata?.managedFields, undefined);
      await client.patch(configMapsPath(ns, 'cm-1'), { data: { value: 'changed' } }, ContentType.MergePatch);
      await client.delete(configMapsPath(ns, 'cm-2'));
      await client.create(configMapsPath(ns), { metadata: { name: 'later' }, data: { value: '1' } });
      await expectStoreMatchesServer(client, ns, inf, held);
      assert.equal(inf.store.get(`${ns}/cm-1`)?.data?.['value'], 'changed');
      assert.deepEqual(errors, []);
    } finally {
      await inf.stop();
    }
  });

  it('an API server restart during the initial stream: the partial stream counts for nothing, the next one syncs exactly', async function () {
    this.timeout(300_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    // 200 objects of 400 KiB: 80 MiB, more than loopback socket buffers hold (they grow to 32 MiB
    // for the reader, 4 MiB for the writer), so while the proxy holds the stream after its first
    // 2 MiB, the server cannot finish it: the restart cuts it.
    await createMany(client, ns, 200, 400 * 1024, 8);
    await restartMidSync(cp, ns, 200, 'stream');
  });

  it('relists by streaming when a watch resumes from a compacted resourceVersion (410)', async function () {
    this.timeout(180_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    await createMany(client, ns, 3);
    const inf = informer(client, ns);
    inf.start();
    await inf.waitForSync();
    await inf.stop();
    await client.delete(configMapsPath(ns, 'cm-0'));
    await client.create(configMapsPath(ns), { metadata: { name: 'new' }, data: { value: '1' } });
    const other = await createNamespace(client, 'stream');
    await createMany(client, other, 20);
    await cp.compactEtcd();
    await cp.restartApiServer();
    const relists: string[] = [];
    const seen: string[] = [];
    inf.on('relist', (reason) => relists.push(reason));
    inf.on('add', (cm) => seen.push(`add ${cm.metadata?.name}`));
    inf.on('delete', (cm) => seen.push(`delete ${cm.metadata?.name}`));
    inf.start();
    try {
      await waitFor('a relist', () => relists.length > 0, { timeoutMs: 60_000 });
      assert.match(relists[0] ?? '', /410/);
      assert.equal(inf.lastSyncPath, 'stream');
      assert.deepEqual(seen.sort(), ['add new', 'delete cm-0']);
      await expectStoreMatchesServer(client, ns, inf, held);
    } finally {
      await inf.stop();
    }
  });
});

describe('410 Gone during the initial sync (watch cache off: streams and pages read etcd)', function () {
  let cp: ControlPlane;
  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane({ watchCache: false });
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  it('discards the partial stream and streams again from a fresh read', async function () {
    this.timeout(600_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    // 10,100 objects of 8 KiB: the first etcd page alone is 80 MiB, more than loopback socket
    // buffers hold (32 MiB for the reader, 4 MiB for the writer), so while the proxy holds the
    // stream after its first MiB, the server is still sending the first page and has not read
    // the second.
    const total = 10_100;
    await createMany(client, ns, total, 8 * 1024, 32);
    const { informerClient, proxy, inf, errors, transformed } = await heldInformer(cp, ns, 1024 * 1024);
    const syncedAfter: Error[][] = [];
    inf.on('synced', () => syncedAfter.push([...errors]));
    try {
      await proxy.held;
      // Mid-stream, as the informer sees it: objects of the first page arrived, the end did not.
      await waitFor('the first objects of the stream', () => transformed() >= 1, { timeoutMs: 60_000 });
      assert.equal(inf.hasSynced(), false);
      assert.deepEqual(errors, [], 'the stream was intact before the compaction');
      // Move etcd's revision on and compact it, so the second page (read at the first page's
      // revision) is gone.
      await client.create(configMapsPath(ns), { metadata: { name: 'moves-the-revision' }, data: { value: '1' } });
      await cp.compactEtcd();
      proxy.release();
      await waitFor('sync', () => inf.hasSynced(), { timeoutMs: 300_000 });
      const before = syncedAfter[0] ?? [];
      assert.ok(
        before.some((e) => e instanceof ApiError && e.status === 410),
        `a 410 came before the initial-events-end bookmark (errors before the sync: ${before.map(String).join('; ') || 'none'})`,
      );
      assert.equal(inf.lastSyncPath, 'stream');
      assert.equal(inf.store.size, total + 1);
      await expectStoreMatchesServer(client, ns, inf, held);
    } finally {
      await inf.stop();
      informerClient.close();
      await proxy.close();
    }
  });

  it('a continue token that expires mid-list: the list starts over in pages from a fresh read, never unpaged', async function () {
    this.timeout(300_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    // Three pages of 100. Once the first page is in, etcd's revision moves on and is compacted:
    // the second page, read at the first page's revision, is gone.
    const total = 250;
    await createMany(client, ns, total);
    const { client: informerClient, asked, failed } = await recordingClient(cp, async () => {
      await client.create(configMapsPath(ns), { metadata: { name: 'moves-the-revision' }, data: { value: '1' } });
      await cp.compactEtcd();
    });
    const inf = informer(informerClient, ns, stripManagedFields, 30_000, 'list');
    const errors: Error[] = [];
    inf.on('error', (err) => errors.push(err));
    inf.start();
    try {
      await inf.waitForSync();
      assert.deepEqual(failed, [410], 'the second page of the first list was gone');
      assert.equal(inf.lastSyncPath, 'list');
      assert.ok(asked.every((q) => q.limit === 100), `every list request asked for a page: ${JSON.stringify(asked)}`);
      assert.deepEqual(
        asked.map((q) => (q.continue === undefined ? 'first page' : 'next page')),
        ['first page', 'next page', 'first page', 'next page', 'next page'],
        'after the 410 the list started over from its first page',
      );
      assert.deepEqual(errors, [], 'the list recovered inside one attempt');
      assert.equal(inf.store.size, total + 1);
      await expectStoreMatchesServer(client, ns, inf, held);
    } finally {
      await inf.stop();
      informerClient.close();
    }
  });
});

describe('initial sync by paged list, where the API server refuses streaming (WatchList off)', function () {
  let cp: ControlPlane;
  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane({ apiServerArgs: ['--feature-gates=WatchList=false'] });
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  it('falls back to the paged list without reporting an error, then follows changes', async function () {
    this.timeout(120_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    await createMany(client, ns, 30);
    const inf = informer(client, ns);
    const errors: Error[] = [];
    inf.on('error', (err) => errors.push(err));
    inf.start();
    try {
      await inf.waitForSync();
      assert.equal(inf.lastSyncPath, 'list');
      assert.equal(inf.store.size, 30);
      await client.patch(configMapsPath(ns, 'cm-1'), { data: { value: 'changed' } }, ContentType.MergePatch);
      await client.delete(configMapsPath(ns, 'cm-2'));
      await expectStoreMatchesServer(client, ns, inf, held);
      assert.deepEqual(errors, []);
    } finally {
      await inf.stop();
    }
  });

  it('an API server restart during a page: the partial list counts for nothing, the next list syncs exactly', async function () {
    this.timeout(300_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    // 120 objects of 600 KiB: the first page of 100 is 60 MiB, more than loopback socket buffers
    // hold (32 MiB for the reader, 4 MiB for the writer), so while the proxy holds it after its
    // first 2 MiB, the server cannot finish it: the restart cuts it.
    const total = 120;
    await createMany(client, ns, total, 600 * 1024, 8);
    await restartMidSync(cp, ns, total, 'list');
  });

  it('relists in pages after a 410, replaying what it missed', async function () {
    this.timeout(180_000);
    const client = cp.client;
    const ns = await createNamespace(client, 'stream');
    await createMany(client, ns, 3);
    const inf = informer(client, ns);
    inf.start();
    await inf.waitForSync();
    await inf.stop();
    await client.delete(configMapsPath(ns, 'cm-0'));
    const other = await createNamespace(client, 'stream');
    await createMany(client, other, 20);
    await cp.compactEtcd();
    await cp.restartApiServer();
    const relists: string[] = [];
    inf.on('relist', (reason) => relists.push(reason));
    inf.start();
    try {
      await waitFor('a relist', () => relists.length > 0, { timeoutMs: 60_000 });
      assert.match(relists[0] ?? '', /410/);
      assert.equal(inf.lastSyncPath, 'list');
      await expectStoreMatchesServer(client, ns, inf, held);
    } finally {
      await inf.stop();
    }
  });
});
