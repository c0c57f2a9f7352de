/**
 * What keystone's pod writes rely on to never touch a pod recreated under the same name, checked
 * against a real API server with the bodies keystone sends (the unit suite checks it sends them):
 * the stop container patch and the conditions patch carry `metadata.uid`, which the server
 * refuses to change; the phase patch tests `/metadata/uid`; the delete has a uid precondition.
 *
 * @releases newest — uid immutability, JSON patch `test` and delete preconditions are GA API
 *   machinery, alike on every supported release.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import type { V1Pod } from '@kubernetes/client-node';
import { ApiError, ContentType, resourcePath, type KubeClient } from '@podlife/core';
import { createNamespace, sharedControlPlane } from '@podlife/testbed';

const podsPath = (ns: string, name?: string, subresource?: string): string => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name, subresource });

describe('writes that carry the uid are refused on a pod recreated under the same name (real API server)', function () {
  this.timeout(60_000);
  let client: KubeClient;
  let ns: string;
  let oldUid: string;
  let current: V1Pod;

  before(async function () {
    this.timeout(300_000);
    client = (await sharedControlPlane()).client;
    ns = await createNamespace(client, 'uid-pre');
    // Bound to a node that does not exist: never run, only stored.
    const spec = { nodeName: 'nowhere', containers: [{ name: 'app', image: 'example.invalid/app:1' }, { name: 'proxy', image: 'example.invalid/proxy:1' }] };
    const first = await client.create<V1Pod>(podsPath(ns), { metadata: { name: 'job-0' }, spec });
    oldUid = first.metadata!.uid!;
    await client.delete(podsPath(ns, 'job-0'), { gracePeriodSeconds: 0 });
    current = await client.create<V1Pod>(podsPath(ns), { metadata: { name: 'job-0' }, spec });
    await client.patch(podsPath(ns, 'job-0', 'status'), [{ op: 'add', path: '/status/phase', value: 'Running' }], ContentType.JsonPatch);
  });

  after(async () => {
    await client?.delete(resourcePath({ version: 'v1', resource: 'namespaces', name: ns })).catch(() => undefined);
  });

  const status = async (p: Promise<unknown>): Promise<number> => p.then(() => 200, (err: unknown) => (err instanceof ApiError ? err.status : 0));

  it('the stop container patch with the old uid is refused, and the new pod gets no container', async () => {
    const body = { metadata: { uid: oldUid }, spec: { ephemeralContainers: [{ name: 'podlife-stop-proxy', image: 'example.invalid/busybox:1', targetContainerName: 'proxy' }] } };
    assert.equal(await status(client.patch(podsPath(ns, 'job-0', 'ephemeralcontainers'), body, ContentType.StrategicMergePatch)), 422);
    assert.deepEqual((await client.get<V1Pod>(podsPath(ns, 'job-0'))).spec?.ephemeralContainers ?? [], []);
    // The same body with the current uid is taken: the uid is what refused it.
    const same = { ...body, metadata: { uid: current.metadata!.uid } };
    assert.equal(await status(client.patch(podsPath(ns, 'job-0', 'ephemeralcontainers'), same, ContentType.StrategicMergePatch)), 200);
  });

  it("the conditions patch with the old uid is refused, and the new pod does not get the old one's record", async () => {
    const condition = { type: 'podlife.dev/SidecarsStopped', status: 'False', reason: 'Stopping', message: 'stopping proxy; issued: proxy@1', lastTransitionTime: new Date().toISOString() };
    const body = { metadata: { uid: oldUid }, status: { conditions: [condition] } };
    assert.equal(await status(client.patch(podsPath(ns, 'job-0', 'status'), body, ContentType.StrategicMergePatch)), 422);
    const conditions = (await client.get<V1Pod>(podsPath(ns, 'job-0'))).status?.conditions ?? [];
    assert.deepEqual(conditions.filter((c) => c.type === condition.type), []);
    const same = { ...body, metadata: { uid: current.metadata!.uid } };
    assert.equal(await status(client.patch(podsPath(ns, 'job-0', 'status'), same, ContentType.StrategicMergePatch)), 200);
  });

  it('the phase patch testing the old uid is refused (422, read as stale), and the new pod keeps its phase', async () => {
    const ops = [
      { op: 'test', path: '/metadata/uid', value: oldUid },
      { op: 'test', path: '/status/phase', value: 'Running' },
      { op: 'replace', path: '/status/phase', value: 'Succeeded' },
    ];
    assert.equal(await status(client.patch(podsPath(ns, 'job-0', 'status'), ops, ContentType.JsonPatch)), 422);
    assert.equal((await client.get<V1Pod>(podsPath(ns, 'job-0'))).status?.phase, 'Running');
  });

  it('the delete with the old uid as precondition is refused, and the new pod stays', async () => {
    assert.equal(await status(client.delete(podsPath(ns, 'job-0'), { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: oldUid } })), 409);
    assert.equal((await client.get<V1Pod>(podsPath(ns, 'job-0'))).metadata?.uid, current.metadata!.uid);
  });
});
