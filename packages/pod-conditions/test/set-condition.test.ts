import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import { PodConditionWriteError, setPodCondition, setPodConditions } from '../src/index.js';
import { FakePodApi } from './fake-api.js';
import { at, ms, pod, startedPod } from './fixtures.js';

const gate = 'example.com/lb-registered';

describe('setPodCondition', () => {
  it('writes a new condition as a strategic merge of that condition alone on pods/status', async () => {
    const api = new FakePodApi(startedPod().build());
    const r = await setPodCondition(api, api.pod!, { type: gate, status: 'True', reason: 'Registered' }, ms(50));
    assert.equal(r.changed, true);
    assert.equal(api.patches.length, 1);
    const body = api.patches[0] as { status: { conditions: V1PodCondition[] }; metadata: { resourceVersion: string } };
    assert.deepEqual(body.status.conditions.map((c) => c.type), [gate]);
    assert.equal(body.metadata.resourceVersion, '1');
    assert.equal(api.pod?.status?.conditions?.at(-1)?.type, gate);
  });

  it('makes no API call when nothing changes', async () => {
    const api = new FakePodApi(startedPod().condition(gate, 'True', 7, 'Registered').build());
    const r = await setPodCondition(api, api.pod!, { type: gate, status: 'True', reason: 'Registered' }, ms(50));
    assert.deepEqual([r.changed, r.writes, api.patches.length, api.gets], [false, 0, 0, 0]);
  });

  it('keeps lastTransitionTime when only the message changes', async () => {
    const api = new FakePodApi(startedPod().condition(gate, 'False', 7, 'Pending', 'a').build());
    const r = await setPodCondition(api, api.pod!, { type: gate, status: 'False', reason: 'Pending', message: 'b' }, ms(50));
    assert.equal(r.changed, true);
    assert.equal(new Date(r.condition.lastTransitionTime!).getTime(), ms(7));
  });

  it('moves lastTransitionTime when the status changes', async () => {
    const api = new FakePodApi(startedPod().condition(gate, 'False', 7).build());
    const r = await setPodCondition(api, api.pod!, { type: gate, status: 'True' }, ms(50));
    assert.equal(new Date(r.condition.lastTransitionTime!).getTime(), ms(50));
  });

  it('re-reads and retries when the pod changed since it was read (409)', async () => {
    const api = new FakePodApi(startedPod().build());
    const stale = structuredClone(api.pod!);
    api.writeCondition({ type: 'Ready', status: 'False', lastTransitionTime: at(40) as unknown as Date });
    const r = await setPodCondition(api, stale, { type: gate, status: 'True' }, ms(50));
    assert.deepEqual([r.changed, r.writes, api.gets], [true, 2, 1]);
    assert.equal(api.pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
  });

  it('decides again after a conflict and skips the write when someone already set it', async () => {
    const api = new FakePodApi(startedPod().build());
    const stale = structuredClone(api.pod!);
    api.writeCondition({ type: gate, status: 'True' });
    const r = await setPodCondition(api, stale, { type: gate, status: 'True' }, ms(50));
    assert.deepEqual([r.changed, r.writes], [false, 1]);
  });

  it('removes a reason the new condition no longer has (a strategic merge keeps what is left out)', async () => {
    const api = new FakePodApi(startedPod().condition(gate, 'False', 7, 'Draining', 'wait').build());
    await setPodCondition(api, api.pod!, { type: gate, status: 'True' }, ms(50));
    const written = api.pod?.status?.conditions?.find((c) => c.type === gate);
    assert.deepEqual([written?.reason, written?.message], [undefined, undefined]);
  });

  it('sends no resourceVersion when unlocked', async () => {
    const api = new FakePodApi(startedPod().build());
    await setPodCondition(api, api.pod!, { type: gate, status: 'True' }, { nowMs: ms(50), unlocked: true });
    assert.equal((api.patches[0] as { metadata?: unknown }).metadata, undefined);
  });

  it('gives up with a clear error when the pod is gone', async () => {
    const api = new FakePodApi(startedPod().build());
    const p = structuredClone(api.pod!);
    api.pod = undefined;
    await assert.rejects(setPodCondition(api, p, { type: gate, status: 'True' }), (e: unknown) => {
      assert.ok(e instanceof PodConditionWriteError);
      assert.match(e.message, /pod default\/web: cannot set condition example\.com\/lb-registered: the pod no longer exists/);
      return true;
    });
  });

  it('gives up after the retry budget when the pod keeps changing', async () => {
    const api = new FakePodApi(startedPod().build());
    let n = 0;
    api.beforePatch = () => api.writeCondition({ type: 'Ready', status: n++ % 2 ? 'True' : 'False' });
    await assert.rejects(setPodCondition(api, api.pod!, { type: gate, status: 'True' }, { retries: 2 }), /still conflicting after 3 writes/);
  });

  describe('properties', () => {
    const statusArb = fc.constantFrom('True', 'False', 'Unknown');
    const condArb = fc.record({ type: fc.constantFrom('PodScheduled', 'Initialized', 'ContainersReady', 'Ready', gate, 'example.com/other', 'x.io/y'), status: statusArb, reason: fc.option(fc.constantFrom('A', 'B'), { nil: undefined }), message: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }) });
    const podArb = fc.uniqueArray(fc.tuple(condArb, fc.integer({ min: 0, max: 100 })), { selector: ([c]) => c.type, maxLength: 7 }).map((list) => {
      const b = pod().container('app');
      for (const [c, t] of list) b.condition(c.type, c.status, t, c.reason, c.message);
      return b.build();
    });
    const strip = (c: { type: string; status: string; reason?: string | undefined; message?: string | undefined }) => {
      const out: V1PodCondition = { type: c.type, status: c.status };
      if (c.reason !== undefined) out.reason = c.reason;
      if (c.message !== undefined) out.message = c.message;
      return out;
    };

    it('is idempotent: a second identical call changes nothing and calls no API', async () => {
      await fc.assert(
        fc.asyncProperty(podArb, condArb, async (p: V1Pod, c) => {
          const api = new FakePodApi(p);
          const first = await setPodCondition(api, api.pod!, strip(c), ms(60));
          const after = structuredClone(api.pod);
          const calls = api.patches.length;
          const second = await setPodCondition(api, first.pod, strip(c), ms(90));
          assert.equal(second.changed, false);
          assert.equal(api.patches.length, calls);
          assert.deepEqual(api.pod, after);
        }),
        { numRuns: 200 },
      );
    });

    it('never reorders or drops other conditions', async () => {
      await fc.assert(
        fc.asyncProperty(podArb, condArb, async (p: V1Pod, c) => {
          const api = new FakePodApi(p);
          const before = (api.pod?.status?.conditions ?? []).filter((x) => x.type !== c.type);
          await setPodCondition(api, api.pod!, strip(c), ms(60));
          const others = (api.pod?.status?.conditions ?? []).filter((x) => x.type !== c.type);
          assert.deepEqual(others, before);
          assert.equal(api.pod?.status?.conditions?.filter((x) => x.type === c.type).length, 1);
        }),
        { numRuns: 200 },
      );
    });
  });
});

describe('setPodConditions', () => {
  const other = 'example.com/warm';

  it('writes every changed condition in one patch, so readers never see half of the set', async () => {
    const api = new FakePodApi(startedPod().build());
    const r = await setPodConditions(api, api.pod!, [{ type: gate, status: 'True', reason: 'Registered' }, { type: other, status: 'False', reason: 'Cold', message: 'cache 10% full' }], ms(50));
    assert.deepEqual([r.changed, r.writes, api.patches.length], [true, 1, 1]);
    const body = api.patches[0] as { status: { conditions: V1PodCondition[] } };
    assert.deepEqual(body.status.conditions.map((c) => [c.type, c.status]), [[gate, 'True'], [other, 'False']]);
    assert.deepEqual(r.conditions.map((c) => c.type), [gate, other]);
    assert.equal(api.pod?.status?.conditions?.find((c) => c.type === other)?.message, 'cache 10% full');
  });

  it('sends only the conditions that changed, and answers every one as decided', async () => {
    const api = new FakePodApi(startedPod().condition(gate, 'True', 7, 'Registered').condition(other, 'False', 7, 'Cold').build());
    const r = await setPodConditions(api, api.pod!, [{ type: gate, status: 'True', reason: 'Registered' }, { type: other, status: 'True', reason: 'Warm' }], ms(50));
    const body = api.patches[0] as { status: { conditions: V1PodCondition[] } };
    assert.deepEqual(body.status.conditions.map((c) => c.type), [other]);
    assert.equal(new Date(r.conditions[0]!.lastTransitionTime!).getTime(), ms(7));
    assert.equal(new Date(r.conditions[1]!.lastTransitionTime!).getTime(), ms(50));
  });

  it('makes no API call when none changes, nor for an empty list', async () => {
    const api = new FakePodApi(startedPod().condition(gate, 'True', 7).condition(other, 'False', 7).build());
    const same = await setPodConditions(api, api.pod!, [{ type: gate, status: 'True' }, { type: other, status: 'False' }], ms(50));
    const none = await setPodConditions(api, api.pod!, [], ms(50));
    assert.deepEqual([same.changed, none.changed, api.patches.length, api.gets], [false, false, 0, 0]);
  });

  it('refuses a type given twice, naming it, before any call', async () => {
    const api = new FakePodApi(startedPod().build());
    await assert.rejects(setPodConditions(api, api.pod!, [{ type: gate, status: 'True' }, { type: gate, status: 'False' }]), (e: unknown) => {
      assert.ok(e instanceof PodConditionWriteError);
      assert.match(e.message, /pod default\/web: cannot set conditions example\.com\/lb-registered, example\.com\/lb-registered: condition type example\.com\/lb-registered is given more than once/);
      assert.deepEqual([e.conditionTypes, e.conditionType], [[gate, gate], `${gate}, ${gate}`]);
      return true;
    });
    assert.deepEqual([api.patches.length, api.gets], [0, 0]);
  });

  it('after a conflict decides both again on the pod as re-read, and writes what still differs', async () => {
    const api = new FakePodApi(startedPod().build());
    const stale = structuredClone(api.pod!);
    api.writeCondition({ type: gate, status: 'True' });
    const r = await setPodConditions(api, stale, [{ type: gate, status: 'True' }, { type: other, status: 'True' }], ms(50));
    assert.deepEqual([r.changed, r.writes, api.gets], [true, 2, 1]);
    const retry = api.patches[1] as { status: { conditions: V1PodCondition[] } };
    assert.deepEqual(retry.status.conditions.map((c) => c.type), [other]);
  });
});
