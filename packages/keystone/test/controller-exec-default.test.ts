import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { V1Pod } from '@kubernetes/client-node';
import { ContentType, KubeClient, Manager } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import { after, before, describe, it } from 'mocha';
import { keystoneController } from '../src/index.js';
import { kubeConfigOf } from '../src/controller.js';
import { pod } from './fixtures.js';

describe('keystoneController built from a client alone (no kubeConfig, no exec transport)', function () {
  this.timeout(15_000);
  let fake: FakeApiServer;
  let front: http.Server;
  let manager: Manager;
  /** The pods/exec requests that reached the API server, as `<pod>/<container>`. */
  const execs: string[] = [];

  before(async () => {
    fake = await FakeApiServer.start();
    // In front of the fake server: it forwards every request and records the pods/exec upgrades,
    // which the fake does not serve, then closes them (the command never runs).
    front = http.createServer((req, res) => {
      const upstream = http.request(new URL(req.url ?? '/', fake.url), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    front.on('upgrade', (req, socket) => {
      const url = new URL(req.url ?? '/', 'http://front');
      const m = /\/pods\/([^/]+)\/exec$/.exec(url.pathname);
      if (m) execs.push(`${m[1]}/${url.searchParams.get('container')}`);
      socket.destroy();
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const client = KubeClient.fromConnection({ server: `http://127.0.0.1:${(front.address() as AddressInfo).port}` });
    const built = pod('job-0').container('app').sidecar('proxy').finished('app', 0, Date.now() - 1000).build();
    const { status, ...spec } = built;
    delete spec.metadata!.uid;
    await client.create('/api/v1/namespaces/default/pods', spec);
    await client.patch('/api/v1/namespaces/default/pods/job-0/status', [{ op: 'add', path: '/status', value: status }], ContentType.JsonPatch);
    manager = new Manager({ client });
    keystoneController(manager);
    await manager.start();
  });

  after(async () => {
    await manager?.stop();
    front?.closeAllConnections();
    await new Promise((resolve) => front?.close(resolve));
    await fake?.stop();
  });

  it("stops a sidecar over pods/exec at the client's own server, never 'no stop strategy available'", async () => {
    for (let waited = 0; execs.length === 0 && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual([...new Set(execs)], ['job-0/proxy']);
    const message = fake.get<V1Pod>('/api/v1/namespaces/default/pods/job-0')?.status?.conditions?.find((c) => c.type === 'podlife.dev/SidecarsStopped')?.message ?? '';
    assert.doesNotMatch(message, /no stop strategy/);
  });

  it('the KubeConfig made from a connection carries its server, token and certificates', () => {
    const kc = kubeConfigOf(KubeClient.fromConnection({ server: 'https://10.0.0.1:6443', token: 't0k', ca: 'CA PEM', insecureSkipTLSVerify: false }));
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:6443');
    assert.equal(Buffer.from(kc.getCurrentCluster()?.caData ?? '', 'base64').toString(), 'CA PEM');
    assert.equal(kc.getCurrentUser()?.token, 't0k');
  });
});

describe('keystoneController with exec: false (a controller without pods/exec rights)', function () {
  this.timeout(15_000);
  let fake: FakeApiServer;
  let manager: Manager;

  before(async () => {
    fake = await FakeApiServer.start();
    const built = pod('job-1').container('app').sidecar('proxy').finished('app', 0, Date.now() - 1000).build();
    const { status, ...spec } = built;
    delete spec.metadata!.uid;
    await fake.client().create('/api/v1/namespaces/default/pods', spec);
    await fake.client().patch('/api/v1/namespaces/default/pods/job-1/status', [{ op: 'add', path: '/status', value: status }], ContentType.JsonPatch);
    manager = new Manager({ client: fake.client() });
    keystoneController(manager, { exec: false });
    await manager.start();
  });

  after(async () => {
    await manager?.stop();
    await fake?.stop();
  });

  it('sends nothing over pods/exec, and says no strategy is left when no ephemeral image is configured either', async () => {
    const stopFailed = async () => (await fake.client().get<{ items: { reason?: string; note?: string }[] }>('/apis/events.k8s.io/v1/namespaces/default/events')).items.filter((e) => e.reason === 'StopFailed').map((e) => e.note ?? '');
    let found = await stopFailed();
    for (let waited = 0; found.length === 0 && waited < 5000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
      found = await stopFailed();
    }
    assert.match(found[0] ?? '', /no stop strategy available/);
  });
});
