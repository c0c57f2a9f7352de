/**
 * The node reconciler: reads a node from the cache, asks `evaluateNode` what its gates want, lets
 * the guardrails veto additions, and writes the outcome in one optimistically locked JSON patch.
 *
 * Guarantees:
 * - level-based: the event that woke it is never trusted, the cached node and rules are;
 * - does nothing until both the node and the rule caches have synced (a rule missing from a
 *   half-filled cache would make its taints look orphaned);
 * - at most one write per reconcile; a conflict (the node moved on) is not an error — the newer
 *   version arrives through the watch and is decided afresh;
 * - never writes from a cached node it has already written from: until the watch delivers the
 *   version its own write produced, the node is left alone (that event wakes it again), so a
 *   reconcile woken early does not spend a round trip on a patch certain to fail its lock;
 * - every failed write posts a Warning Event on the node and counts in the failures metric.
 */
import type { V1Node } from '@kubernetes/client-node';
import { ApiError, ContentType, isNotFound, resourcePath } from '@podlife/core';
import type { EventRecorderLike, KubeClient, Logger, ReconcileResult } from '@podlife/core';
import { evaluateNode } from './evaluate.js';
import type { TaintChange } from './evaluate.js';
import { Reasons, emit } from './events.js';
import type { Fleet } from './fleet.js';
import type { NodeReadinessMetrics } from './metrics.js';
import { ZeroConfigSource } from './names.js';
import { planNodePatch } from './node-patch.js';

export interface NodeReconcilerOptions {
  client: KubeClient;
  fleet: Fleet;
  events?: EventRecorderLike;
  metrics?: NodeReadinessMetrics;
  logger?: Logger;
  now?: () => number;
  /** Post a Normal Event for every ordinary taint removal; default false (thousands of nodes join at once). */
  removalEvents?: boolean;
  /** Told when a node stops holding a rule's taints, so a deleting rule can drop its finalizer promptly. */
  onReleased?: (ruleName: string) => void;
}

/**
 * A failed JSON-patch `test` (our resourceVersion is stale) or a precondition conflict. The API
 * server answers a failed `test` with a bare 422 Invalid (no field causes), unlike a real
 * validation error, which names the object and lists the offending fields.
 */
export function isStaleWrite(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (err.status === 409) return true;
  if (err.status !== 422) return false;
  const body = err.body as { details?: { causes?: unknown[]; name?: string } } | undefined;
  return !body?.details?.causes?.length && !body?.details?.name;
}

const notSyncedRetryMs = 250;
const breakerRetryMs = 5_000;
const staleRetryMs = 1_000;

export class NodeReconciler {
  private readonly now: () => number;
  /** Node -> the resourceVersion our last successful write was locked on, until the cache moves past it. */
  private readonly writtenFrom = new Map<string, string>();

  constructor(private readonly opts: NodeReconcilerOptions) {
    this.now = opts.now ?? Date.now;
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const { fleet, metrics } = this.opts;
    if (!fleet.synced()) return { requeueAfterMs: notSyncedRetryMs };
    const node = fleet.nodes.get(name);
    if (!node) {
      this.writtenFrom.delete(name);
      return {};
    }
    const rv = node.metadata?.resourceVersion ?? '';
    if (this.writtenFrom.has(name)) {
      if (this.writtenFrom.get(name) === rv) return {};
      this.writtenFrom.delete(name);
    }
    const now = this.now();
    const set = fleet.ruleSet();
    const decision = evaluateNode(node, set, now, fleet.evaluateOptions);

    let retryAt = decision.nextEvaluationAtMs;
    const later = (ms: number): void => {
      retryAt = Math.min(retryAt ?? Infinity, ms);
    };
    const changes: TaintChange[] = [];
    for (const change of decision.changes) {
      if (change.op === 'add') {
        const rule = set.active.find((r) => r.name === change.gate);
        if (!rule) continue;
        // Tokens first: a rate-limited addition must not pay for the breaker's fleet scan.
        const bucket = fleet.bucket(rule);
        const waitMs = bucket.waitMs();
        const clusterWaitMs = fleet.clusterBucket.waitMs();
        if (waitMs > 0 || clusterWaitMs > 0) {
          metrics?.failures.inc({ rule: rule.name, reason: waitMs > 0 ? 'RateLimited' : 'ClusterRateLimited' });
          later(now + Math.max(waitMs, clusterWaitMs, 10));
          continue;
        }
        if (fleet.breaker(rule).open) {
          metrics?.failures.inc({ rule: rule.name, reason: 'CircuitBreakerOpen' });
          later(now + breakerRetryMs);
          continue;
        }
        bucket.take();
        fleet.clusterBucket.take();
      }
      changes.push(change);
    }

    const ops = planNodePatch(node, changes, now);
    if (ops.length > 0) {
      try {
        await this.opts.client.patch(resourcePath({ version: 'v1', resource: 'nodes', name }), ops, ContentType.JsonPatch);
      } catch (err) {
        if (isNotFound(err)) return {};
        if (isStaleWrite(err)) {
          for (const c of changes) metrics?.failures.inc({ rule: metricRule(c), reason: 'Conflict' });
          return { requeueAfterMs: staleRetryMs };
        }
        this.writeFailed(node, changes, err);
        throw err;
      }
      if (rv) this.writtenFrom.set(name, rv);
      this.written(node, changes);
    }
    if (retryAt === undefined) return {};
    return { requeueAfterMs: Math.max(0, retryAt - now) };
  }

  private written(node: V1Node, changes: TaintChange[]): void {
    const { metrics, events } = this.opts;
    const done = this.now();
    for (const c of changes) {
      const rule = metricRule(c);
      metrics?.operations.inc({ rule, operation: c.op });
      const taint = `${c.taint.key}:${c.taint.effect}`;
      if (c.op === 'remove' && c.satisfiedSinceMs !== undefined && c.source !== 'cleanup') {
        metrics?.removalLatency.observe({ rule }, Math.max(0, done - c.satisfiedSinceMs) / 1000);
      }
      if (c.op === 'add') emit(events, node, 'Warning', Reasons.TaintAdded, `rule "${c.gate}" tainted the node with ${taint}: ${c.reason}`, 'Taint');
      else if (c.source === 'cleanup') emit(events, node, 'Normal', Reasons.TaintReleased, `removed ${taint}: ${c.reason}`, 'Untaint');
      else if (c.op === 'remove' && this.opts.removalEvents) emit(events, node, 'Normal', Reasons.TaintRemoved, `removed ${taint}: ${c.reason}`, 'Untaint');
      if (c.source === 'cleanup' && (c.op === 'remove' || c.op === 'release')) this.opts.onReleased?.(c.gate);
    }
    this.opts.logger?.debug({ node: node.metadata?.name, changes: changes.map((c) => `${c.op} ${c.taint.key}:${c.taint.effect} (${c.gate})`) }, 'node readiness patched');
  }

  private writeFailed(node: V1Node, changes: TaintChange[], err: unknown): void {
    const reason = err instanceof ApiError ? err.reason : 'Error';
    for (const c of changes) this.opts.metrics?.failures.inc({ rule: metricRule(c), reason: 'WriteFailed' });
    const what = changes.map((c) => `${c.op} ${c.taint.key}:${c.taint.effect} for ${c.source === 'zero-config' ? 'zero-config' : `rule "${c.gate}"`}`).join(', ');
    emit(this.opts.events, node, 'Warning', Reasons.WriteFailed, `could not ${what}: ${reason}: ${(err as Error).message}; retrying with backoff`, 'Patch');
    this.opts.logger?.warn({ node: node.metadata?.name, err }, 'node readiness write failed');
  }
}

function metricRule(c: TaintChange): string {
  return c.source === 'zero-config' ? ZeroConfigSource : c.gate;
}
