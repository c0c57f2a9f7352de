/**
 * The node-readiness controllers, ready to add to a core Manager.
 *
 * Guarantees:
 * - two controllers share one view of the fleet: `node-readiness-nodes` reconciles nodes (woken by
 *   node changes, and for every node by any rule change), `node-readiness-rules` keeps rule status,
 *   finalizers and Events (woken by rule changes, a periodic resync, and nodes releasing taints) —
 *   it does not watch nodes, so node heartbeats never trigger fleet-wide recounts;
 * - the node cache keeps only what gates need (labels, annotations, taints, conditions), so memory
 *   stays flat with fleet size rather than with node image lists;
 * - neither controller acts before both caches have synced.
 */
import type { V1Node } from '@kubernetes/client-node';
import { Controller } from '@podlife/core';
import type { Logger, Manager } from '@podlife/core';
import { cacheView, Fleet } from './fleet.js';
import { nodeReadinessMetrics } from './metrics.js';
import type { NodeReadinessMetrics } from './metrics.js';
import { NodeReconciler } from './node-reconciler.js';
import type { NodeReadinessRule } from './rule.js';
import { RuleReconciler, rulePath } from './rule-reconciler.js';

export interface NodeReadinessControllerOptions {
  /** Remove unclaimed readiness.k8s.io/<Type> taints when condition <Type> is True; default true. */
  zeroConfig?: boolean;
  /** Nodes reconciled at once; default 16 (each reconcile is at most one PATCH). */
  concurrency?: number;
  /** Normal Event on every ordinary taint removal; default false. */
  removalEvents?: boolean;
  statusResyncMs?: number;
  logger?: Logger;
}

export interface NodeReadinessControllers {
  nodes: Controller;
  rules: Controller;
  fleet: Fleet;
  metrics: NodeReadinessMetrics;
}

/** Keeps what readiness gates read; drops managed fields, images, addresses and the rest. */
export function slimNode(node: V1Node): V1Node {
  const { managedFields: _ignored, ...metadata } = node.metadata ?? {};
  return {
    apiVersion: node.apiVersion,
    kind: node.kind,
    metadata,
    spec: { ...(node.spec?.taints ? { taints: node.spec.taints } : {}), ...(node.spec?.unschedulable ? { unschedulable: true } : {}) },
    status: { ...(node.status?.conditions ? { conditions: node.status.conditions } : {}), ...(node.status?.nodeInfo ? { nodeInfo: node.status.nodeInfo } : {}) },
  };
}

export function nodeReadinessController(manager: Manager, options: NodeReadinessControllerOptions = {}): NodeReadinessControllers {
  const nodeInformer = manager.informer<V1Node>({ path: '/api/v1/nodes', transform: slimNode, name: 'nodes' });
  const ruleInformer = manager.informer<NodeReadinessRule>({ path: rulePath(), name: 'nodereadinessrules' });
  const fleet = new Fleet(cacheView(nodeInformer), cacheView(ruleInformer), { zeroConfig: options.zeroConfig !== false });
  const metrics = nodeReadinessMetrics(manager.registry);

  let rules: Controller | undefined;
  const nodeReconciler = new NodeReconciler({
    client: manager.client,
    fleet,
    events: manager.events,
    metrics,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.removalEvents ? { removalEvents: true } : {}),
    onReleased: (rule) => rules?.enqueue(rule),
  });
  const nodes = new Controller({ name: 'node-readiness-nodes', reconciler: nodeReconciler, concurrency: options.concurrency ?? 16, ...(options.logger ? { logger: options.logger } : {}) })
    .watch(nodeInformer)
    .watch(ruleInformer, () => nodeInformer.store.keys());

  const ruleReconciler = new RuleReconciler({
    client: manager.client,
    fleet,
    events: manager.events,
    metrics,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.statusResyncMs !== undefined ? { statusResyncMs: options.statusResyncMs } : {}),
    enqueueNode: (name) => nodes.enqueue(name),
  });
  rules = new Controller({ name: 'node-readiness-rules', reconciler: ruleReconciler, ...(options.logger ? { logger: options.logger } : {}) }).watch(ruleInformer);

  manager.add(nodes);
  manager.add(rules);
  return { nodes, rules, fleet, metrics };
}
