/**
 * @podlife/core's runtime against a real kube-apiserver and etcd: the informer keeps an exact
 * copy of a collection through API server restarts, a 30 s freeze (SIGSTOP) and etcd
 * compaction; the controller's queue reconciles every object; leader election hands over in
 * seconds; the event recorder folds repeats into a series.
 *
 * @releases newest — watch, list, leases and Events are GA APIs that behave alike on every
 *   supported release.
 */
import assert from 'node:assert/strict';
import { describe, it, before, after } from 'mocha';
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  ContentType,
  Controller,
  EventRecorder,
  Informer,
  LeaderElector,
  Manager,
  StalledWatchError,
  kubeLeaseApi,
  resourcePath,
  sleep,
  stripManagedFields,
  type KubeClient,
  type LeaseApi,
} from '@podlife/core';
import { configMapsPath, type ControlPlane, createNamespace, expectStoreMatchesServer, retry, startControlPlane, waitFor } from '@podlife/testbed';

async function createCm(client: KubeClient, namespace: string, name: string, value = '1'): Promise<void> {
  await retry(() => client.create(configMapsPath(namespace), { metadata: { name }, data: { value } }));
}

describe('core runtime against a real API server', function () {
  let cp: ControlPlane;
  let client: KubeClient;

  before(async function () {
    this.timeout(600_000);
    cp = await startControlPlane();
    client = cp.client;
  });
  after(async function () {
    this.timeout(60_000);
    await cp?.stop();
  });

  function informer(namespace: string, watchdogMs = 5_000): Informer<V1ConfigMap> {
    return new Informer<V1ConfigMap>({
      client,
      path: configMapsPath(namespace),
      transform: stripManagedFields,
      watchdogMs,
      backoff: { minMs: 200, maxMs: 2_000 },
    });
  }

  describe('Informer', () => {
    it('lists, then follows creates, updates and deletes; objects carry kind and no managedFields', async () => {
      const ns = await createNamespace(client, 'core-rt');
      for (let i = 0; i < 5; i++) await createCm(client, ns, `pre-${i}`);
      const inf = informer(ns);
      inf.start();
      try {
        await inf.waitForSync();
        assert.equal(inf.store.size, 5);
        const listed = inf.store.get(`${ns}/pre-0`);
        assert.equal(listed?.kind, 'ConfigMap');
        assert.equal(listed?.metadata?.managedFields, undefined);
        await createCm(client, ns, 'later');
        await client.patch(configMapsPath(ns, 'pre-1'), { data: { value: '2' } }, ContentType.MergePatch);
        await client.delete(configMapsPath(ns, 'pre-2'));
        await expectStoreMatchesServer(client, ns, inf);
        assert.equal(inf.store.get(`${ns}/pre-1`)?.data?.['value'], '2');
      } finally {
        await inf.stop();
      }
    });

    it('misses nothing across an API server restart', async function () {
      this.timeout(180_000);
      const ns = await createNamespace(client, 'core-rt');
      for (let i = 0; i < 10; i++) await createCm(client, ns, `before-${i}`);
      const inf = informer(ns);
      inf.start();
      try {
        await inf.waitForSync();
        await cp.restartApiServer();
        for (let i = 0; i < 10; i++) await createCm(client, ns, `after-${i}`);
        await retry(() => client.delete(configMapsPath(ns, 'before-0')));
        await expectStoreMatchesServer(client, ns, inf, { timeoutMs: 60_000 });
      } finally {
        await inf.stop();
      }
    });

    it('notices a 30 s freeze (SIGSTOP) through the watchdog and catches up after SIGCONT', async function () {
      this.timeout(180_000);
      const ns = await createNamespace(client, 'core-rt');
      await createCm(client, ns, 'before');
      const inf = informer(ns, 5_000);
      const stalls: Error[] = [];
      inf.on('error', (err) => {
        if (err instanceof StalledWatchError) stalls.push(err);
      });
      inf.start();
      try {
        await inf.waitForSync();
        cp.pauseApiServer();
        try {
          await sleep(30_000);
        } finally {
          cp.resumeApiServer();
        }
        assert.ok(stalls.length >= 1, 'the watchdog fired while the API server was frozen');
        for (let i = 0; i < 10; i++) await createCm(client, ns, `after-${i}`);
        await expectStoreMatchesServer(client, ns, inf, { timeoutMs: 60_000 });
      } finally {
        await inf.stop();
      }
    });

    it('relists after etcd compaction makes its resourceVersion too old (410), replaying what it missed', async function () {
      this.timeout(180_000);
      const ns = await createNamespace(client, 'core-rt');
      for (const name of ['keep', 'change', 'vanish']) await createCm(client, ns, name);
      const inf = informer(ns, 60_000);
      inf.start();
      await inf.waitForSync();
      // Disconnect the informer while the collection changes and history is compacted away.
      await inf.stop();
      await client.patch(configMapsPath(ns, 'change'), { data: { value: '2' } }, ContentType.MergePatch);
      await client.delete(configMapsPath(ns, 'vanish'));
      await createCm(client, ns, 'new');
      const other = await createNamespace(client, 'core-rt');
      for (let i = 0; i < 20; i++) await createCm(client, other, `noise-${i}`);
      await cp.compactEtcd();
      // A fresh API server has an empty watch cache, so the old resourceVersion cannot be served from memory either.
      await cp.restartApiServer();
      const seen: string[] = [];
      const relists: string[] = [];
      inf.on('add', (cm) => seen.push(`add ${cm.metadata?.name}`));
      inf.on('update', (cm) => seen.push(`update ${cm.metadata?.name}`));
      inf.on('delete', (cm) => seen.push(`delete ${cm.metadata?.name}`));
      inf.on('relist', (reason) => relists.push(reason));
      inf.start();
      try {
        await waitFor('a relist', () => relists.length > 0, { timeoutMs: 60_000 });
        assert.match(relists[0] ?? '', /410/);
        assert.deepEqual(seen.sort(), ['add new', 'delete vanish', 'update change']);
        await expectStoreMatchesServer(client, ns, inf);
      } finally {
        await inf.stop();
      }
    });
  });

  describe('Manager, Controller and WorkQueue', () => {
    it('reconciles every object of a synced informer exactly as the server holds it', async () => {
      const ns = await createNamespace(client, 'core-rt');
      for (let i = 0; i < 30; i++) await createCm(client, ns, `cm-${i}`);
      const mgr = new Manager({ client, healthPort: 0, metricsPort: 0 });
      const cms = mgr.informer<V1ConfigMap>({ path: configMapsPath(ns), transform: stripManagedFields });
      const inFlight = new Set<string>();
      let overlaps = 0;
      const controller = new Controller({
        name: 'label-seen',
        concurrency: 4,
        reconciler: {
          async reconcile(key) {
            if (inFlight.has(key)) overlaps++;
            inFlight.add(key);
            try {
              const cm = cms.store.get(key);
              if (!cm || cm.metadata?.labels?.['seen'] === 'yes') return;
              await client.patch(configMapsPath(ns, cm.metadata?.name), { metadata: { labels: { seen: 'yes' } } }, ContentType.MergePatch);
            } finally {
              inFlight.delete(key);
            }
          },
        },
      }).watch(cms);
      mgr.add(controller);
      await mgr.start();
      try {
        const ready = await fetch(`${mgr.url('/readyz')}/readyz`);
        assert.equal(ready.status, 200);
        await waitFor('every ConfigMap labelled', async () => {
          const list = await client.get<{ items: V1ConfigMap[] }>(configMapsPath(ns));
          return list.items.length === 30 && list.items.every((cm) => cm.metadata?.labels?.['seen'] === 'yes');
        });
        assert.equal(overlaps, 0);
        const metrics = await (await fetch(`${mgr.url('/metrics')}/metrics`)).text();
        assert.match(metrics, /controller_runtime_reconcile_total\{controller="label-seen",result="success"\} [1-9]/);
      } finally {
        await mgr.stop();
      }
    });
  });

  describe('LeaderElector on a coordination.k8s.io/v1 Lease', () => {
    interface Replica {
      elector: LeaderElector;
      leadingSince?: number;
    }

    function replica(ns: string, identity: string, leaseApi?: LeaseApi): Replica {
      const r: Replica = {
        elector: new LeaderElector({
          client,
          leaseApi,
          namespace: ns,
          name: 'core-rt',
          identity,
          onStartedLeading: () => (r.leadingSince = Date.now()),
          onStoppedLeading: () => (r.leadingSince = undefined),
        }),
      };
      return r;
    }

    it('elects one leader of two and fails over within one retry period when the leader stops', async function () {
      this.timeout(60_000);
      const ns = await createNamespace(client, 'core-rt');
      const a = replica(ns, 'a');
      const b = replica(ns, 'b');
      a.elector.start();
      await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: 10_000 });
      b.elector.start();
      try {
        await sleep(5_000);
        assert.equal(a.elector.isLeader(), true);
        assert.equal(b.elector.isLeader(), false);
        const stoppedAt = Date.now();
        await a.elector.stop();
        await waitFor('b to lead', () => b.elector.isLeader(), { timeoutMs: 10_000 });
        const failoverMs = Date.now() - stoppedAt;
        assert.ok(failoverMs < 3_000, `failover took ${failoverMs} ms`);
        const lease = await client.get<{ spec?: { holderIdentity?: string; leaseTransitions?: number } }>(
          resourcePath({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: ns, name: 'core-rt' }),
        );
        assert.equal(lease.spec?.holderIdentity, 'b');
      } finally {
        await a.elector.stop();
        await b.elector.stop();
      }
    });

    it('a partitioned leader steps down before its lease expires, and the other takes over after expiry', async function () {
      this.timeout(90_000);
      const ns = await createNamespace(client, 'core-rt');
      let partitioned = false;
      const real = kubeLeaseApi(client, ns, 'core-rt');
      const cut = (): Promise<never> => Promise.reject(new Error('partitioned'));
      const flaky: LeaseApi = {
        get: (s) => (partitioned ? cut() : real.get(s)),
        create: (l, s) => (partitioned ? cut() : real.create(l, s)),
        update: (l, s) => (partitioned ? cut() : real.update(l, s)),
      };
      const a = replica(ns, 'a', flaky);
      const b = replica(ns, 'b');
      a.elector.start();
      await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: 10_000 });
      b.elector.start();
      try {
        await sleep(3_000);
        partitioned = true;
        const cutAt = Date.now();
        await waitFor('a to step down', () => !a.elector.isLeader(), { timeoutMs: 20_000 });
        const stepDownMs = Date.now() - cutAt;
        await waitFor('b to lead', () => b.elector.isLeader(), { timeoutMs: 30_000 });
        const takeoverMs = Date.now() - cutAt;
        assert.ok(stepDownMs <= 12_500, `a stepped down after ${stepDownMs} ms`);
        assert.ok(takeoverMs > stepDownMs, 'never two leaders');
        assert.ok(takeoverMs <= 15_000 + 2 * 2_400 + 1_000, `b took over after ${takeoverMs} ms`);
      } finally {
        partitioned = false;
        await a.elector.stop();
        await b.elector.stop();
      }
    });
  });

  describe('EventRecorder', () => {
    it('writes one events.k8s.io/v1 Event and folds repeats into its series', async () => {
      const ns = await createNamespace(client, 'core-rt');
      await createCm(client, ns, 'subject');
      const subject = await client.get<V1ConfigMap>(configMapsPath(ns, 'subject'));
      const rec = new EventRecorder({ client, controller: 'podlife.dev/core-test', instance: 'it-1' });
      for (let i = 0; i < 3; i++) await rec.event({ ...subject, apiVersion: 'v1', kind: 'ConfigMap' }, 'Normal', 'Checked', 'all good');
      await rec.close();
      const events = await client.get<{ items: { regarding?: { name?: string; uid?: string }; series?: { count?: number }; reportingController?: string }[] }>(
        resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace: ns }),
      );
      assert.equal(events.items.length, 1);
      const e = events.items[0]!;
      assert.equal(e.regarding?.uid, subject.metadata?.uid);
      assert.equal(e.reportingController, 'podlife.dev/core-test');
      assert.equal(e.series?.count, 3);
    });
  });
});
