import assert from 'node:assert/strict';
import { KubeClient, Manager } from '@podlife/core';
import { FakeApiServer } from '@podlife/core/testing';
import { ReadinessGate } from '../src/index.js';
import { FakePodApi } from './fake-api.js';
import { ms, startedPod } from './fixtures.js';

const type = 'example.com/warm';
const gated = () => startedPod().gate(type).condition('Ready', 'False', 6, 'ReadinessGatesNotReady');

describe('ReadinessGate', () => {
  it('applies only to pods listing its type in spec.readinessGates', () => {
    const gate = new ReadinessGate({ conditionType: type, evaluate: () => true });
    assert.equal(gate.gates(gated().build()), true);
    assert.equal(gate.gates(startedPod().gate('example.com/other').build()), false);
  });

  it('writes the evaluated condition on a gated pod', async () => {
    const api = new FakePodApi(gated().build());
    const gate = new ReadinessGate({ conditionType: type, evaluate: () => ({ status: true, reason: 'Warm', message: 'cache loaded' }), now: () => ms(30) });
    await gate.sync(api, api.pod!);
    const c = api.pod?.status?.conditions?.find((x) => x.type === type);
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'Warm', 'cache loaded']);
  });

  it('accepts a boolean or a status string from evaluate', async () => {
    for (const [verdict, want] of [[false, 'False'], ['Unknown', 'Unknown']] as const) {
      const api = new FakePodApi(gated().build());
      await new ReadinessGate({ conditionType: type, evaluate: () => verdict }).sync(api, api.pod!);
      assert.equal(api.pod?.status?.conditions?.find((x) => x.type === type)?.status, want);
    }
  });

  it('never touches a pod without the gate', async () => {
    const api = new FakePodApi(startedPod().build());
    let called = false;
    const r = await new ReadinessGate({ conditionType: type, evaluate: () => (called = true) }).sync(api, api.pod!);
    assert.deepEqual([r, called, api.patches.length], [undefined, false, 0]);
  });

  it('leaves pods that are being deleted alone', async () => {
    const api = new FakePodApi(gated().deleting(9).build());
    await new ReadinessGate({ conditionType: type, evaluate: () => true }).sync(api, api.pod!);
    assert.equal(api.patches.length, 0);
  });

  it('makes no write when the verdict is unchanged', async () => {
    const api = new FakePodApi(gated().condition(type, 'True', 7).build());
    await new ReadinessGate({ conditionType: type, evaluate: () => true }).sync(api, api.pod!);
    assert.equal(api.patches.length, 0);
  });

  it('asks to be evaluated again after resyncMs or what evaluate says', async () => {
    const api = new FakePodApi(gated().build());
    assert.equal((await new ReadinessGate({ conditionType: type, evaluate: () => true, resyncMs: 5000 }).sync(api, api.pod!))?.requeueAfterMs, 5000);
    const r = await new ReadinessGate({ conditionType: type, evaluate: () => ({ status: false, requeueAfterMs: 100 }), resyncMs: 5000 }).sync(api, api.pod!);
    assert.equal(r?.requeueAfterMs, 100);
  });
});

describe('ReadinessGate: the condition type is checked at construction', () => {
  for (const [bad, why] of [
    ['Ready', /built-in pod condition/],
    ['ContainersReady', /built-in pod condition/],
    ['PodHasNetwork', /built-in pod condition/],
    ['warmed-up', /no domain prefix: name it in a domain you own, such as "example.com\/warmed-up"/],
    ['example.com/', /not a qualified name: name part must be non-empty/],
    ['Example.com/warm', /not a qualified name: prefix part/],
    ['example.com/warm up', /not a qualified name/],
    ['a/b/c', /not a qualified name/],
    ['podlife.dev/KeystoneFinished', /podlife\.dev domain/],
    ['network.podlife.dev/IPv4Ready', /podlife\.dev domain/],
    ['', /non-empty string/],
  ] as const) {
    it(`rejects ${JSON.stringify(bad)}`, () => {
      assert.throws(
        () => new ReadinessGate({ conditionType: bad, evaluate: () => true }),
        (e: Error) => e instanceof TypeError && e.message.startsWith(`ReadinessGate: conditionType ${JSON.stringify(bad)} `) && why.test(e.message),
      );
    });
  }
  it('accepts a qualified name in a domain of your own', () => {
    assert.equal(new ReadinessGate({ conditionType: 'lb.example.com/registered', evaluate: () => true }).conditionType, 'lb.example.com/registered');
  });
  it('rejects a gate without an evaluate function', () => {
    assert.throws(() => new ReadinessGate({ conditionType: type } as never), /evaluate must be a function/);
  });
});

describe('ReadinessGate.register adds the gate once', () => {
  it('manager.add(gate.register(manager)) is refused, naming the duplicate', async () => {
    const manager = new Manager({ client: KubeClient.fromConnection({ server: 'http://127.0.0.1:9' }) });
    const gate = new ReadinessGate({ conditionType: type, evaluate: () => true });
    const controller = gate.register(manager);
    assert.throws(() => manager.add(controller), /controller "readiness-gate\/example\.com\/warm" is already added to this manager/);
  });
  it('registering the same gate twice is refused', () => {
    const manager = new Manager({ client: KubeClient.fromConnection({ server: 'http://127.0.0.1:9' }) });
    const gate = new ReadinessGate({ conditionType: type, evaluate: () => true });
    gate.register(manager);
    assert.throws(() => gate.register(manager), /a controller named "readiness-gate\/example\.com\/warm" is already added/);
  });
  it('a second gate writing the same condition type under another name is refused, naming both', () => {
    const manager = new Manager({ client: KubeClient.fromConnection({ server: 'http://127.0.0.1:9' }) });
    new ReadinessGate({ conditionType: type, name: 'warm-cache', evaluate: () => true }).register(manager);
    const second = new ReadinessGate({ conditionType: type, name: 'warm-db', evaluate: () => false });
    assert.throws(() => second.register(manager), /^Error: ReadinessGate warm-db: condition type example\.com\/warm is already kept by ReadinessGate warm-cache on this manager/);
    // On another manager, or for another type, it is a gate like any other.
    second.register(new Manager({ client: KubeClient.fromConnection({ server: 'http://127.0.0.1:9' }) }));
    new ReadinessGate({ conditionType: 'example.com/other', name: 'warm-db', evaluate: () => true }).register(manager);
  });
});

describe('ReadinessGate against @podlife/core/testing (a unit test as a user writes one)', () => {
  it('the registered gate writes its condition on a gated pod, leaving the kubelet\'s', async () => {
    const fake = await FakeApiServer.start();
    const manager = new Manager({ client: fake.client() });
    try {
      new ReadinessGate({ conditionType: type, evaluate: (p) => ({ status: p.metadata?.labels?.warm === 'true', reason: 'Checked' }) }).register(manager);
      await manager.start();
      const client = fake.client();
      await client.create('/api/v1/namespaces/ns/pods', {
        metadata: { name: 'web', labels: { warm: 'true' } },
        spec: { readinessGates: [{ conditionType: type }], containers: [{ name: 'app' }] },
        status: { conditions: [{ type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady' }] },
      });
      let conditions: { type: string; status: string }[] = [];
      for (let i = 0; i < 300 && !conditions.some((c) => c.type === type); i++) {
        conditions = fake.get<{ status?: { conditions?: { type: string; status: string }[] } }>('/api/v1/namespaces/ns/pods/web')?.status?.conditions ?? [];
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(conditions.map((c) => `${c.type}=${c.status}`), ['Ready=False', `${type}=True`]);
    } finally {
      await manager.stop();
      await fake.stop();
    }
  });
});
