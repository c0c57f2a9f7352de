/**
 * The permissions each controller needs: the one source the deploy manifests are generated
 * from and the RBAC test checks against a real API server.
 *
 * Guarantees: least privilege — no wildcard, no verb a controller does not use, no access to
 * Secrets or ConfigMaps. Rules are split by scope so that namespace scoping can grant the
 * pod rules through a Role in each scoped namespace instead of a ClusterRole (docs/adr/0061).
 */
import type { ControllerName } from '../options/flags.js';

/** An RBAC policy rule. */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** One controller's rules, split by the scope they are granted in. */
export interface ControllerPermissions {
  /** Rules on cluster-scoped objects (nodes, cluster-scoped custom resources): always a ClusterRole. */
  cluster: PolicyRule[];
  /** Rules on objects that live in the namespaces the controller acts in: a ClusterRole, or a Role per scoped namespace. */
  namespaced: PolicyRule[];
}

/**
 * Namespaces no controller acts in unless the admin lists them, besides its own (docs/adr/0257):
 * what runs there (the API server's add-ons, node heartbeats) is the cluster's own.
 */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-node-lease'];

const eventWrite: PolicyRule = { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] };

/** The RBAC rules each controller needs, by scope. */
export const controllerPermissions: Readonly<Record<ControllerName, ControllerPermissions>> = {
  keystone: {
    // The webhook converts sidecars to native ones only when every node's kubelet supports them.
    cluster: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
      // Lifecycle policies (ADR 0268, 0269): read them and the namespace labels they select by,
      // report on their status; creating or changing them stays with the cluster admin.
      { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['podlife.dev'], resources: ['lifecyclepolicies'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['podlife.dev'], resources: ['lifecyclepolicies/status'], verbs: ['patch'] },
    ],
    namespaced: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'delete'] },
      // Conditions (merged by type) and, for `completion: phase`, the phase.
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
      // The exec strategy: WebSocket exec is authorised as `get` before Kubernetes 1.30 and as
      // `create` since (SPDY/POST was always `create`), so both are needed across versions.
      { apiGroups: [''], resources: ['pods/exec'], verbs: ['get', 'create'] },
      { apiGroups: [''], resources: ['pods/ephemeralcontainers'], verbs: ['patch'] },
      eventWrite,
    ],
  },
  'network-conditions': {
    cluster: [],
    namespaced: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
      eventWrite,
    ],
  },
  'node-readiness': {
    cluster: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
      // Finalizers and status are JSON/merge patches; nothing is ever updated whole.
      { apiGroups: ['readiness.podlife.dev'], resources: ['nodereadinessrules'], verbs: ['get', 'list', 'watch', 'patch'] },
      { apiGroups: ['readiness.podlife.dev'], resources: ['nodereadinessrules/status'], verbs: ['patch'] },
      // Node Events live in the default namespace; rule Events in none: cluster-wide create.
      eventWrite,
    ],
    namespaced: [],
  },
};

/**
 * What a rule's pod condition reads (docs/adr/0273): the pods and DaemonSets of the namespaces
 * the admin lists (`readinessPodNamespaces`), through a Role in each, never cluster-wide: a
 * controller scoped to some namespaces reads no pod outside them unless the admin says so.
 */
export const readinessPodRules: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch'] },
  { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['list', 'watch'] },
];

/** Leader election: a Role in the controller's own namespace, on its one Lease. */
export function leaderElectionRules(leaseName: string): PolicyRule[] {
  return [
    // `create` cannot be limited by name (the object does not exist yet).
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: [leaseName] },
  ];
}
