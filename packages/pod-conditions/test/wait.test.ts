import assert from 'node:assert/strict';
import { PodWaitError, waitForPodCondition } from '../src/index.js';
import { pod } from './fixtures.js';
import { ScriptedTransport, tick } from './scripted-transport.js';

const fast = { backoff: { minMs: 1, maxMs: 5 } };
const pending = () => pod().container('app').scheduled(1);

describe('waitForPodCondition', () => {
  it('resolves at once when the pod already has the condition', async () => {
    const t = new ScriptedTransport([pending().condition('Ready', 'True', 5).build()]);
    const p = await waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t });
    assert.equal(p.metadata?.name, 'web');
  });

  it('resolves when an update brings the status', async () => {
    const t = new ScriptedTransport([pending().build()]);
    const wait = waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t });
    await tick(5);
    t.send('MODIFIED', pending().condition('Ready', 'True', 5).build());
    assert.equal((await wait).status?.conditions?.at(-1)?.type, 'Ready');
  });

  it('waits for a False status when asked', async () => {
    const t = new ScriptedTransport([pending().condition('Ready', 'False', 5).build()]);
    await waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t, status: 'False' });
  });

  it('accepts PodHasNetwork for PodReadyToStartContainers', async () => {
    const t = new ScriptedTransport([pending().condition('PodHasNetwork', 'True', 2).build()]);
    await waitForPodCondition(undefined, 'default', 'web', 'PodReadyToStartContainers', { transport: t });
  });

  it('survives the watch being closed and broken, resuming the watch', async () => {
    const t = new ScriptedTransport([pending().build()]);
    const wait = waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t, ...fast });
    await tick(5);
    t.send('MODIFIED', pending().condition('Ready', 'False', 3).build());
    t.end();
    await tick(5);
    t.fail(new Error('connection reset'));
    await tick(20);
    t.send('MODIFIED', pending().condition('Ready', 'True', 5).build());
    await wait;
    assert.ok(t.watches >= 3, `watches: ${t.watches}`);
  });

  it('rejects with NotFound when the pod does not exist', async () => {
    const t = new ScriptedTransport([]);
    await assert.rejects(waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t }), (e: unknown) => {
      assert.ok(e instanceof PodWaitError);
      assert.equal(e.reason, 'NotFound');
      assert.match(e.message, /pod default\/web does not exist/);
      return true;
    });
  });

  it('rejects with Deleted when the pod is deleted while waiting', async () => {
    const t = new ScriptedTransport([pending().condition('Ready', 'False', 3).build()]);
    const wait = waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t });
    await tick(5);
    t.send('DELETED', pending().build());
    await assert.rejects(wait, (e: unknown) => e instanceof PodWaitError && e.reason === 'Deleted' && /deleted while waiting \(last Ready=False\)/.test(e.message));
  });

  it('rejects with Deleted when a pod being deleted reaches its terminal phase before it is removed', async () => {
    const t = new ScriptedTransport([pending().condition('Ready', 'False', 3).build()]);
    const wait = waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t });
    await tick(5);
    const ending = pending().condition('Ready', 'False', 3).phase('Failed').build();
    ending.metadata!.deletionTimestamp = new Date();
    t.send('MODIFIED', ending);
    await assert.rejects(wait, (e: unknown) => e instanceof PodWaitError && e.reason === 'Deleted' && /ended Failed/.test(e.message));
  });

  it('rejects with Replaced when a new pod of the same name appears', async () => {
    const t = new ScriptedTransport([pending().build()]);
    const wait = waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t });
    await tick(5);
    const other = pending().condition('Ready', 'True', 9).build();
    other.metadata!.uid = 'uid-new';
    t.send('MODIFIED', other);
    await assert.rejects(wait, (e: unknown) => e instanceof PodWaitError && e.reason === 'Replaced');
  });

  it('rejects with Finished when the pod ends first', async () => {
    const t = new ScriptedTransport([pending().phase('Failed').build()]);
    await assert.rejects(waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t }), (e: unknown) => e instanceof PodWaitError && e.reason === 'Finished');
  });

  it('times out naming the condition and its last status', async () => {
    const t = new ScriptedTransport([pending().condition('Ready', 'False', 3, 'ContainersNotReady').build()]);
    await assert.rejects(
      waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t, timeoutMs: 30 }),
      /timed out after 30ms waiting for pod default\/web condition Ready=True \(last Ready=False ContainersNotReady\)/,
    );
  });

  it('stops when aborted', async () => {
    const t = new ScriptedTransport([pending().build()]);
    const ac = new AbortController();
    const wait = waitForPodCondition(undefined, 'default', 'web', 'Ready', { transport: t, signal: ac.signal });
    await tick(5);
    ac.abort();
    await assert.rejects(wait, (e: unknown) => e instanceof PodWaitError && e.reason === 'Aborted');
  });
});
