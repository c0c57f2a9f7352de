/**
 * Prometheus metrics under controller-runtime's names, so dashboards and alerts written for
 * Go controllers work unchanged:
 *   controller_runtime_reconcile_total{controller,result}   result: success | error | requeue_after
 *   controller_runtime_reconcile_errors_total{controller}
 *   controller_runtime_reconcile_time_seconds{controller}
 *   controller_runtime_active_workers{controller}, controller_runtime_max_concurrent_reconciles{controller}
 *   workqueue_depth / workqueue_adds_total / workqueue_queue_duration_seconds /
 *   workqueue_work_duration_seconds / workqueue_retries_total   {name}
 *   leader_election_master_status{name}   (client-go's name)
 * and what the process holds, read at each scrape (no timer):
 *   process_resident_memory_bytes, nodejs_heap_size_used_bytes, nodejs_heap_size_total_bytes,
 *   nodejs_external_memory_bytes   (prom-client's default-metric names)
 *   podlife_informer_cached_objects{informer}   objects in each informer's store
 *
 * Guarantees: metrics are created once per registry and shared by every controller using it
 * (registering a name twice would throw in prom-client); each controller only touches its own
 * label values.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { QueueMetrics } from './queue.js';

const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2,
  2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** 10 ns .. 10 s in decades, like client-go's workqueue histograms. */
const queueBuckets = Array.from({ length: 10 }, (_, i) => 1e-8 * 10 ** i);

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

function gauge<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: number[],
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

/** The `result` label of controller_runtime_reconcile_total. */
export type ReconcileResultLabel = 'success' | 'error' | 'requeue_after';

/** One controller's view of the reconcile metrics. */
export class ControllerMetrics {
  private readonly labels: { controller: string };
  private readonly total: Counter<'controller' | 'result'>;
  private readonly errors: Counter<'controller'>;
  private readonly time: Histogram<'controller'>;
  private readonly active: Gauge<'controller'>;
  private readonly max: Gauge<'controller'>;

  constructor(registry: Registry, controller: string) {
    this.labels = { controller };
    this.total = counter(registry, 'controller_runtime_reconcile_total', 'Total number of reconciliations per controller', ['controller', 'result']);
    this.errors = counter(registry, 'controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', ['controller']);
    this.time = histogram(registry, 'controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', ['controller'], reconcileBuckets);
    this.active = gauge(registry, 'controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller']);
    this.max = gauge(registry, 'controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', ['controller']);
    // Zero-initialise so the series exist before the first reconcile, as controller-runtime does.
    for (const result of ['success', 'error', 'requeue_after'] as const) this.total.inc({ controller, result }, 0);
    this.errors.inc(this.labels, 0);
    this.active.set(this.labels, 0);
  }

  maxConcurrent(n: number): void {
    this.max.set(this.labels, n);
  }
  workerStarted(): void {
    this.active.inc(this.labels);
  }
  workerFinished(): void {
    this.active.dec(this.labels);
  }
  reconciled(result: ReconcileResultLabel, seconds: number): void {
    this.total.inc({ ...this.labels, result });
    if (result === 'error') this.errors.inc(this.labels);
    this.time.observe(this.labels, seconds);
  }
}

/** A `QueueMetrics` (queue.ts) that records into `registry` under client-go's workqueue names. */
export class WorkQueueMetrics implements QueueMetrics {
  private readonly labels: { name: string };
  private readonly depthGauge: Gauge<'name'>;
  private readonly addsCounter: Counter<'name'>;
  private readonly latency: Histogram<'name'>;
  private readonly work: Histogram<'name'>;
  private readonly retriesCounter: Counter<'name'>;

  constructor(registry: Registry, name: string) {
    this.labels = { name };
    this.depthGauge = gauge(registry, 'workqueue_depth', 'Current depth of workqueue', ['name']);
    this.addsCounter = counter(registry, 'workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']);
    this.latency = histogram(registry, 'workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', ['name'], queueBuckets);
    this.work = histogram(registry, 'workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes', ['name'], queueBuckets);
    this.retriesCounter = counter(registry, 'workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']);
    this.depthGauge.set(this.labels, 0);
    this.addsCounter.inc(this.labels, 0);
    this.retriesCounter.inc(this.labels, 0);
  }

  adds(): void {
    this.addsCounter.inc(this.labels);
  }
  depth(n: number): void {
    this.depthGauge.set(this.labels, n);
  }
  queueLatency(seconds: number): void {
    this.latency.observe(this.labels, seconds);
  }
  workDuration(seconds: number): void {
    this.work.observe(this.labels, seconds);
  }
  retries(): void {
    this.retriesCounter.inc(this.labels);
  }
}

/** leader_election_master_status{name}: 1 while this process holds the lease. */
export function leaderStatusGauge(registry: Registry): Gauge<'name'> {
  return gauge(registry, 'leader_election_master_status', 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master', ['name']);
}

/** Memory and cache sizes, computed when scraped; `informers` is read at each scrape. */
export function registerRuntimeMetrics(registry: Registry, informers: () => Iterable<{ name: string; store: { size: number } }>): void {
  const memory: [string, string, (m: NodeJS.MemoryUsage) => number][] = [
    ['process_resident_memory_bytes', 'Resident memory size in bytes.', (m) => m.rss],
    ['nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', (m) => m.heapUsed],
    ['nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', (m) => m.heapTotal],
    ['nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', (m) => m.external],
  ];
  for (const [name, help, read] of memory) {
    if (registry.getSingleMetric(name)) continue;
    new Gauge({ name, help, registers: [registry], collect() { this.set(read(process.memoryUsage())); } });
  }
  if (registry.getSingleMetric('podlife_informer_cached_objects')) return;
  new Gauge({
    name: 'podlife_informer_cached_objects',
    help: "Objects in each informer's cache",
    labelNames: ['informer'],
    registers: [registry],
    collect() {
      this.reset();
      for (const informer of informers()) this.set({ informer: informer.name }, informer.store.size);
    },
  });
}

/** prom-client's registry, re-exported so that callers share this package's copy. */
export { Registry };
