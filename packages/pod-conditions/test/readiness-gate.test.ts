import assert from 'node:assert/strict';
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
