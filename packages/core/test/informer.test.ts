import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, it, afterEach } from 'mocha';
import { Informer, StalledWatchError, stripManagedFields } from '../src/informer.js';
import { ApiError } from '../src/client.js';
import { FakeTransport, bookmark, initialEventsEnd, obj, type TestObject } from './support/fake-transport.js';
import { pagedClient, watchLines } from './support/paged-client.js';
import { until } from './support/until.js';

const running: Informer<TestObject>[] = [];

function informer(transport: FakeTransport, opts: { watchdogMs?: number; transform?: (o: TestObject) => TestObject; initialSync?: 'stream' | 'list' } = {}) {
  const inf = new Informer<TestObject>({
    path: '/api/v1/things',
    transport,
    watchdogMs: opts.watchdogMs ?? 5_000,
    transform: opts.transform,
    backoff: { minMs: 1, maxMs: 5 },
    initialSync: opts.initialSync,
  });
  running.push(inf);
  return inf;
}

function record(inf: Informer<TestObject>): string[] {
  const seen: string[] = [];
  inf.on('add', (o) => seen.push(`add ${o.metadata?.name}@${o.metadata?.resourceVersion}`));
  inf.on('update', (o, old) => seen.push(`update ${o.metadata?.name}@${old.metadata?.resourceVersion}->${o.metadata?.resourceVersion}`));
  inf.on('delete', (o) => seen.push(`delete ${o.metadata?.name}@${o.metadata?.resourceVersion}`));
  inf.on('relist', (reason) => seen.push(`relist ${reason}`));
  return seen;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

describe('Informer: list then watch', () => {
  it('lists, reports synced, then watches from the list resourceVersion', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [obj('a', '5'), obj('b', '6')], resourceVersion: '10' }];
    const inf = informer(t);
    const seen = record(inf);
    inf.start();
    await inf.waitForSync();
    const w = await t.watchNo(1);
    assert.equal(w.rv, '10');
    assert.deepEqual(seen, ['add a@5', 'add b@6']);
    assert.deepEqual(inf.store.keys().sort(), ['ns/a', 'ns/b']);
  });

  it('applies watch events to the store and emits add, update and delete', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [obj('a', '5')], resourceVersion: '10' }];
    const inf = informer(t);
    const seen = record(inf);
    inf.start();
    const w = await t.watchNo(1);
    w.push({ type: 'ADDED', object: obj('b', '11') });
    w.push({ type: 'MODIFIED', object: obj('a', '12', 'x') });
    w.push({ type: 'DELETED', object: obj('b', '13') });
    await until(() => seen.length === 4);
    assert.deepEqual(seen.slice(1), ['add b@11', 'update a@5->12', 'delete b@13']);
    assert.equal(inf.store.get('ns/a')?.spec?.value, 'x');
    assert.equal(inf.store.get('ns/b'), undefined);
    assert.equal(inf.resourceVersion, '13');
  });

  it('advances resourceVersion on bookmarks and resumes the next watch from it', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t);
    inf.start();
    const w1 = await t.watchNo(1);
    w1.push(bookmark('42'));
    w1.end();
    const w2 = await t.watchNo(2);
    assert.equal(w2.rv, '42');
    assert.equal(t.listCalls, 1);
  });

  it('applies the transform to listed and watched objects', async () => {
    const t = new FakeTransport();
    const managed = (name: string, rv: string): TestObject => ({ ...obj(name, rv), metadata: { ...obj(name, rv).metadata, managedFields: [{ manager: 'kubectl' }] } });
    t.lists = [{ items: [managed('a', '5')], resourceVersion: '10' }];
    const inf = informer(t, { transform: stripManagedFields });
    inf.start();
    const w = await t.watchNo(1);
    w.push({ type: 'ADDED', object: managed('b', '11') });
    await until(() => inf.store.size === 2);
    for (const o of inf.store.list()) assert.equal(o.metadata?.managedFields, undefined);
  });

  it('keeps going when an event handler throws', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '1' }];
    const inf = informer(t);
    inf.on('add', () => {
      throw new Error('handler bug');
    });
    inf.start();
    const w = await t.watchNo(1);
    w.push({ type: 'ADDED', object: obj('a', '2') });
    w.push({ type: 'ADDED', object: obj('b', '3') });
    await until(() => inf.store.size === 2);
    assert.equal(t.watches.length, 1);
  });
});

describe('Informer: streaming list (sendInitialEvents)', () => {
  it('syncs from the initial events at the end bookmark, without a list, and keeps watching on the same stream', async () => {
    const t = new FakeTransport({ streaming: true });
    const inf = informer(t);
    const seen = record(inf);
    inf.start();
    const s = await t.watchNo(1);
    assert.equal(s.streamingList, true);
    s.push({ type: 'ADDED', object: obj('a', '5') });
    s.push({ type: 'ADDED', object: obj('b', '6') });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(inf.hasSynced(), false, 'not synced before the end bookmark');
    assert.equal(inf.store.size, 0, 'the store takes the list only once it is complete');
    s.push(initialEventsEnd('10'));
    await inf.waitForSync();
    assert.deepEqual(seen, ['add a@5', 'add b@6']);
    assert.equal(inf.resourceVersion, '10');
    assert.equal(inf.lastSyncPath, 'stream');
    s.push({ type: 'MODIFIED', object: obj('a', '11', 'x') });
    await until(() => seen.length === 3);
    assert.equal(seen[2], 'update a@5->11');
    assert.equal(t.listCalls, 0);
    assert.equal(t.watches.length, 1);
  });

  it('takes a MODIFIED or DELETED before the end bookmark into the list it stores: the latest object of each key, none for a deleted one', async () => {
    const t = new FakeTransport({ streaming: true });
    const inf = informer(t);
    const seen = record(inf);
    inf.start();
    const s = await t.watchNo(1);
    s.push({ type: 'ADDED', object: obj('a', '5') });
    s.push({ type: 'ADDED', object: obj('b', '6') });
    s.push({ type: 'MODIFIED', object: obj('a', '8', 'x') });
    s.push({ type: 'DELETED', object: obj('b', '9') });
    s.push({ type: 'ADDED', object: obj('c', '9') });
    s.push({ type: 'ADDED', object: obj('b', '9') });
    s.push({ type: 'DELETED', object: obj('zz', '9') });
    s.push(initialEventsEnd('10'));
    await inf.waitForSync();
    assert.deepEqual(seen, ['add a@8', 'add c@9', 'add b@9']);
    assert.equal(inf.store.get('ns/a')?.spec?.value, 'x');
    assert.equal(inf.store.size, 3);
  });

  it('transforms each object as it arrives, before the list is complete', async () => {
    const t = new FakeTransport({ streaming: true });
    const transformed: string[] = [];
    const inf = informer(t, { transform: (o) => (transformed.push(o.metadata?.name ?? ''), { metadata: o.metadata }) });
    inf.start();
    const s = await t.watchNo(1);
    s.push({ type: 'ADDED', object: obj('a', '5') });
    await until(() => transformed.length === 1);
    assert.equal(inf.hasSynced(), false);
    s.push(initialEventsEnd('10'));
    await inf.waitForSync();
    assert.equal(inf.store.get('ns/a')?.spec, undefined);
  });

  it('falls back to a paged list when the server refuses streaming (422), then watches from the list', async () => {
    const t = new FakeTransport({ streaming: true });
    t.lists = [{ items: [obj('a', '5')], resourceVersion: '10' }];
    const inf = informer(t);
    const errors: Error[] = [];
    inf.on('error', (e) => errors.push(e));
    inf.start();
    (await t.watchNo(1)).fail(new ApiError(422, 'Invalid', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled', undefined));
    await inf.waitForSync();
    const w = await t.watchNo(2);
    assert.equal(w.streamingList, false);
    assert.equal(w.rv, '10');
    assert.equal(inf.lastSyncPath, 'list');
    assert.deepEqual(inf.store.keys(), ['ns/a']);
    assert.deepEqual(errors, [], 'a refusal is a capability, not an error');
  });

  it('falls back to a paged list when the server ignores sendInitialEvents (a bookmark without the end annotation)', async () => {
    const t = new FakeTransport({ streaming: true });
    t.lists = [{ items: [obj('a', '5'), obj('b', '6')], resourceVersion: '10' }];
    const inf = informer(t);
    inf.start();
    const s = await t.watchNo(1);
    s.push({ type: 'ADDED', object: obj('a', '5') });
    s.push(bookmark('7'));
    await inf.waitForSync();
    assert.equal(inf.lastSyncPath, 'list');
    assert.equal(inf.store.size, 2);
  });

  it('pages when told to, without trying to stream', async () => {
    const t = new FakeTransport({ streaming: true });
    t.lists = [{ items: [obj('a', '5')], resourceVersion: '10' }];
    const inf = informer(t, { initialSync: 'list' });
    inf.start();
    await inf.waitForSync();
    assert.equal((await t.watchNo(1)).streamingList, false);
    assert.equal(t.listCalls, 1);
  });

  it('discards a stream that breaks before its end bookmark and streams again after a backoff', async () => {
    const t = new FakeTransport({ streaming: true });
    const inf = informer(t);
    const seen = record(inf);
    const errors: Error[] = [];
    inf.on('error', (e) => errors.push(e));
    inf.start();
    const s1 = await t.watchNo(1);
    s1.push({ type: 'ADDED', object: obj('gone-meanwhile', '4') });
    s1.fail(new Error('connection reset'));
    const s2 = await t.watchNo(2);
    assert.equal(s2.streamingList, true);
    assert.equal(inf.store.size, 0);
    s2.push({ type: 'ADDED', object: obj('a', '5') });
    s2.push(initialEventsEnd('10'));
    await inf.waitForSync();
    assert.deepEqual(seen, ['add a@5']);
    assert.equal(errors.length, 1);
    assert.equal(t.listCalls, 0, 'a broken stream is not a refusal');
  });

  it('treats a stream that ends cleanly before its end bookmark as incomplete', async () => {
    const t = new FakeTransport({ streaming: true });
    const inf = informer(t);
    inf.start();
    const s1 = await t.watchNo(1);
    s1.push({ type: 'ADDED', object: obj('a', '5') });
    s1.end();
    const s2 = await t.watchNo(2);
    assert.equal(inf.hasSynced(), false);
    assert.equal(s2.streamingList, true);
  });

  it('after a 410 during the initial events, streams the whole list again', async () => {
    const t = new FakeTransport({ streaming: true });
    const inf = informer(t);
    inf.start();
    const s1 = await t.watchNo(1);
    s1.push({ type: 'ADDED', object: obj('a', '5') });
    s1.gone();
    const s2 = await t.watchNo(2);
    assert.equal(s2.streamingList, true);
    s2.push({ type: 'ADDED', object: obj('b', '8') });
    s2.push(initialEventsEnd('12'));
    await inf.waitForSync();
    assert.deepEqual(inf.store.keys(), ['ns/b']);
    assert.equal(t.listCalls, 0);
  });

  it('relists by streaming after a 410 on the watch: deletes, updates and adds from the difference', async () => {
    const t = new FakeTransport({ streaming: true });
    const inf = informer(t);
    const seen = record(inf);
    inf.start();
    const s1 = await t.watchNo(1);
    for (const o of [obj('keep', '5'), obj('change', '6'), obj('vanish', '7')]) s1.push({ type: 'ADDED', object: o });
    s1.push(initialEventsEnd('10'));
    await inf.waitForSync();
    seen.length = 0;
    s1.gone();
    const s2 = await t.watchNo(2);
    assert.equal(s2.streamingList, true);
    for (const o of [obj('keep', '5'), obj('change', '20'), obj('new', '21')]) s2.push({ type: 'ADDED', object: o });
    s2.push(initialEventsEnd('30'));
    await until(() => seen.length === 4);
    assert.deepEqual(seen.slice(0, 3).sort(), ['add new@21', 'delete vanish@7', 'update change@6->20']);
    assert.match(seen[3] ?? '', /^relist .*410/);
    assert.equal(inf.resourceVersion, '30');
  });
});

describe('Informer: 410 Gone -> relist', () => {
  it('relists and emits deletes for vanished objects, updates for changed ones and adds for new ones', async () => {
    const t = new FakeTransport();
    t.lists = [
      { items: [obj('keep', '5'), obj('change', '6'), obj('vanish', '7')], resourceVersion: '10' },
      { items: [obj('keep', '5'), obj('change', '20'), obj('new', '21')], resourceVersion: '30' },
    ];
    const inf = informer(t);
    const seen = record(inf);
    inf.start();
    const w1 = await t.watchNo(1);
    seen.length = 0;
    w1.gone();
    const w2 = await t.watchNo(2);
    assert.equal(w2.rv, '30');
    assert.deepEqual(seen.slice(0, 3).sort(), ['add new@21', 'delete vanish@7', 'update change@6->20']);
    assert.match(seen[3] ?? '', /^relist .*410/);
    assert.deepEqual(inf.store.keys().sort(), ['ns/change', 'ns/keep', 'ns/new']);
  });

  it('does not relist on other watch errors: it reopens the watch from the last resourceVersion', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t);
    inf.start();
    const w1 = await t.watchNo(1);
    w1.push({ type: 'ADDED', object: obj('a', '11') });
    w1.fail(new Error('connection reset'));
    const w2 = await t.watchNo(2);
    assert.equal(w2.rv, '11');
    assert.equal(t.listCalls, 1);
  });
});

describe('Informer: paged list over the API client (the fallback where streaming is refused)', () => {
  const page = (items: TestObject[], metadata: Record<string, unknown>): Record<string, unknown> => ({
    kind: 'ThingList',
    apiVersion: 'v1',
    metadata,
    items: items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest),
  });
  const refused = new ApiError(422, 'Invalid', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled', undefined);
  const expired = new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.', undefined);

  function paged(client: ReturnType<typeof pagedClient>['client']): Informer<TestObject> {
    const inf = new Informer<TestObject>({ path: '/api/v1/things', client, backoff: { minMs: 1, maxMs: 5 }, watchdogMs: 5_000 });
    running.push(inf);
    return inf;
  }

  it('syncs from every page, in list order, with the kind a watch event carries, and watches from the last page', async () => {
    const { client, asked } = pagedClient((query, signal) => {
      if (query.sendInitialEvents) return refused;
      if (query.watch) return watchLines(signal);
      return query.continue === undefined ? page([obj('a', '5'), obj('b', '6')], { continue: 'p2', resourceVersion: '10' }) : page([obj('c', '7')], { resourceVersion: '11' });
    });
    const inf = paged(client);
    const seen = record(inf);
    inf.start();
    await inf.waitForSync();
    assert.deepEqual(seen, ['add a@5', 'add b@6', 'add c@7']);
    assert.deepEqual(inf.store.keys(), ['ns/a', 'ns/b', 'ns/c']);
    assert.deepEqual(inf.store.get('ns/c'), obj('c', '7'));
    assert.equal(inf.lastSyncPath, 'list');
    await until(() => asked.some((q) => q.watch && !q.sendInitialEvents));
    assert.equal(asked.find((q) => q.watch && !q.sendInitialEvents)?.resourceVersion, '11');
  });

  it('caches managedFields as sent when no transform drops it, and never parses it when one does', async () => {
    const withFields = (name: string): TestObject => ({ ...obj(name, '5'), metadata: { ...obj(name, '5').metadata, managedFields: [{ manager: 'kubelet', fieldsV1: { [`k:{"uid":"${name}"}`]: {} } }] } });
    const serve = (): ReturnType<typeof pagedClient>['client'] =>
      pagedClient((query, signal) => (query.sendInitialEvents ? refused : query.watch ? watchLines(signal) : page([withFields('a')], { resourceVersion: '10' }))).client;
    const kept = new Informer<TestObject>({ path: '/api/v1/things', client: serve(), backoff: { minMs: 1, maxMs: 5 } });
    const dropped = new Informer<TestObject>({ path: '/api/v1/things', client: serve(), backoff: { minMs: 1, maxMs: 5 }, transform: stripManagedFields });
    running.push(kept, dropped);
    kept.start();
    dropped.start();
    await Promise.all([kept.waitForSync(), dropped.waitForSync()]);
    assert.deepEqual(kept.store.get('ns/a'), withFields('a'));
    assert.deepEqual(dropped.store.get('ns/a'), obj('a', '5'));
  });

  it('keeps nothing of a list whose continue token expired: the store is the fresh list alone', async () => {
    let lists = 0;
    const { client } = pagedClient((query, signal) => {
      if (query.sendInitialEvents) return refused;
      if (query.watch) return watchLines(signal);
      if (query.continue === undefined) {
        lists++;
        // The first list saw `gone`, deleted before the fresh read.
        return lists === 1 ? page([obj('a', '5'), obj('gone', '6')], { continue: 'old', resourceVersion: '10' }) : page([obj('a', '5'), obj('b', '12')], { continue: 'new', resourceVersion: '20' });
      }
      return query.continue === 'old' ? expired : page([obj('c', '13')], { resourceVersion: '20' });
    });
    const inf = paged(client);
    const seen = record(inf);
    inf.start();
    await inf.waitForSync();
    assert.deepEqual(inf.store.keys(), ['ns/a', 'ns/b', 'ns/c']);
    assert.deepEqual(seen, ['add a@5', 'add b@12', 'add c@13']);
  });

  it('relists in pages after a 410 on the watch: deletes, updates and adds from the difference', async () => {
    let lists = 0;
    let watches = 0;
    const { client } = pagedClient((query, signal) => {
      if (query.sendInitialEvents) return refused;
      if (query.watch) {
        watches++;
        return watches === 1 ? watchLines(signal, { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) : watchLines(signal);
      }
      lists++;
      return lists === 1
        ? page([obj('keep', '5'), obj('change', '6'), obj('vanish', '7')], { resourceVersion: '10' })
        : page([obj('keep', '5'), obj('change', '20'), obj('new', '21')], { resourceVersion: '30' });
    });
    const inf = paged(client);
    const seen = record(inf);
    inf.start();
    await until(() => seen.some((s) => s.startsWith('relist')));
    assert.deepEqual(seen.slice(3, 6).sort(), ['add new@21', 'delete vanish@7', 'update change@6->20']);
    assert.deepEqual(inf.store.keys().sort(), ['ns/change', 'ns/keep', 'ns/new']);
    assert.equal(inf.resourceVersion, '30');
  });
});

describe('Informer: reconnect with backoff', () => {
  it('retries a failing list until it succeeds, emitting each failure', async () => {
    const t = new FakeTransport();
    t.lists = [new Error('refused'), new Error('refused'), { items: [obj('a', '1')], resourceVersion: '2' }];
    const inf = informer(t);
    const errors: Error[] = [];
    inf.on('error', (e) => errors.push(e));
    inf.start();
    await inf.waitForSync();
    assert.equal(t.listCalls, 3);
    assert.equal(errors.length, 2);
  });

  it('backs off when a watch fails before delivering anything, without relisting', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t);
    const errors: Error[] = [];
    inf.on('error', (e) => errors.push(e));
    inf.start();
    for (let n = 1; n <= 3; n++) (await t.watchNo(n)).fail(new Error('refused'));
    const w4 = await t.watchNo(4);
    assert.equal(w4.rv, '10');
    assert.equal(t.listCalls, 1);
    assert.equal(errors.length, 3);
  });
});

describe('Informer: inactivity watchdog', () => {
  it('reopens a watch that delivers nothing, not even a bookmark, for watchdogMs', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t, { watchdogMs: 30 });
    const errors: Error[] = [];
    inf.on('error', (e) => errors.push(e));
    inf.start();
    const w1 = await t.watchNo(1);
    w1.push(bookmark('15'));
    const w2 = await t.watchNo(2);
    assert.equal(w2.rv, '15');
    assert.ok(errors.some((e) => e instanceof StalledWatchError));
  });

  it('does not fire while bookmarks keep arriving', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t, { watchdogMs: 40 });
    inf.start();
    const w1 = await t.watchNo(1);
    for (let i = 11; i < 20; i++) {
      w1.push(bookmark(String(i)));
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(t.watches.length, 1);
  });

  it('abandons a stalled watch even when the transport ignores the abort', async () => {
    const t = new FakeTransport();
    t.deaf = true;
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t, { watchdogMs: 20 });
    inf.start();
    await t.watchNo(3);
    assert.equal(t.listCalls, 1);
  });
});

describe('Informer: lifecycle', () => {
  it('stop() returns while a watch is open', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '10' }];
    const inf = informer(t);
    inf.start();
    await t.watchNo(1);
    await inf.stop();
    assert.equal(t.watches.length, 1);
  });

  it('stop() from an event handler during the list returns without waiting for the watchdog', async () => {
    const t = new FakeTransport();
    t.lists = [{ items: [obj('a', '1')], resourceVersion: '10' }];
    const inf = informer(t, { watchdogMs: 5_000 });
    let stopped: Promise<void> | undefined;
    inf.on('add', () => (stopped = inf.stop()));
    inf.start();
    await until(() => stopped !== undefined);
    const started = Date.now();
    await stopped;
    assert.ok(Date.now() - started < 1_000);
  });

  it('waitForSync rejects when its signal is aborted first', async () => {
    const t = new FakeTransport();
    t.lists = [new Error('refused')];
    const inf = informer(t);
    inf.start();
    const ac = new AbortController();
    const waiting = inf.waitForSync(ac.signal);
    ac.abort(new Error('gave up'));
    await assert.rejects(waiting, /gave up/);
    assert.equal(inf.hasSynced(), false);
  });
});

describe('Informer: memory', () => {
  it('keeps no watch event alive once it is applied (but the latest, which the stream may still hold): only its transformed object is cached', async () => {
    const collect = collector();
    const t = new FakeTransport();
    t.lists = [{ items: [], resourceVersion: '1' }];
    const inf = informer(t, { transform: (o) => ({ metadata: o.metadata }) });
    inf.start();
    const w = await t.watchNo(1);
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 20; i++) {
      const event = { type: 'ADDED' as const, object: obj(`o${i}`, String(i + 2)) };
      refs.push(new WeakRef(event.object));
      w.push(event);
    }
    await until(() => inf.store.size === 20);
    await new Promise((r) => setTimeout(r, 10));
    collect();
    const alive = refs.slice(0, -1).filter((r) => r.deref() !== undefined).length;
    assert.equal(alive, 0, 'the original events were collected while the watch stays open');
  });
});

/** A full garbage collection, from tests run without --expose-gc. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

describe('stripManagedFields', () => {
  it('drops metadata.managedFields and keeps the rest', () => {
    const o: TestObject = { metadata: { name: 'a', labels: { x: 'y' }, managedFields: [{ manager: 'm' }] } };
    const out = stripManagedFields(o);
    assert.deepEqual(out, { metadata: { name: 'a', labels: { x: 'y' } } });
    assert.ok(o.metadata?.managedFields, 'the input is not mutated');
  });

  it('never reads managedFields, so an informer that reads lists and watches leaves it unparsed', () => {
    const metadata = { name: 'a' };
    Object.defineProperty(metadata, 'managedFields', { enumerable: true, get: () => assert.fail('managedFields was read') });
    assert.deepEqual(stripManagedFields({ metadata }), { metadata: { name: 'a' } });
  });
});
