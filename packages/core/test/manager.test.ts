import assert from 'node:assert/strict';
import { describe, it, afterEach } from 'mocha';
import { until as poll } from './support/until.js';

const until = (check: () => boolean, ms = 3_000): Promise<void> => poll(check, ms, 5);
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError, KubeClient } from '../src/client.js';
import { Controller } from '../src/controller.js';
import type { LeaseApi, LeaseObject } from '../src/leader.js';
import { Manager } from '../src/manager.js';
import { FakeTransport, obj } from './support/fake-transport.js';

async function offlineClient(): Promise<KubeClient> {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return KubeClient.fromKubeConfig(kc);
}

class MemoryLease implements LeaseApi {
  lease: LeaseObject | undefined;
  private rv = 0;
  async get(): Promise<LeaseObject | undefined> {
    return this.lease && structuredClone(this.lease);
  }
  async create(l: LeaseObject): Promise<LeaseObject> {
    if (this.lease) throw new ApiError(409, 'AlreadyExists', 'exists', undefined);
    this.lease = { ...l, metadata: { ...l.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
  async update(l: LeaseObject): Promise<LeaseObject> {
    if (l.metadata.resourceVersion !== this.lease?.metadata.resourceVersion) throw new ApiError(409, 'Conflict', 'modified', undefined);
    this.lease = { ...l, metadata: { ...l.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
}

describe('Manager', () => {
  const managers: Manager[] = [];
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.stop()));
  });

  async function manager(opts: Partial<ConstructorParameters<typeof Manager>[0]> = {}): Promise<Manager> {
    const m = new Manager({ client: await offlineClient(), healthPort: 0, metricsPort: 0, ...opts });
    managers.push(m);
    return m;
  }

  it('answers /healthz at once and /readyz only after every informer has synced', async () => {
    const m = await manager();
    const t = new FakeTransport();
    // The list keeps failing until the test lets it succeed, so no timing decides what /readyz sees.
    t.lists = [new Error('not yet')];
    const informer = m.informer({ path: '/things', transport: t, backoff: { minMs: 20, maxMs: 20 } });
    const starting = m.start();
    await until(() => m.url('/readyz') !== undefined && t.listCalls > 0);
    const base = m.url('/healthz')!;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 503);
    t.lists = [{ items: [obj('a', '1')], resourceVersion: '2' }];
    await starting;
    assert.ok(informer.hasSynced());
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
  });

  describe('one way to add a controller: each is added once', () => {
    const controller = (name: string) => new Controller({ name, reconciler: { reconcile: async () => undefined } });

    it('refuses the same controller twice, saying factories add what they build', async () => {
      const m = await manager({ healthPort: undefined, metricsPort: undefined });
      const c = controller('gate');
      m.add(c);
      assert.throws(() => m.add(c), /controller "gate" is already added to this manager \(factories that take the manager.*do not pass their result to manager\.add\)/);
    });

    it('refuses a second controller of the same name', async () => {
      const m = await manager({ healthPort: undefined, metricsPort: undefined });
      m.add(controller('gate'));
      assert.throws(() => m.add(controller('gate')), /a controller named "gate" is already added/);
      m.add(controller('other'));
    });
  });

  it('serves /metrics with controller-runtime names for the controllers it runs', async () => {
    const m = await manager();
    m.add(new Controller({ name: 'pods', reconciler: { reconcile: async () => undefined }, concurrency: 2 }));
    await m.start();
    const res = await fetch(`${m.url('/metrics')}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="pods"\} 2/);
    assert.match(text, /workqueue_depth\{name="pods"\} 0/);
  });

  it('serves the process memory and each informer cache size on /metrics', async () => {
    const m = await manager();
    const t = new FakeTransport();
    t.lists = [{ items: [obj('a', '1'), obj('b', '2')], resourceVersion: '3' }];
    m.informer({ path: '/things', name: 'things', transport: t });
    await m.start();
    const text = await (await fetch(`${m.url('/metrics')}/metrics`)).text();
    assert.match(text, /^podlife_informer_cached_objects\{informer="things"\} 2$/m);
    const rss = Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1]);
    assert.ok(rss > 10 * 1024 * 1024, `resident memory ${rss}`);
    assert.match(text, /^nodejs_heap_size_used_bytes \d+$/m);
  });

  it('shares one informer per path and selectors', async () => {
    const m = await manager({ healthPort: undefined, metricsPort: undefined });
    const t = new FakeTransport();
    const a = m.informer({ path: '/api/v1/pods', labelSelector: 'x=y', transport: t });
    const b = m.informer({ path: '/api/v1/pods', labelSelector: 'x=y', transport: t });
    const c = m.informer({ path: '/api/v1/pods', transport: t });
    assert.equal(a, b);
    assert.notEqual(a, c);
  });

  it('never shares a cache between callers that slim objects differently', async () => {
    const m = await manager({ healthPort: undefined, metricsPort: undefined });
    const t = new FakeTransport();
    const slim = <T,>(o: T): T => o;
    const other = <T,>(o: T): T => o;
    const a = m.informer({ path: '/api/v1/pods', transport: t, transform: slim });
    const b = m.informer({ path: '/api/v1/pods', transport: t, transform: slim });
    const c = m.informer({ path: '/api/v1/pods', transport: t, transform: other });
    const d = m.informer({ path: '/api/v1/pods', transport: t });
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.notEqual(a, d);
    assert.notEqual(c, d);
  });

  it('runs controllers only in the replica that holds the lease, and fails over on stop', async () => {
    const lease = new MemoryLease();
    const reconciled: string[] = [];
    const replica = async (identity: string): Promise<{ m: Manager; c: Controller }> => {
      const m = await manager({
        healthPort: undefined,
        metricsPort: undefined,
        leaderElection: { namespace: 'ns', name: 'l', identity, leaseApi: lease, leaseDurationMs: 1_000, renewDeadlineMs: 600, retryPeriodMs: 50 },
      });
      const c = new Controller({ name: `c-${identity}`, reconciler: { reconcile: async (key) => void reconciled.push(`${identity}:${key}`) } });
      m.add(c);
      await m.start();
      return { m, c };
    };
    const one = await replica('one');
    await until(() => one.m.isLeader());
    const two = await replica('two');
    one.c.enqueue('k');
    two.c.enqueue('k');
    await new Promise((r) => setTimeout(r, 150));
    assert.deepEqual(reconciled, ['one:k']);
    assert.equal(two.m.isLeader(), false);
    await one.m.stop();
    await until(() => two.m.isLeader());
    two.c.enqueue('k2');
    await until(() => reconciled.includes('two:k2'));
  });

  it('stop() resolves within its deadline when a step hangs (an API server that cannot be reached)', async () => {
    const m = await manager({ shutdownTimeoutMs: 200 });
    const stuck = new (class extends Controller {
      override stop(): Promise<void> {
        return new Promise(() => undefined);
      }
    })({ name: 'stuck', reconciler: { reconcile: async () => undefined } });
    m.add(stuck);
    await m.start();
    const began = Date.now();
    await m.stop();
    const took = Date.now() - began;
    assert.ok(took >= 150 && took < 1500, `stop() took ${took} ms`);
  });

  it('stop() is idempotent and resolves done', async () => {
    const m = await manager();
    await m.start();
    await Promise.all([m.stop(), m.stop()]);
    await m.done;
  });
});
