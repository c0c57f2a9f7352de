/**
 * Manager: owns what a controller process shares — the API client, informers, metrics,
 * events, health endpoints and leader election — and runs Controllers inside it.
 *
 * Guarantees:
 * - one informer per (path, labelSelector, fieldSelector), however many controllers watch it;
 * - a controller is added once: the same one, or another of the same name, is refused with an
 *   error, never run twice;
 * - informers start at once (a standby replica keeps a warm cache), controllers only after
 *   every informer has synced and, with leader election, only while this replica leads;
 *   losing the lease stops the manager and rejects `done`, so the process exits and restarts
 *   clean rather than running with half-stopped controllers (controller-runtime does the same);
 * - `/healthz` answers 200 while the process serves; `/readyz` answers 200 once all informers
 *   have synced (503 before); `/metrics` serves the registry in Prometheus text format, with
 *   the process's memory and each informer's cache size (`registerRuntimeMetrics`);
 * - `stop()` (and SIGTERM/SIGINT when `handleSignals`) stops controllers and lets in-flight
 *   reconciles finish, then releases the lease, stops informers, flushes events and closes
 *   the servers; it is idempotent, and it resolves within `shutdownTimeoutMs` even when the API
 *   server cannot be reached (a step still waiting then is logged and left behind).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Registry } from 'prom-client';
import type { KubeClient } from './client.js';
import type { Controller } from './controller.js';
import { EventRecorder } from './events.js';
import { Informer, type InformerOptions } from './informer.js';
import { LeaderElector, type LeaderElectorOptions } from './leader.js';
import { silentLogger, type Logger } from './log.js';
import { leaderStatusGauge, registerRuntimeMetrics } from './metrics.js';
import type { KubeObject } from './store.js';

/** Where and how a Manager campaigns for leadership: the elector's own settings, minus what the Manager supplies. */
export type LeaderElectionOptions = Omit<LeaderElectorOptions, 'client' | 'onStartedLeading' | 'onStoppedLeading' | 'logger' | 'now'>;

/** The client, logger, ports, leader election and shutdown deadline of a Manager. */
export interface ManagerOptions {
  client: KubeClient;
  logger?: Logger;
  /** Port for /healthz and /readyz; 0 picks a free one, undefined serves none. */
  healthPort?: number;
  /** Port for /metrics; 0 picks a free one, undefined serves none; may equal healthPort. */
  metricsPort?: number;
  /** Address the servers bind; default 127.0.0.1 (in a pod, pass 0.0.0.0 so probes reach it). */
  bindAddress?: string;
  leaderElection?: LeaderElectionOptions;
  /** reportingController of Events; default `podlife.dev/controller`. */
  name?: string;
  /** Stop on SIGTERM and SIGINT; default false (a library should not own the process's signals). */
  handleSignals?: boolean;
  registry?: Registry;
  /** The longest `stop()` waits for its steps (API calls may hang on an unreachable server); default 3000 ms. */
  shutdownTimeoutMs?: number;
}

/** The paths a Manager serves: health on its health port, metrics on its metrics port. */
export type ManagerRoute = '/healthz' | '/readyz' | '/metrics';

/** Owns the shared client, informers, metrics, events, health and leader election, and runs controllers. */
export class Manager {
  readonly client: KubeClient;
  readonly registry: Registry;
  readonly events: EventRecorder;
  private readonly opts: ManagerOptions;
  private readonly log: Logger;
  private readonly informers = new Map<string, Informer<KubeObject>>();
  private readonly transformIds = new Map<(obj: never) => unknown, number>();
  private readonly controllers: Controller[] = [];
  private readonly servers: http.Server[] = [];
  private readonly urls: Partial<Record<ManagerRoute, string>> = {};
  private elector: LeaderElector | undefined;
  private runningControllers = false;
  private started = false;
  private stopping: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private finish: (err?: Error) => void = () => undefined;
  private signalHandler: (() => void) | undefined;
  /** Settles when the manager has stopped: resolves after stop(), rejects when leadership was lost. */
  readonly done: Promise<void>;

  constructor(opts: ManagerOptions) {
    this.opts = opts;
    this.client = opts.client;
    this.log = opts.logger ?? silentLogger();
    this.registry = opts.registry ?? new Registry();
    registerRuntimeMetrics(this.registry, () => this.informers.values());
    this.events = new EventRecorder({
      client: opts.client,
      controller: opts.name ?? 'podlife.dev/controller',
      instance: opts.leaderElection?.identity ?? os.hostname(),
      logger: this.log,
    });
    this.done = new Promise<void>((resolve, reject) => {
      this.finish = (err) => (err ? reject(err) : resolve());
    });
    this.done.catch(() => undefined);
  }

  /**
   * The shared informer for this path, these selectors and this transform. Callers share a cache
   * only when they ask for the same transform function: a cache slimmed for one controller must
   * never hide fields another one reads. The first caller's watchdog wins.
   */
  informer<T extends KubeObject>(opts: Omit<InformerOptions<T>, 'client'>): Informer<T> {
    const key = `${opts.path}?l=${opts.labelSelector ?? ''}&f=${opts.fieldSelector ?? ''}&t=${this.transformId(opts.transform)}`;
    const existing = this.informers.get(key);
    if (existing) return existing as unknown as Informer<T>;
    const informer = new Informer<T>({ logger: this.log, ...opts, client: this.client });
    this.informers.set(key, informer as unknown as Informer<KubeObject>);
    if (this.started) informer.start();
    return informer;
  }

  private transformId(transform: ((obj: never) => unknown) | undefined): number {
    if (!transform) return 0;
    let id = this.transformIds.get(transform);
    if (id === undefined) {
      id = this.transformIds.size + 1;
      this.transformIds.set(transform, id);
    }
    return id;
  }

  /**
   * Adds a Controller you built yourself. Factories that take the manager (`keystoneController`,
   * `ReadinessGate.register`, ...) add what they build, so their result is never passed here.
   * Throws when this controller, or another of the same name (names key metrics and logs), was
   * already added.
   */
  add(controller: Controller): void {
    if (this.controllers.includes(controller)) {
      throw new Error(
        `controller "${controller.name}" is already added to this manager (factories that take the manager, such as keystoneController or ReadinessGate.register, add what they build: do not pass their result to manager.add)`,
      );
    }
    if (this.controllers.some((c) => c.name === controller.name)) {
      throw new Error(`a controller named "${controller.name}" is already added to this manager: names key metrics and logs, so give the second one another name`);
    }
    controller.adopt(this.registry, this.log);
    this.controllers.push(controller);
    if (this.runningControllers) controller.start();
  }

  /** True once every informer has synced. */
  isReady(): boolean {
    return [...this.informers.values()].every((i) => i.hasSynced());
  }

  /** Base URL of the server answering `route`, once started (e.g. `http://127.0.0.1:41234`). */
  url(route: ManagerRoute): string | undefined {
    return this.urls[route];
  }

  isLeader(): boolean {
    return this.opts.leaderElection ? (this.elector?.isLeader() ?? false) : true;
  }

  /**
   * Serves health and metrics, starts informers, waits for them to sync, then starts the
   * controllers (or the leader election that starts them). Resolves once that is done; `done`
   * settles when the manager stops. Aborting `signal` stops the manager.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new Error('manager already started');
    this.started = true;
    if (signal) {
      if (signal.aborted) return void (await this.stop());
      signal.addEventListener('abort', () => void this.stop(), { once: true });
    }
    if (this.opts.handleSignals) {
      const handler = (): void => {
        this.log.info('signal received; shutting down');
        void this.stop();
      };
      this.signalHandler = handler;
      process.once('SIGTERM', handler);
      process.once('SIGINT', handler);
    }
    await this.serve();
    for (const informer of this.informers.values()) informer.start();
    try {
      await Promise.all([...this.informers.values()].map((i) => i.waitForSync(this.abort.signal)));
    } catch {
      return; // stopped before the caches synced
    }
    this.log.info({ informers: this.informers.size }, 'caches synced');
    const le = this.opts.leaderElection;
    if (!le) return this.startControllers();
    const status = leaderStatusGauge(this.registry);
    status.set({ name: le.name }, 0);
    this.elector = new LeaderElector({
      client: this.client,
      leaseApi: le.leaseApi,
      namespace: le.namespace,
      name: le.name,
      identity: le.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      logger: this.log,
      onStartedLeading: () => {
        status.set({ name: le.name }, 1);
        this.startControllers();
      },
      onStoppedLeading: () => {
        status.set({ name: le.name }, 0);
        if (this.stopping) return;
        this.log.error('leader election lost; stopping');
        void this.stop(new Error(`leader election lost: lease ${le.namespace}/${le.name}`));
      },
    });
    this.elector.start();
  }

  stop(reason?: Error): Promise<void> {
    this.stopping ??= this.shutdown(reason);
    return this.stopping;
  }

  private startControllers(): void {
    if (this.runningControllers || this.abort.signal.aborted) return;
    this.runningControllers = true;
    for (const c of this.controllers) c.start();
    this.log.info({ controllers: this.controllers.map((c) => c.name) }, 'controllers started');
  }

  private async shutdown(reason: Error | undefined): Promise<void> {
    this.abort.abort(reason ?? new Error('manager stopping'));
    if (this.signalHandler) {
      process.off('SIGTERM', this.signalHandler);
      process.off('SIGINT', this.signalHandler);
    }
    const deadline = Date.now() + (this.opts.shutdownTimeoutMs ?? 3000);
    const step = async (what: string, fn: () => Promise<void>): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()));
        timer.unref();
      });
      try {
        if ((await Promise.race([fn(), late])) === 'late') this.log.warn(`shutdown: ${what} did not finish in time; going on without it`);
      } catch (err) {
        this.log.error({ err }, `shutdown: ${what} failed`);
      } finally {
        clearTimeout(timer);
      }
    };
    await step('controllers', async () => void (await Promise.all(this.controllers.map((c) => c.stop()))));
    this.runningControllers = false;
    await step('leader election', async () => this.elector?.stop());
    await step('informers', async () => void (await Promise.all([...this.informers.values()].map((i) => i.stop()))));
    await step('events', () => this.events.close());
    await step('servers', async () => void (await Promise.all(this.servers.map(closeServer))));
    this.log.info('stopped');
    this.finish(reason);
  }

  private async serve(): Promise<void> {
    const { healthPort, metricsPort } = this.opts;
    const host = this.opts.bindAddress ?? '127.0.0.1';
    const plan = new Map<number, ManagerRoute[]>();
    if (healthPort !== undefined) plan.set(healthPort, ['/healthz', '/readyz']);
    if (metricsPort !== undefined) {
      const shared = metricsPort !== 0 && metricsPort === healthPort;
      if (shared) plan.get(metricsPort)?.push('/metrics');
      else if (metricsPort === 0 && healthPort === 0) plan.set(-1, ['/metrics']);
      else plan.set(metricsPort, ['/metrics']);
    }
    for (const [port, routes] of plan) {
      const server = http.createServer((req, res) => void this.handle(routes, req, res));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port < 0 ? 0 : port, host, () => resolve());
      });
      this.servers.push(server);
      const addr = server.address() as AddressInfo;
      const base = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
      for (const r of routes) this.urls[r] = base;
      this.log.info({ address: base, routes }, 'serving');
    }
  }

  private async handle(routes: ManagerRoute[], req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] as ManagerRoute;
    if (!routes.includes(path) || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    try {
      if (path === '/healthz') {
        res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
      } else if (path === '/readyz') {
        const pending = [...this.informers.values()].filter((i) => !i.hasSynced()).map((i) => i.name);
        if (this.started && pending.length === 0) res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
        else res.writeHead(503, { 'Content-Type': 'text/plain' }).end(`not synced: ${pending.join(', ') || 'not started'}\n`);
      } else {
        const body = await this.registry.metrics();
        res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(body);
      }
    } catch (err) {
      this.log.error({ err, path }, 'health/metrics handler failed');
      if (!res.headersSent) res.writeHead(500).end();
    }
  }
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
