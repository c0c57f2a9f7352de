/**
 * Prometheus metrics for node readiness gates.
 *
 * Guarantees: every metric is registered once per registry (a second controller on the same
 * registry reuses them); label values are rule names (or `zero-config`), operations and gate
 * states — never node names, so cardinality stays bounded by the number of rules.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The node-readiness metrics. */
export interface NodeReadinessMetrics {
  /** Seconds from the gate's conditions becoming satisfied to its taint being removed. */
  removalLatency: Histogram<'rule'>;
  /** Selected nodes per rule and gate state (satisfied, failing, unknown, missing, completed). */
  nodes: Gauge<'rule' | 'state'>;
  /** Writes by rule and operation (add, remove, adopt, release). */
  operations: Counter<'rule' | 'operation'>;
  /** Failed writes and refused additions, by rule and reason. */
  failures: Counter<'rule' | 'reason'>;
  /** 1 while the rule's circuit breaker is open. */
  breakerOpen: Gauge<'rule'>;
}

function reuse<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** The node-readiness metrics in `registry`, created once per registry. */
export function nodeReadinessMetrics(registry: Registry = new Registry()): NodeReadinessMetrics {
  const registers = [registry];
  return {
    removalLatency: reuse(registry, 'podlife_node_readiness_taint_removal_seconds', () =>
      new Histogram({
        name: 'podlife_node_readiness_taint_removal_seconds',
        help: 'Time from a readiness gate being satisfied (condition lastTransitionTime) to its taint being removed',
        labelNames: ['rule'],
        buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
        registers,
      }),
    ),
    nodes: reuse(registry, 'podlife_node_readiness_nodes', () =>
      new Gauge({ name: 'podlife_node_readiness_nodes', help: 'Nodes selected by a readiness rule, by gate state', labelNames: ['rule', 'state'], registers }),
    ),
    operations: reuse(registry, 'podlife_node_readiness_operations_total', () =>
      new Counter({ name: 'podlife_node_readiness_operations_total', help: 'Taint operations written to nodes', labelNames: ['rule', 'operation'], registers }),
    ),
    failures: reuse(registry, 'podlife_node_readiness_failures_total', () =>
      new Counter({ name: 'podlife_node_readiness_failures_total', help: 'Failed node writes and refused taint additions', labelNames: ['rule', 'reason'], registers }),
    ),
    breakerOpen: reuse(registry, 'podlife_node_readiness_circuit_breaker_open', () =>
      new Gauge({ name: 'podlife_node_readiness_circuit_breaker_open', help: '1 while a rule adds no taints because too many of its nodes would be tainted', labelNames: ['rule'], registers }),
    ),
  };
}
