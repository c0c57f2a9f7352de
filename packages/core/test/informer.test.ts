import assert from 'node:assert/strict';
import { describe, it, afterEach } from 'mocha';
import { Informer, StalledWatchError, stripManagedFields } from '../src/informer.js';
import { FakeTransport, bookmark, obj, type TestObject } from './support/fake-transport.js';
import { until } from './support/until.js';

const running: Informer<TestObject>[] = [];

function informer(transport: FakeTransport, opts: { watchdogMs?: number; transform?: (o: TestObject) => TestObject } = {}) {
  const inf = new Informer<TestObject>({
    path: '/api/v1/things',
    transport,
    watchdogMs: opts.watchdogMs ?? 5_000,
    transform: opts.transform,
    backoff: { minMs: 1, maxMs: 5 },
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

describe('stripManagedFields', () => {
  it('drops metadata.managedFields and keeps the rest', () => {
    const o: TestObject = { metadata: { name: 'a', labels: { x: 'y' }, managedFields: [{ manager: 'm' }] } };
    const out = stripManagedFields(o);
    assert.deepEqual(out, { metadata: { name: 'a', labels: { x: 'y' } } });
    assert.ok(o.metadata?.managedFields, 'the input is not mutated');
  });
});
