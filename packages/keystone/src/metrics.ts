/**
 * Keystone metrics:
 *   podlife_keystone_stops_total{strategy,result}  strategy: exec | ephemeral | delete | phase;
 *                                                  result: success | failure | dry_run
 *   podlife_keystone_stop_latency_seconds           from the triggering container's finishedAt to
 *                                                  the last stopped container's finishedAt
 *   podlife_keystone_invalid_pods_total             pods found with invalid lifecycle annotations
 *
 * Guarantees: created once per registry (a second reconciler on the same registry shares them).
 */
import { Counter, Histogram, type Registry } from 'prom-client';

const stopStrategies = ['exec', 'ephemeral', 'delete', 'phase'] as const;
const stopResults = ['success', 'failure', 'dry_run'] as const;
/** The `strategy` label of podlife_keystone_stops_total. */
export type StopStrategyLabel = (typeof stopStrategies)[number];
/** The `result` label of podlife_keystone_stops_total. */
export type StopResultLabel = (typeof stopResults)[number];

const latencyBuckets = [0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 15, 20, 30, 45, 60, 120, 300];

/** The keystone metrics of one registry. */
export class KeystoneMetrics {
  private readonly stops: Counter<'strategy' | 'result'>;
  private readonly latency: Histogram;
  private readonly invalid: Counter;

  constructor(registry: Registry) {
    this.stops =
      (registry.getSingleMetric('podlife_keystone_stops_total') as Counter<'strategy' | 'result'> | undefined) ??
      new Counter({ name: 'podlife_keystone_stops_total', help: 'Stop actions issued, by strategy and result', labelNames: ['strategy', 'result'], registers: [registry] });
    this.latency =
      (registry.getSingleMetric('podlife_keystone_stop_latency_seconds') as Histogram | undefined) ??
      new Histogram({
        name: 'podlife_keystone_stop_latency_seconds',
        help: "Seconds from the triggering container's finishedAt to the last stopped container's finishedAt",
        buckets: latencyBuckets,
        registers: [registry],
      });
    this.invalid =
      (registry.getSingleMetric('podlife_keystone_invalid_pods_total') as Counter | undefined) ??
      new Counter({ name: 'podlife_keystone_invalid_pods_total', help: 'Pods found with invalid lifecycle annotations', registers: [registry] });
    // Every series exists from the start at 0, so that rate() sees a first failure (alerts depend on it).
    for (const strategy of stopStrategies) for (const result of stopResults) this.stops.inc({ strategy, result }, 0);
  }

  stop(strategy: StopStrategyLabel, result: StopResultLabel): void {
    this.stops.inc({ strategy, result });
  }
  stopLatency(seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.latency.observe(seconds);
  }
  invalidPod(): void {
    this.invalid.inc();
  }
}
