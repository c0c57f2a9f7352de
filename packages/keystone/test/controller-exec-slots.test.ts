import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { ContentType, Manager } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import { after, before, describe, it } from 'mocha';
import { keystoneController } from '../src/index.js';
import { execSlotsPerNamespace } from '../src/controller.js';
import { pod } from './fixtures.js';

describe('keystoneController: exec slots follow its workers', () => {
  it('a quarter of the workers per namespace, at least 1', () => {
    assert.deepEqual([1, 3, 4, 8, 64, 100].map(execSlotsPerNamespace), [1, 1, 1, 2, 16, 25]);
  });

  describe('with 8 workers, 8 stops of one tenant whose execs hang', function () {
    this.timeout(15_000);
    let fake: FakeApiServer;
    let hanging: net.Server;
    const connections = new Set<net.Socket>();
    let manager: Manager;

    before(async () => {
      fake = await FakeApiServer.start();
      // pods/exec reaches this server and never gets an answer, as with a command that hangs.
      hanging = net.createServer((socket) => void connections.add(socket));
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      const kc = new KubeConfig();
      const server = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
      kc.loadFromOptions({ clusters: [{ name: 'c', server, skipTLSVerify: true }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' });
      for (let i = 0; i < 8; i++) {
        const built = pod(`job-${i}`).container('app').sidecar('proxy').finished('app', 0, Date.now() - 1000).build();
        const { status, ...spec } = built;
        delete spec.metadata!.uid;
        spec.metadata!.namespace = 'tenant-a';
        await fake.client().create(`/api/v1/namespaces/tenant-a/pods`, spec);
        await fake.client().patch(`/api/v1/namespaces/tenant-a/pods/job-${i}/status`, [{ op: 'add', path: '/status', value: status }], ContentType.JsonPatch);
      }
      manager = new Manager({ client: fake.client() });
      keystoneController(manager, { kubeConfig: kc, concurrency: 8 });
      await manager.start();
    });

    after(async () => {
      for (const socket of connections) socket.destroy();
      await manager?.stop();
      await new Promise((resolve) => hanging?.close(resolve));
      await fake?.stop();
    });

    const records = (): string[] =>
      Array.from({ length: 8 }, (_, i) => fake.get<V1Pod>(`/api/v1/namespaces/tenant-a/pods/job-${i}`)?.status?.conditions?.find((c) => c.type === 'podlife.dev/SidecarsStopped')?.message ?? '');

    it('holds 2 of them (a quarter), and puts the other stops off at once, recorded and not failed', async () => {
      const deferred = () => records().filter((m) => /issued: proxy!deferred@\d+$/.test(m)).length;
      for (let waited = 0; deferred() < 6 && waited < 3000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      assert.equal(connections.size, 2, `execs in flight for tenant-a: ${connections.size}`);
      assert.equal(deferred(), 6, records().join('\n'));
    });
  });
});
