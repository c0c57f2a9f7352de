/**
 * The node-readiness controllers, ready to add to a core Manager.
 *
 * Guarantees:
 * - two controllers share one view of the fleet: `node-readiness-nodes` reconciles nodes (woken by
 *   node changes, and for every node by a rule appearing, disappearing, or changing its spec or
 *   deletion — never by a rule's status write, which would requeue the whole fleet behind the
 *   nodes actually waiting for a taint removal), `node-readiness-rules` keeps rule status,
 *   finalizers and Events (woken by rule changes, a periodic resync, and nodes releasing taints) —
 *   it does not watch nodes, so node heartbeats never trigger fleet-wide recounts;
 * - the node cache keeps only what gates need (labels, annotations, taints, conditions), so memory
 *   stays flat with fleet size rather than with node image lists;
 * - neither controller acts before both caches have synced, nor, while a rule has a pod condition,
 *   before the pods of the namespaces it names have (pod-cache.ts: watched only while needed).
 */
import type { V1Node } from '@kubernetes/client-node';
import { Controller, timeMs } from '@podlife/core';
import type { Logger, Manager } from '@podlife/core';
import { cacheView, Fleet } from './fleet.js';
import { clusterGuardrailsProblem } from './guardrails.js';
import type { ClusterGuardrails } from './guardrails.js';
import { nodeReadinessMetrics } from './metrics.js';
import { MigratedFromAnnotation } from './names.js';
import type { NodeReadinessMetrics } from './metrics.js';
import { NodeReconciler } from './node-reconciler.js';
import { PodCache } from './pod-cache.js';
import { podNamespaces } from './pod-conditions.js';
import type { NodeReadinessRule } from './rule.js';
import { RuleReconciler, rulePath } from './rule-reconciler.js';

/** Zero-config mode, concurrency, removal Events, status resync and logging of the node-readiness controllers. */
export interface NodeReadinessControllerOptions {
  /** Remove unclaimed readiness.k8s.io/<Type> taints when condition <Type> is True; default true. */
  zeroConfig?: boolean;
  /**
   * Nodes reconciled at once; default 128 (docs/adr/0183). A reconcile is a few microseconds of
   * CPU around at most one PATCH, so throughput is concurrency / round trip: 128 keeps up with
   * 250 nodes turning ready per second at 500 ms per write. Keep it within the client's socket
   * pool (128 by default).
   */
  concurrency?: number;
  /** Normal Event on every ordinary taint removal; default false. */
  removalEvents?: boolean;
  statusResyncMs?: number;
  /**
   * Limits no rule author can raise (docs/adr/0259): additions by every rule together, default
   * 120 per minute with a burst of 20, on top of each rule's own; and the share of the cluster a
   * rule that selects every node may taint, default 50%.
   */
  clusterGuardrails?: ClusterGuardrails;
  logger?: Logger;
}

/** The two node-readiness controllers and the fleet view they share. */
export interface NodeReadinessControllers {
  nodes: Controller;
  rules: Controller;
  fleet: Fleet;
  metrics: NodeReadinessMetrics;
}

/**
 * Whether a rule update can change what a node's gates decide: its spec, generation, deletion, or
 * the NRC rule it was migrated from.
 * A status write (counts, conditions) cannot, and must not wake every node.
 */
export function ruleChangeAffectsNodes(old: NodeReadinessRule, obj: NodeReadinessRule): boolean {
  return (
    old.metadata?.generation !== obj.metadata?.generation ||
    timeMs(old.metadata?.deletionTimestamp) !== timeMs(obj.metadata?.deletionTimestamp) ||
    JSON.stringify(old.spec) !== JSON.stringify(obj.spec) ||
    old.metadata?.annotations?.[MigratedFromAnnotation] !== obj.metadata?.annotations?.[MigratedFromAnnotation]
  );
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

/** The node and rule controllers on `manager`'s informers; add both with `manager.add`. */
export function nodeReadinessController(manager: Manager, options: NodeReadinessControllerOptions = {}): NodeReadinessControllers {
  const problem = clusterGuardrailsProblem(options.clusterGuardrails ?? {});
  if (problem) throw new Error(`node-readiness: ${problem}`);
  const nodeInformer = manager.informer<V1Node>({ path: '/api/v1/nodes', transform: slimNode, name: 'nodes' });
  const ruleInformer = manager.informer<NodeReadinessRule>({ path: rulePath(), name: 'nodereadinessrules' });
  // Pods are watched only while a rule has a pod condition, in the namespaces such rules name.
  const pods = new PodCache(manager.client, { nodeChanged: (n) => nodes.enqueue(n), everyNodeChanged: () => everyNode() }, options.logger);
  const fleet = new Fleet(cacheView(nodeInformer), cacheView(ruleInformer), { zeroConfig: options.zeroConfig !== false, pods }, Date.now, options.clusterGuardrails);
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
  const nodes = new Controller({ name: 'node-readiness-nodes', reconciler: nodeReconciler, concurrency: options.concurrency ?? 128, ...(options.logger ? { logger: options.logger } : {}) })
    .watch(nodeInformer)
    // Registered for its sync only (workers wait for both caches); rule events are mapped below.
    .watch(ruleInformer, () => []);
  function everyNode(): void {
    for (const key of nodeInformer.store.keys()) nodes.enqueue(key);
  }
  const rulesChanged = (): void => {
    if (ruleInformer.hasSynced()) pods.follow(podNamespaces(fleet.ruleSet().active.flatMap((r) => r.conditions)));
    everyNode();
  };
  ruleInformer.on('add', rulesChanged);
  ruleInformer.on('delete', rulesChanged);
  ruleInformer.on('synced', rulesChanged);
  ruleInformer.on('update', (obj, old) => {
    if (ruleChangeAffectsNodes(old, obj)) rulesChanged();
  });
  // The pod informers are not the manager's (they come and go with rules): they stop with the node controller.
  const stopNodes = nodes.stop.bind(nodes);
  nodes.stop = async () => {
    await stopNodes();
    await pods.stop();
  };

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
