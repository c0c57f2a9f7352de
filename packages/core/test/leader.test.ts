import assert from 'node:assert/strict';
import { describe, it, beforeEach, afterEach } from 'mocha';
import sinon from 'sinon';
import { ApiError } from '../src/client.js';
import { LeaderElector, microTime, type LeaseApi, type LeaseObject } from '../src/leader.js';
import { timeMs } from '../src/time.js';

/** One Lease in memory with the API server's optimistic concurrency. */
class FakeLeaseApi implements LeaseApi {
  lease: LeaseObject | undefined;
  failing = false;
  private rv = 0;

  async get(): Promise<LeaseObject | undefined> {
    if (this.failing) throw new Error('apiserver unreachable');
    return this.lease && structuredClone(this.lease);
  }
  async create(lease: LeaseObject): Promise<LeaseObject> {
    if (this.failing) throw new Error('apiserver unreachable');
    if (this.lease) throw new ApiError(409, 'AlreadyExists', 'exists', undefined);
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
  async update(lease: LeaseObject): Promise<LeaseObject> {
    if (this.failing) throw new Error('apiserver unreachable');
    if (!this.lease || lease.metadata.resourceVersion !== this.lease.metadata.resourceVersion) {
      throw new ApiError(409, 'Conflict', 'the object has been modified', undefined);
    }
    this.lease = { ...structuredClone(lease), metadata: { ...lease.metadata, resourceVersion: String(++this.rv) } };
    return structuredClone(this.lease);
  }
  /** Someone else writes the lease (another process). */
  heldBy(identity: string, renewMs: number): void {
    this.lease = {
      metadata: { name: 'l', namespace: 'ns', resourceVersion: String(++this.rv) },
      spec: { holderIdentity: identity, leaseDurationSeconds: 15, renewTime: microTime(renewMs), acquireTime: microTime(renewMs), leaseTransitions: 3 },
    };
  }
}

interface Candidate {
  elector: LeaderElector;
  started: number;
  stopped: number;
  signal: AbortSignal | undefined;
}

function candidate(api: LeaseApi, identity: string): Candidate {
  const c: Candidate = { elector: undefined as unknown as LeaderElector, started: 0, stopped: 0, signal: undefined };
  c.elector = new LeaderElector({
    namespace: 'ns',
    name: 'l',
    identity,
    leaseApi: api,
    onStartedLeading: (signal) => {
      c.started++;
      c.signal = signal;
    },
    onStoppedLeading: () => {
      c.stopped++;
    },
  });
  return c;
}

describe('LeaderElector (15 s lease, 10 s renew deadline, 2 s retry)', () => {
  let clock: sinon.SinonFakeTimers;
  let api: FakeLeaseApi;
  const started: LeaderElector[] = [];
  const start = (c: Candidate): Candidate => {
    started.push(c.elector);
    c.elector.start();
    return c;
  };

  beforeEach(() => {
    clock = sinon.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    api = new FakeLeaseApi();
  });
  afterEach(async () => {
    api.failing = false;
    const stopping = Promise.all(started.splice(0).map((e) => e.stop()));
    await clock.runAllAsync();
    await stopping;
    clock.restore();
  });

  it('creates a missing lease and leads', async () => {
    const a = start(candidate(api, 'a'));
    await clock.tickAsync(10);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(a.started, 1);
    assert.equal(api.lease?.spec?.holderIdentity, 'a');
    assert.equal(api.lease?.spec?.leaseDurationSeconds, 15);
  });

  it('renews the lease every retry period', async () => {
    start(candidate(api, 'a'));
    await clock.tickAsync(10);
    const first = timeMs(api.lease?.spec?.renewTime);
    await clock.tickAsync(2_000);
    const second = timeMs(api.lease?.spec?.renewTime);
    assert.ok(first !== undefined && second !== undefined && second - first >= 2_000);
  });

  it("respects another holder's lease until it expires, then takes over", async () => {
    api.heldBy('other', Date.now());
    const b = start(candidate(api, 'b'));
    await clock.tickAsync(14_000);
    assert.equal(b.elector.isLeader(), false);
    await clock.tickAsync(4_000);
    assert.equal(b.elector.isLeader(), true);
    assert.equal(api.lease?.spec?.leaseTransitions, 4);
  });

  it('never takes a lease its holder keeps renewing', async () => {
    api.heldBy('other', Date.now());
    const b = start(candidate(api, 'b'));
    for (let i = 0; i < 20; i++) {
      await clock.tickAsync(2_000);
      api.heldBy('other', Date.now());
    }
    assert.equal(b.elector.isLeader(), false);
  });

  it('steps down when it cannot renew within the renew deadline, before the lease could expire', async () => {
    const a = start(candidate(api, 'a'));
    await clock.tickAsync(10);
    const lastRenew = timeMs(api.lease?.spec?.renewTime) ?? 0;
    api.failing = true;
    await clock.tickAsync(9_000);
    assert.equal(a.elector.isLeader(), true, 'still within the deadline');
    await clock.tickAsync(4_000);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.stopped, 1);
    assert.equal(a.signal?.aborted, true);
    assert.ok(Date.now() - lastRenew < 15_000, 'stepped down before the lease expired');
  });

  it('steps down at once when it sees another holder', async () => {
    const a = start(candidate(api, 'a'));
    await clock.tickAsync(10);
    api.heldBy('usurper', Date.now());
    await clock.tickAsync(2_100);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.stopped, 1);
  });

  it('keeps one leader among two candidates and fails over after the leader stops', async () => {
    const a = start(candidate(api, 'a'));
    await clock.tickAsync(10);
    const b = start(candidate(api, 'b'));
    await clock.tickAsync(20_000);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(b.elector.isLeader(), false);
    await a.elector.stop();
    assert.equal(api.lease?.spec?.holderIdentity, '', 'released on stop');
    assert.equal(a.stopped, 1);
    await clock.tickAsync(2_500);
    assert.equal(b.elector.isLeader(), true, 'the successor did not wait for the lease to expire');
  });
});

describe('microTime', () => {
  it('writes six fractional digits', () => {
    assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z');
  });
});
