import assert from 'node:assert/strict';
import { KubeConfig, type V1EphemeralContainer, type V1Pod } from '@kubernetes/client-node';
import type { KubeClient } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import { after, before, describe, it } from 'mocha';
import { createExecApi, stopByExec } from '../src/index.js';
import { createPodApi } from '../src/strategies/api.js';
import { stopByEphemeral } from '../src/strategies/ephemeral.js';
import { markPhase } from '../src/strategies/phase.js';
import { pod } from './fixtures.js';

const NS = 'default';

/** The pod a stale cache still holds: the name of the one in the server, another uid. */
function staleCopyOf(current: V1Pod): V1Pod {
  return { ...current, metadata: { ...current.metadata, uid: 'uid-of-the-deleted-pod' } };
}

describe('a pod recreated under the same name is not acted on', () => {
  let fake: FakeApiServer;
  let current: V1Pod;

  before(async () => {
    fake = await FakeApiServer.start();
    const built = pod('job-0').container('app').sidecar('proxy').build();
    delete built.metadata!.uid;
    current = await fake.client().create<V1Pod>(`/api/v1/namespaces/${NS}/pods`, built);
    // The API server keeps a pod's status apart from its spec; the fake stores what it was given.
    await fake.client().patch(`/api/v1/namespaces/${NS}/pods/job-0/status`, [{ op: 'add', path: '/status', value: { phase: 'Running' } }], 'application/json-patch+json');
    current = fake.get<V1Pod>(`/api/v1/namespaces/${NS}/pods/job-0`)!;
  });
  after(() => fake.stop());

  function kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({ clusters: [{ name: 'fake', server: fake.url }], users: [{ name: 'u' }], contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }], currentContext: 'fake' });
    return kc;
  }

  it('pods/exec: the pod is read first, and nothing runs in a pod of another uid (the transport is never called)', async () => {
    const api = createExecApi(kubeConfig(), { client: fake.client() });
    const stale = staleCopyOf(current);
    const r = await stopByExec(api, { namespace: NS, name: 'job-0', uid: stale.metadata!.uid }, 'proxy', { kind: 'http', port: 15020, path: '/quitquitquit' });
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /not run: pod default\/job-0 was recreated \(uid [0-9a-f-]+, not uid-of-the-deleted-pod\)/);
  });

  it('pods/exec: the pod of the same uid gets its command (the check lets it through)', async () => {
    const api = createExecApi(kubeConfig(), { client: fake.client() });
    const r = await api.exec({ namespace: NS, name: 'job-0', uid: current.metadata!.uid }, 'proxy', ['true']);
    // Past the check, the websocket transport itself refuses the fake server's plain http.
    assert.ok(r.error !== undefined && !/not run/.test(r.error), r.error);
  });

  it('pods/exec: a pod that is gone is not looked for by name', async () => {
    const r = await createExecApi(kubeConfig(), { client: fake.client() }).exec({ namespace: NS, name: 'gone', uid: 'u' }, 'proxy', ['true']);
    assert.match(r.error ?? '', /not run: pod default\/gone no longer exists/);
  });

  it('the phase patch tests the uid: the new pod keeps its phase, and the outcome is stale (evaluate again)', async () => {
    const r = await markPhase(createPodApi(fake.client()), staleCopyOf(current), 'Succeeded');
    assert.equal(r.outcome, 'stale');
    assert.equal(fake.get<V1Pod>(`/api/v1/namespaces/${NS}/pods/job-0`)?.status?.phase, 'Running');
  });

  it('the phase patch of a pod without a phase yet tests the uid too', async () => {
    const noPhase = staleCopyOf(current);
    noPhase.status = {};
    assert.equal((await markPhase(createPodApi(fake.client()), noPhase, 'Failed')).outcome, 'stale');
    assert.equal(fake.get<V1Pod>(`/api/v1/namespaces/${NS}/pods/job-0`)?.status?.phase, 'Running');
  });

  it('the stop container patch carries the uid, which the API server refuses to change', async () => {
    const bodies: unknown[] = [];
    const client = { patch: async (_path: string, body: unknown) => void bodies.push(body) } as unknown as KubeClient;
    const stale = staleCopyOf(current);
    const r = await stopByEphemeral(createPodApi(client), stale, 'proxy', { kind: 'http', port: 15020, path: '/quitquitquit' }, false, 'busybox:1.36');
    assert.equal(r.ok, true);
    const body = bodies[0] as { metadata?: { uid?: string }; spec: { ephemeralContainers: V1EphemeralContainer[] } };
    assert.equal(body.metadata?.uid, 'uid-of-the-deleted-pod');
    assert.deepEqual(body.spec.ephemeralContainers.map((c) => c.name), ['podlife-stop-proxy']);
  });
});
