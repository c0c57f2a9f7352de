import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { ApiError, ContentType, Controller, Informer, Manager, conditionsPatch, type KubeClient } from '@podlife/core';
import { FakeApiServer, applyJsonPatch, applyStrategicMergePatch } from '@podlife/core/testing';
import { until } from './support/until.js';

interface Pod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; resourceVersion?: string; uid?: string; finalizers?: string[] };
  spec?: { containers: { name: string; image?: string }[]; ephemeralContainers?: { name: string }[] };
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

const pods = (ns = 'default') => `/api/v1/namespaces/${ns}/pods`;
const pod = (name: string, labels?: Record<string, string>): Pod => ({ metadata: { name, ...(labels ? { labels } : {}) }, spec: { containers: [{ name: 'app' }] } });

async function rejectsWith(p: Promise<unknown>, code: number, reason: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => err instanceof ApiError && err.status === code && err.reason === reason);
}

describe('@podlife/core/testing: FakeApiServer, a real KubeClient against an in-memory API', () => {
  let fake: FakeApiServer;
  let client: KubeClient;
  before(async () => {
    fake = await FakeApiServer.start({ bookmarkIntervalMs: 50 });
    client = fake.client();
  });
  after(() => fake.stop());

  describe('objects', () => {
    it('create sets uid, resourceVersion, namespace and creationTimestamp; get returns it; a second create is 409 AlreadyExists', async () => {
      const created = await client.create<Pod>(pods('crud'), pod('a'));
      assert.equal(created.metadata.namespace, 'crud');
      assert.match(created.metadata.uid ?? '', /^[0-9a-f-]{36}$/);
      assert.deepEqual(await client.get(`${pods('crud')}/a`), created);
      await rejectsWith(client.create(pods('crud'), pod('a')), 409, 'AlreadyExists');
    });

    it('get of a missing object is 404 NotFound; an unknown path is 404', async () => {
      await rejectsWith(client.get(`${pods('crud')}/missing`), 404, 'NotFound');
      await rejectsWith(client.get('/healthz'), 404, 'NotFound');
    });

    it('generateName picks a name', async () => {
      const created = await client.create<Pod>(pods('crud'), { metadata: { generateName: 'job-' } });
      assert.match(created.metadata.name, /^job-.{5}$/);
    });

    it('replace with a stale resourceVersion is 409 Conflict; with the current one it lands', async () => {
      const p = await client.create<Pod>(pods('crud'), pod('r'));
      const updated = await client.replace<Pod>(`${pods('crud')}/r`, { ...p, metadata: { ...p.metadata, labels: { v: '2' } } });
      assert.deepEqual(updated.metadata.labels, { v: '2' });
      assert.notEqual(updated.metadata.resourceVersion, p.metadata.resourceVersion);
      await rejectsWith(client.replace(`${pods('crud')}/r`, p), 409, 'Conflict');
    });

    it('lists by namespace, across namespaces, by label and field selector, in pages', async () => {
      await client.create(pods('sel'), pod('x', { app: 'web', tier: 'front' }));
      await client.create(pods('sel'), pod('y', { app: 'web' }));
      await client.create(pods('sel2'), pod('z', { app: 'db' }));
      const names = async (path: string, query: Record<string, string | number> = {}) =>
        (await client.get<{ items: Pod[] }>(path, query)).items.map((p) => p.metadata.name).sort().join(',');
      assert.equal(await names(pods('sel')), 'x,y');
      assert.equal(await names('/api/v1/pods', { labelSelector: 'app in (web,db)' }), 'x,y,z');
      assert.equal(await names('/api/v1/pods', { labelSelector: 'app=web,!tier' }), 'y');
      assert.equal(await names('/api/v1/pods', { labelSelector: 'app!=web,app' }), 'z');
      assert.equal(await names('/api/v1/pods', { fieldSelector: 'metadata.namespace=sel2' }), 'z');
      const first = await client.get<{ items: Pod[]; metadata: { continue?: string } }>(pods('sel'), { limit: 1 });
      assert.equal(first.items.length, 1);
      const second = await client.get<{ items: Pod[]; metadata: { continue?: string } }>(pods('sel'), { limit: 1, continue: first.metadata.continue });
      assert.equal(second.items.length, 1);
      assert.equal(second.metadata.continue, undefined);
    });

    it('delete removes; an object with finalizers is only marked until they are removed', async () => {
      await client.create(pods('del'), pod('plain'));
      await client.delete(`${pods('del')}/plain`);
      await rejectsWith(client.get(`${pods('del')}/plain`), 404, 'NotFound');
      await client.create(pods('del'), { ...pod('held'), metadata: { name: 'held', finalizers: ['example.com/cleanup'] } });
      await client.delete(`${pods('del')}/held`);
      assert.ok((await client.get<{ metadata: { deletionTimestamp?: string } }>(`${pods('del')}/held`)).metadata.deletionTimestamp);
      await client.patch(`${pods('del')}/held`, { metadata: { finalizers: null } }, ContentType.MergePatch);
      await rejectsWith(client.get(`${pods('del')}/held`), 404, 'NotFound');
    });
  });

  describe('patches', () => {
    it('strategic merge merges status.conditions by type, leaving the others; the status subresource writes only status', async () => {
      await client.create(pods('patch'), { ...pod('c'), status: { conditions: [{ type: 'Ready', status: 'False' }] } });
      await client.patch(`${pods('patch')}/c/status`, conditionsPatch([{ type: 'example.com/warm', status: 'True', reason: 'Warm' }] as never), ContentType.StrategicMergePatch);
      await client.patch(`${pods('patch')}/c/status`, { spec: { containers: [{ name: 'sneaky' }] }, status: { phase: 'Running' } }, ContentType.StrategicMergePatch);
      const p = await client.get<Pod>(`${pods('patch')}/c`);
      assert.deepEqual(p.status?.conditions?.map((c) => `${c.type}=${c.status}`), ['Ready=False', 'example.com/warm=True']);
      assert.equal(p.status?.phase, 'Running');
      assert.deepEqual(p.spec?.containers.map((c) => c.name), ['app']);
    });

    it('a JSON patch applies all its ops or none: a failed test is 422 and changes nothing', async () => {
      const p = await client.create<Pod>(pods('patch'), pod('j'));
      await rejectsWith(
        client.patch(`${pods('patch')}/j`, [{ op: 'add', path: '/metadata/labels', value: { a: '1' } }, { op: 'test', path: '/metadata/resourceVersion', value: 'stale' }], ContentType.JsonPatch),
        422,
        'Invalid',
      );
      assert.equal((await client.get<Pod>(`${pods('patch')}/j`)).metadata.resourceVersion, p.metadata.resourceVersion);
      await client.patch(`${pods('patch')}/j`, [{ op: 'test', path: '/metadata/resourceVersion', value: p.metadata.resourceVersion }, { op: 'add', path: '/metadata/labels', value: { a: '1' } }], ContentType.JsonPatch);
      assert.deepEqual((await client.get<Pod>(`${pods('patch')}/j`)).metadata.labels, { a: '1' });
    });

    it('a merge patch carrying a stale resourceVersion is 409 Conflict', async () => {
      const p = await client.create<Pod>(pods('patch'), pod('m'));
      await client.patch(`${pods('patch')}/m`, { metadata: { labels: { b: '1' } } }, ContentType.MergePatch);
      await rejectsWith(client.patch(`${pods('patch')}/m`, { metadata: { resourceVersion: p.metadata.resourceVersion, labels: { b: '2' } } }, ContentType.MergePatch), 409, 'Conflict');
    });

    it('the ephemeralcontainers subresource writes only spec.ephemeralContainers', async () => {
      await client.create(pods('patch'), pod('e'));
      await client.patch(`${pods('patch')}/e/ephemeralcontainers`, { spec: { containers: [], ephemeralContainers: [{ name: 'debug' }] } }, ContentType.StrategicMergePatch);
      const p = await client.get<Pod>(`${pods('patch')}/e`);
      assert.deepEqual([p.spec?.containers.map((c) => c.name), p.spec?.ephemeralContainers?.map((c) => c.name)], [['app'], ['debug']]);
    });

    it('an unknown patch type is 415', async () => {
      await client.create(pods('patch'), pod('u'));
      await rejectsWith(client.patch(`${pods('patch')}/u`, 'a: 1', ContentType.ApplyPatch), 415, 'UnsupportedMediaType');
    });

    it('strategic merge removes a list element with $patch: delete; JSON patch escapes ~1', () => {
      const obj = { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', effect: 'NoSchedule' }] }, metadata: { annotations: {} } };
      assert.deepEqual(applyStrategicMergePatch(obj, { spec: { taints: [{ key: 'a', $patch: 'delete' }] } }).spec.taints, [{ key: 'b', effect: 'NoSchedule' }]);
      assert.deepEqual(applyJsonPatch(obj, [{ op: 'add', path: '/metadata/annotations/role.podlife.dev~1app', value: 'keystone' }]).metadata.annotations, { 'role.podlife.dev/app': 'keystone' });
      assert.deepEqual(obj.metadata.annotations, {}, 'the input is not changed');
    });
  });

  describe('watches, through podlife informers', () => {
    it('an Informer syncs (streaming list), then sees adds, updates and deletes; a relabel out of its selector is a delete', async () => {
      await client.create(pods('w'), pod('before', { watched: 'yes' }));
      const informer = new Informer<Pod & { metadata: { name: string } }>({ client, path: pods('w'), labelSelector: 'watched=yes' });
      const seen: string[] = [];
      informer.on('add', (p) => seen.push(`add ${p.metadata.name}`));
      informer.on('update', (p) => seen.push(`update ${p.metadata.name}`));
      informer.on('delete', (p) => seen.push(`delete ${p.metadata.name}`));
      informer.start();
      try {
        await until(() => informer.hasSynced());
        await client.create(pods('w'), pod('later', { watched: 'yes' }));
        await client.create(pods('w'), pod('ignored'));
        await client.patch(`${pods('w')}/later`, { metadata: { labels: { watched: 'yes', v: '2' } } }, ContentType.MergePatch);
        await client.patch(`${pods('w')}/before`, { metadata: { labels: { watched: 'no' } } }, ContentType.MergePatch);
        await client.delete(`${pods('w')}/later`);
        await until(() => seen.length >= 5);
        assert.deepEqual(seen, ['add before', 'add later', 'update later', 'delete before', 'delete later']);
        assert.ok(fake.requests.some((r) => r.query.sendInitialEvents === 'true'), 'a streaming list');
      } finally {
        await informer.stop();
      }
    });

    it('a watch from a compacted resourceVersion gets 410 Gone', async () => {
      const list = await client.get<{ metadata: { resourceVersion: string } }>(pods('gone'));
      await client.create(pods('gone'), pod('a'));
      fake.compact();
      await rejectsWith(client.stream({ path: pods('gone'), query: { watch: true, resourceVersion: list.metadata.resourceVersion } }), 410, 'Expired');
    });

    it('a Manager runs a Controller whose reconciles write through the fake (what a user unit test does)', async () => {
      const manager = new Manager({ client });
      const informer = manager.informer<Pod & { metadata: { name: string } }>({ path: pods('ctl') });
      const controller = new Controller({
        name: 'labeller',
        reconciler: {
          async reconcile(key) {
            const p = informer.store.get(key);
            if (p && p.metadata.labels?.seen !== 'true') await client.patch(`${pods('ctl')}/${p.metadata.name}`, { metadata: { labels: { seen: 'true' } } }, ContentType.MergePatch);
          },
        },
      }).watch(informer);
      manager.add(controller);
      await manager.start();
      try {
        await client.create(pods('ctl'), pod('p1'));
        let labels: Record<string, string> | undefined;
        for (let i = 0; i < 200 && labels?.seen !== 'true'; i++) {
          labels = (await client.get<Pod>(`${pods('ctl')}/p1`)).metadata.labels;
          await new Promise((r) => setTimeout(r, 10));
        }
        assert.deepEqual(labels, { seen: 'true' });
      } finally {
        await manager.stop();
      }
    });
  });
});
