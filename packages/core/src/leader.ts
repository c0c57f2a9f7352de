/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's leaderelection semantics.
 *
 * Guarantees:
 * - at most one identity believes it leads, provided clocks advance at similar rates: a
 *   candidate only takes a lease whose record it has seen unchanged for a full lease duration
 *   (measured on its own clock, so no cross-machine clock comparison), and every write is an
 *   update guarded by the resourceVersion it read (a concurrent writer gets 409 and loses);
 * - a leader that cannot renew within `renewDeadlineMs` (< lease duration) steps down before
 *   anyone else may take over: `onStoppedLeading` runs and the signal given to
 *   `onStartedLeading` is aborted;
 * - `stop()` releases a held lease (empty holder), so a successor need not wait for expiry;
 * - after losing the lease the elector becomes a candidate again.
 */
import { isConflict, isNotFound, resourcePath, type KubeClient } from './client.js';
import { silentLogger, type Logger } from './log.js';
import { sleep, timeMs, type Time } from './time.js';

/** A Lease as it travels on the wire (MicroTime fields are RFC 3339 strings with microseconds). */
export interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: Time | null;
    renewTime?: Time | null;
    leaseTransitions?: number;
  };
}

/** Reads and writes one Lease; the real one uses KubeClient, tests keep it in memory. */
export interface LeaseApi {
  /** undefined when the Lease does not exist. */
  get(signal?: AbortSignal): Promise<LeaseObject | undefined>;
  /** Fails with 409 when it already exists. */
  create(lease: LeaseObject, signal?: AbortSignal): Promise<LeaseObject>;
  /** Fails with 409 when `metadata.resourceVersion` is stale. */
  update(lease: LeaseObject, signal?: AbortSignal): Promise<LeaseObject>;
}

/** A LeaseApi over the API server for the Lease `namespace/name`. */
export function kubeLeaseApi(client: KubeClient, namespace: string, name: string): LeaseApi {
  const ref = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace };
  return {
    async get(signal) {
      try {
        return await client.get<LeaseObject>(resourcePath({ ...ref, name }), undefined, signal);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    create: (lease, signal) =>
      client.request<LeaseObject>({ method: 'POST', path: resourcePath(ref), body: lease, signal, timeoutMs: 10_000 }),
    update: (lease, signal) =>
      client.request<LeaseObject>({ method: 'PUT', path: resourcePath({ ...ref, name }), body: lease, signal, timeoutMs: 10_000 }),
  };
}

/** metav1.MicroTime's wire form: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The Lease, this identity, the timings and the callbacks of a LeaderElector. */
export interface LeaderElectorOptions {
  client?: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading(): void;
  /** Replaces the Lease API built on `client` (tests). */
  leaseApi?: LeaseApi;
  logger?: Logger;
  /** Wall clock in ms; default Date.now. */
  now?: () => number;
}

/** Campaigns for a Lease and calls back when this identity starts and stops leading. */
export class LeaderElector {
  private readonly api: LeaseApi;
  private readonly identity: string;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  private readonly opts: LeaderElectorOptions;
  private readonly log: Logger;
  private readonly now: () => number;
  /** The last record seen and when (on our clock) it was first seen. */
  private observed: { key: string; at: number; lease: LeaseObject } | undefined;
  private leading: AbortController | undefined;
  private abort: AbortController | undefined;
  private running: Promise<void> | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.opts = opts;
    this.identity = opts.identity;
    this.leaseMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
    if (!(this.leaseMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryMs * 1.2)) {
      throw new Error(
        `lease ${opts.namespace}/${opts.name}: need leaseDurationMs > renewDeadlineMs > 1.2 x retryPeriodMs (got ${this.leaseMs}/${this.renewDeadlineMs}/${this.retryMs})`,
      );
    }
    if (opts.leaseApi) this.api = opts.leaseApi;
    else if (opts.client) this.api = kubeLeaseApi(opts.client, opts.namespace, opts.name);
    else throw new Error(`lease ${opts.namespace}/${opts.name}: give either a client or a leaseApi`);
    this.log = (opts.logger ?? silentLogger()).child({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity });
    this.now = opts.now ?? Date.now;
  }

  isLeader(): boolean {
    return this.leading !== undefined;
  }

  start(): void {
    if (this.running) return;
    const abort = new AbortController();
    this.abort = abort;
    this.running = this.run(abort.signal);
  }

  /** Stops campaigning; a held lease is released and `onStoppedLeading` runs. */
  async stop(): Promise<void> {
    this.abort?.abort(new Error('leader elector stopped'));
    await this.running;
    this.running = undefined;
    this.abort = undefined;
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      // Candidate: try every retry period (jittered, so candidates do not march in step).
      while (!signal.aborted && !(await this.tryAcquireOrRenew(signal, this.renewDeadlineMs))) {
        await sleep(this.retryMs * (1 + Math.random() * 0.2), signal);
      }
      if (signal.aborted) break;
      this.becomeLeader();
      // Leader: renew every retry period; give up when no renewal succeeds within the deadline.
      let lastRenew = this.now();
      while (!signal.aborted) {
        await sleep(this.retryMs, signal);
        if (signal.aborted) break;
        const left = lastRenew + this.renewDeadlineMs - this.now();
        if (await this.tryAcquireOrRenew(signal, Math.max(1, left))) {
          lastRenew = this.now();
        } else if (this.heldByOther()) {
          this.log.warn({ holder: this.observed?.lease.spec?.holderIdentity }, 'another identity holds the lease; stepping down');
          this.stepDown();
          break;
        } else if (this.now() - lastRenew >= this.renewDeadlineMs) {
          this.log.warn({ sinceRenewMs: this.now() - lastRenew }, 'failed to renew the lease within the renew deadline; stepping down');
          this.stepDown();
          break;
        }
      }
    }
    if (this.leading) {
      await this.release();
      this.stepDown();
    }
  }

  private becomeLeader(): void {
    this.leading = new AbortController();
    this.log.info('became leader');
    try {
      this.opts.onStartedLeading(this.leading.signal);
    } catch (err) {
      this.log.error({ err }, 'onStartedLeading threw');
    }
  }

  private stepDown(): void {
    const leading = this.leading;
    if (!leading) return;
    this.leading = undefined;
    leading.abort(new Error('leadership lost'));
    this.log.info('stopped leading');
    try {
      this.opts.onStoppedLeading();
    } catch (err) {
      this.log.error({ err }, 'onStoppedLeading threw');
    }
  }

  /** One attempt; true when we hold the lease afterwards. Never throws. */
  private async tryAcquireOrRenew(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const request = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    const now = this.now();
    try {
      const current = await this.api.get(request);
      if (!current) {
        const created = await this.api.create(this.record(undefined, now), request);
        this.observe(created, this.now());
        return true;
      }
      this.observe(current, now);
      const spec = current.spec ?? {};
      const holder = spec.holderIdentity ?? '';
      if (holder !== '' && holder !== this.identity && this.observed && this.observed.at + this.heldForMs(current) > now) {
        return false;
      }
      const updated = await this.api.update(this.record(current, now), request);
      this.observe(updated, this.now());
      return true;
    } catch (err) {
      if (signal.aborted) return false;
      if (isConflict(err)) this.log.debug('lost a race for the lease (409)');
      else this.log.warn({ err }, 'lease request failed');
      return false;
    }
  }

  private heldByOther(): boolean {
    const holder = this.observed?.lease.spec?.holderIdentity ?? '';
    return holder !== '' && holder !== this.identity;
  }

  private heldForMs(lease: LeaseObject): number {
    const seconds = lease.spec?.leaseDurationSeconds;
    return seconds && seconds > 0 ? seconds * 1000 : this.leaseMs;
  }

  /** Remembers when (on our clock) the lease record last changed. */
  private observe(lease: LeaseObject, now: number): void {
    const s = lease.spec ?? {};
    const key = `${s.holderIdentity ?? ''}|${timeMs(s.renewTime) ?? ''}|${s.leaseTransitions ?? 0}`;
    if (this.observed?.key !== key) this.observed = { key, at: now, lease };
    else this.observed.lease = lease;
  }

  private record(current: LeaseObject | undefined, now: number): LeaseObject {
    const spec = current?.spec ?? {};
    const ours = spec.holderIdentity === this.identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(current?.metadata ?? {}), name: this.opts.name, namespace: this.opts.namespace },
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
        acquireTime: ours && spec.acquireTime ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: current ? (spec.leaseTransitions ?? 0) + (ours ? 0 : 1) : 0,
      },
    };
  }

  /** Hands the lease back so the next candidate need not wait for it to expire. */
  private async release(): Promise<void> {
    const lease = this.observed?.lease;
    if (!lease || lease.spec?.holderIdentity !== this.identity) return;
    const now = this.now();
    try {
      await this.api.update(
        {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: microTime(now), acquireTime: microTime(now) },
        },
        AbortSignal.timeout(this.renewDeadlineMs),
      );
      this.log.info('released the lease');
    } catch (err) {
      this.log.warn({ err }, 'could not release the lease; it expires on its own');
    }
  }
}

