/**
 * The deploy manifests, generated from code so that they cannot drift from the permissions in
 * `rbac/rules.ts` or from the controller's flags (the checked-in files under deploy/ are this
 * output; a unit test compares them).
 *
 * Guarantees:
 * - one ServiceAccount, and per enabled controller a least-privilege ClusterRole (or, with
 *   namespace scoping, a Role in each scoped namespace for the pod rules) bound to it;
 * - the webhook can never block pod creation: failurePolicy Ignore, an objectSelector that only
 *   lets opted-in pods through, and the system namespaces excluded (docs/adr/0060);
 * - the controller runs where it is needed and nowhere else: it tolerates the readiness taints
 *   the admin names (the ones its rules add and it removes) and the control plane's, never every
 *   taint; has a priority class, a PodDisruptionBudget and spreads its replicas; a NetworkPolicy
 *   admits only the API server to the webhook port (docs/adr/0094) and only the scrapers the
 *   admin names to the metrics port (none by default);
 * - a stolen controller token cannot act in kube-system, kube-node-lease or the controller's own
 *   namespace unless the admin lists them: a ValidatingAdmissionPolicy denies its exec, ephemeral
 *   containers, pod deletes and status writes there (docs/adr/0257).
 */
import { nodeWebhookManifests } from './node-webhook.js';
import { stringify } from 'yaml';
import { PolicyNamespaceLabel, WEBHOOK_OPT_IN_LABEL, WEBHOOK_OPT_IN_VALUE } from '@podlife/keystone';
import { SYSTEM_NAMESPACES, controllerPermissions, leaderElectionRules, readinessPodRules, type PolicyRule } from '../rbac/rules.js';
import type { ControllerName } from '../options/flags.js';

/** A Kubernetes object as a manifest. */
export interface KubeManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** What the manifests are rendered for: namespace, image, controllers, scoping, replicas, Lease, network policy, size. */
export interface DeployOptions {
  namespace: string;
  image: string;
  controllers: readonly ControllerName[];
  /** Scoped namespaces; empty means cluster-wide. */
  namespaces: readonly string[];
  replicas: number;
  leaseName: string;
  /**
   * Where the API server calls the webhook from (its node or load-balancer addresses): the
   * NetworkPolicy admits only these to the webhook port. Empty: nothing reaches the webhook
   * port (admission then fails open, docs/adr/0060) until they are set — docs/adr/0094.
   */
  apiServerCidrs: readonly string[];
  /** PriorityClass value; below the system classes (2e9), at the top of what users may set. */
  priority: number;
  /** Memory request, limit and V8 heap cap, by cluster size (`CONTROLLER_SIZES`). */
  size: ControllerSizeName;
  /**
   * Who may scrape the metrics port: NetworkPolicy peers (a Prometheus namespace and pod
   * selector). Empty: nothing reaches it.
   */
  metricsFrom: readonly NetworkPolicyPeer[];
  /**
   * Namespaces whose pods and DaemonSets node readiness rules may wait on (a rule's `pod`
   * condition, docs/adr/0273): a Role in each lets the controller list and watch them. Empty: a
   * pod condition cannot be read, holds its taint and says so.
   */
  readinessPodNamespaces: readonly string[];
  /**
   * Taint keys of the node readiness rules (`readiness.k8s.io/...`): tolerated with any effect,
   * so the controller can run on nodes that still carry them (it is the one that removes them).
   */
  readinessTaints: readonly string[];
  /** Where the controller may run: the pod's nodeSelector (empty: anywhere it tolerates). */
  nodeSelector: Readonly<Record<string, string>>;
}

/** A NetworkPolicy `from` entry: namespaceSelector, podSelector or ipBlock, as the API has it. */
export type NetworkPolicyPeer = Readonly<Record<string, unknown>>;

/** The sizes the manifests can be rendered for. */
export type ControllerSizeName = 'medium' | 'large' | 'large-keystone' | 'large-managed';

/**
 * What the controller holds and the memory that holds it, each size proven by a bench/informer
 * run of the controller's own pod and node caches under `heapMiB` (table and figures in
 * deploy/README.md).
 * The heap cap (`--max-old-space-size`, via NODE_OPTIONS) sits below the limit, so V8 collects
 * harder near it instead of the kernel killing the process.
 */
export interface ControllerSize {
  /** Pods in the cluster (every namespace the controller watches). */
  pods: number;
  /** Nodes in the cluster. */
  nodes: number;
  /** The controllers the size was measured for. */
  controllers: readonly ControllerName[];
  /** With --managed-pods-only and at most this share of pods labelled. */
  managedShare?: number;
  memoryRequest: string;
  memoryLimit: string;
  heapMiB: number;
}

/**
 * V8's young generation cap for the controller, in MiB per semi-space (`--max-semi-space-size`).
 * V8's default lets it grow to 16 MiB per semi-space while the initial list allocates fast, and
 * its pages stay resident afterwards: about 45 MiB of a synced controller's RSS, holding only
 * garbage. At 6 MiB a synced cache keeps 20-45 MiB less and its sync peaks no higher; smaller caps
 * promote more short-lived objects, so syncs take longer and the peak stands further above the
 * steady state (docs/adr/0248).
 */
export const SEMI_SPACE_MIB = 6;

/** The Node options the shipped Deployment runs the controller with (NODE_OPTIONS): the heap cap of its size and the young generation cap. */
export function controllerNodeOptions(heapMiB: number): string {
  return `--max-old-space-size=${heapMiB} --max-semi-space-size=${SEMI_SPACE_MIB}`;
}

export const CONTROLLER_SIZES: Readonly<Record<ControllerSizeName, ControllerSize>> = {
  medium: { pods: 25_000, nodes: 1_000, controllers: ['keystone', 'network-conditions', 'node-readiness'], memoryRequest: '448Mi', memoryLimit: '512Mi', heapMiB: 384 },
  large: { pods: 60_000, nodes: 2_500, controllers: ['keystone', 'network-conditions', 'node-readiness'], memoryRequest: '896Mi', memoryLimit: '1Gi', heapMiB: 768 },
  'large-keystone': { pods: 150_000, nodes: 5_000, controllers: ['keystone', 'node-readiness'], memoryRequest: '512Mi', memoryLimit: '768Mi', heapMiB: 576 },
  'large-managed': { pods: 150_000, nodes: 5_000, controllers: ['keystone', 'node-readiness'], managedShare: 0.05, memoryRequest: '256Mi', memoryLimit: '256Mi', heapMiB: 192 },
};

/** Label a pod carries to be sent to the webhook (the objectSelector): keystone's, re-exported. */
export { WEBHOOK_OPT_IN_LABEL, WEBHOOK_OPT_IN_VALUE };
export const WEBHOOK_PATH = '/mutate-pods';
/** How long the API server waits for the webhook before it fails open (docs/adr/0257). */
export const WEBHOOK_TIMEOUT_SECONDS = 2;
/** The controller's ServiceAccount. */
export const SERVICE_ACCOUNT = 'podlife-controller';
/** The Service the API server calls the webhook through, and the Secret holding its certificate. */
export const SERVICE_NAME = 'podlife-controller';
export const WEBHOOK_TLS_SECRET = 'podlife-webhook-tls';
/** The cert-manager Certificate the webhook configuration's CA is injected from. */
export const WEBHOOK_CERTIFICATE = 'podlife-webhook';

/** The options the checked-in manifests under deploy/ are rendered with. */
export const defaultDeployOptions: DeployOptions = {
  namespace: 'podlife-system',
  image: 'podlife/podlife-controller:0.1.0',
  controllers: ['keystone', 'network-conditions', 'node-readiness'],
  namespaces: [],
  replicas: 2,
  leaseName: 'podlife-controller',
  apiServerCidrs: [],
  priority: 1_000_000_000,
  size: 'medium',
  metricsFrom: [],
  readinessPodNamespaces: [],
  readinessTaints: [],
  nodeSelector: {},
};

export const PRIORITY_CLASS = 'podlife-controller';
/** Every readiness taint the controller must run despite: it is the one that removes them. */
export const READINESS_TAINT_PREFIX = 'readiness.k8s.io/';

/** The namespaces the controller never acts in: the system ones and its own, unless listed in `namespaces`. */
export function protectedNamespaces(o: Pick<DeployOptions, 'namespace' | 'namespaces'>): string[] {
  return [...SYSTEM_NAMESPACES, o.namespace].filter((ns) => !o.namespaces.includes(ns));
}

/** The Deployment's tolerations: the control plane, node trouble for 5 minutes, and the readiness taints named. */
export function controllerTolerations(readinessTaints: readonly string[]): Record<string, unknown>[] {
  return [
    { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ...readinessTaints.map((key) => ({ key, operator: 'Exists' })),
  ];
}

export const APP_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/name': 'podlife-controller', 'app.kubernetes.io/part-of': 'podlife' };

export function namespaceManifest(o: DeployOptions): KubeManifest[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: o.namespace, labels: { ...APP_LABELS, 'pod-security.kubernetes.io/enforce': 'restricted' } },
    },
  ];
}

export function rbacManifests(o: DeployOptions): KubeManifest[] {
  const subject = [{ kind: 'ServiceAccount', name: SERVICE_ACCOUNT, namespace: o.namespace }];
  const out: KubeManifest[] = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SERVICE_ACCOUNT, namespace: o.namespace, labels: APP_LABELS } },
  ];
  const roleRef = (kind: 'ClusterRole' | 'Role', name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
  for (const name of o.controllers) {
    const perms = controllerPermissions[name];
    const roleName = `podlife-${name}`;
    const clusterRules: PolicyRule[] = o.namespaces.length === 0 ? [...perms.cluster, ...perms.namespaced] : perms.cluster;
    if (clusterRules.length > 0) {
      out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: roleName, labels: APP_LABELS }, rules: clusterRules });
      out.push({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: roleName, labels: APP_LABELS },
        roleRef: roleRef('ClusterRole', roleName),
        subjects: subject,
      });
    }
    if (o.namespaces.length > 0 && perms.namespaced.length > 0) {
      for (const ns of o.namespaces) {
        out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: roleName, namespace: ns, labels: APP_LABELS }, rules: perms.namespaced });
        out.push({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: roleName, namespace: ns, labels: APP_LABELS },
          roleRef: roleRef('Role', roleName),
          subjects: subject,
        });
      }
    }
  }
  if (o.controllers.includes('node-readiness')) {
    const name = 'podlife-node-readiness-pods';
    for (const ns of o.readinessPodNamespaces) {
      out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: ns, labels: APP_LABELS }, rules: [...readinessPodRules] });
      out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name, namespace: ns, labels: APP_LABELS }, roleRef: roleRef('Role', name), subjects: subject });
    }
  }
  const leader = 'podlife-leader-election';
  out.push({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: leader, namespace: o.namespace, labels: APP_LABELS }, rules: leaderElectionRules(o.leaseName) });
  out.push({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: leader, namespace: o.namespace, labels: APP_LABELS },
    roleRef: roleRef('Role', leader),
    subjects: subject,
  });
  return out;
}

export const exampleConfig = `# podlife-controller configuration: settings only the cluster admin chooses.
# Pod annotations can only name these (exec:<name>); they never choose a command or an image.
execCommands: {}
#  drain-envoy: ["/usr/local/bin/pilot-agent", "request", "POST", "quitquitquit"]
# ephemeralContainer:
#   image: busybox:1.36        # for distroless sidecars: signals their PID 1 or POSTs to 127.0.0.1
#   # securityContext:         # laid over Pod Security "restricted" (non-root 65532, no escalation, drop ALL, RuntimeDefault); weaker settings are refused
#   #   readOnlyRootFilesystem: true
#   # matchTargetUser: true    # signal stops run as the target's declared non-root uid (kill needs the same uid)
keystoneLimit: 1
defaultStrategy: auto          # auto: exec, then an ephemeral container when exec is impossible
namespaces: []                 # empty: every namespace (see also --namespace)
managedPodsOnly: false         # true: cache only pods labelled podlife.dev/managed=true (docs/adr/0131)
containerStopSignals: false    # true once API servers and kubelets run ContainerStopSignals (alpha): signal stop specs become lifecycle.stopSignal (docs/adr/0211)
lifecyclePolicies: true        # apply LifecyclePolicy objects at admission (needs deploy/crds/lifecyclepolicies.yaml; docs/adr/0269)
nodeReadiness:
  clusterGuardrails:           # taints added by every NodeReadinessRule together; no rule can raise these (docs/adr/0259)
    additionsPerMinute: 120    # one cluster-wide token bucket, on top of each rule's own
    additionBurst: 20
    maxTaintedPercent: 50      # the most of the cluster a rule whose selector takes every node may taint
`;

export function configManifests(o: DeployOptions): KubeManifest[] {
  return [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'podlife-config', namespace: o.namespace, labels: APP_LABELS }, data: { 'config.yaml': exampleConfig } }];
}

export function deploymentManifests(o: DeployOptions): KubeManifest[] {
  const args = [
    `--controllers=${o.controllers.join(',')}`,
    ...o.namespaces.map((ns) => `--namespace=${ns}`),
    '--config=/etc/podlife/config/config.yaml',
    '--leader-elect',
    `--leader-election-id=${o.leaseName}`,
    '--webhook-port=9443',
    '--tls-cert-file=/etc/podlife/tls/tls.crt',
    '--tls-key-file=/etc/podlife/tls/tls.key',
    '--metrics-port=8080',
    '--health-port=8081',
  ];
  const size = CONTROLLER_SIZES[o.size];
  const unmeasured = o.controllers.filter((c) => !size.controllers.includes(c));
  if (unmeasured.length > 0) {
    throw new Error(`size "${o.size}" was measured without ${unmeasured.join(', ')}: choose a size that runs them (deploy/README.md) or leave them out`);
  }
  if (size.managedShare !== undefined) args.push('--managed-pods-only');
  const deployment: KubeManifest = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'podlife-controller', namespace: o.namespace, labels: APP_LABELS },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: APP_LABELS },
      template: {
        metadata: { labels: APP_LABELS },
        spec: {
          serviceAccountName: SERVICE_ACCOUNT,
          priorityClassName: PRIORITY_CLASS,
          // It removes readiness.k8s.io/* taints, so it must schedule on nodes that still carry
          // them; tolerations cannot match a key prefix, so the admin names them. Never every
          // taint: pools set apart for untrusted workloads stay out of its reach (docs/adr/0257).
          tolerations: controllerTolerations(o.readinessTaints),
          ...(Object.keys(o.nodeSelector).length > 0 ? { nodeSelector: { ...o.nodeSelector } } : {}),
          // One replica per node and per zone where possible; never unschedulable because of it.
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: APP_LABELS } },
            { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: APP_LABELS } },
          ],
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          // Lease renewal and graceful shutdown both fit in 30 s.
          terminationGracePeriodSeconds: 30,
          containers: [
            {
              name: 'controller',
              image: o.image,
              args,
              env: [
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'NODE_OPTIONS', value: controllerNodeOptions(size.heapMiB) },
              ],
              ports: [
                { name: 'webhook', containerPort: 9443 },
                { name: 'metrics', containerPort: 8080 },
                { name: 'health', containerPort: 8081 },
              ],
              readinessProbe: { httpGet: { path: '/readyz', port: 'health' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/healthz', port: 'health' }, periodSeconds: 10, failureThreshold: 3 },
              resources: { requests: { cpu: '50m', memory: size.memoryRequest }, limits: { memory: size.memoryLimit } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                { name: 'config', mountPath: '/etc/podlife/config', readOnly: true },
                { name: 'tls', mountPath: '/etc/podlife/tls', readOnly: true },
              ],
            },
          ],
          volumes: [
            { name: 'config', configMap: { name: 'podlife-config' } },
            // Mounted as a directory (not subPath) so that rotations reach the pod and are reloaded.
            { name: 'tls', secret: { secretName: WEBHOOK_TLS_SECRET } },
          ],
        },
      },
    },
  };
  const service: KubeManifest = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: SERVICE_NAME, namespace: o.namespace, labels: APP_LABELS },
    spec: {
      selector: APP_LABELS,
      ports: [
        { name: 'webhook', port: 443, targetPort: 'webhook' },
        { name: 'metrics', port: 8080, targetPort: 'metrics' },
      ],
    },
  };
  return [deployment, service];
}

/** What keeps the controller running: a PriorityClass and a PodDisruptionBudget. */
export function availabilityManifests(o: DeployOptions): KubeManifest[] {
  return [
    {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: PRIORITY_CLASS, labels: APP_LABELS },
      value: o.priority,
      globalDefault: false,
      description: 'podlife-controller: removes node readiness taints and stops sidecars; must run before the workloads it serves.',
    },
    {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'podlife-controller', namespace: o.namespace, labels: APP_LABELS },
      // One at a time: with two replicas one always serves; with one, a drain is still possible.
      spec: { maxUnavailable: 1, selector: { matchLabels: APP_LABELS } },
    },
  ];
}

/** Only the API server reaches the webhook port, only the named scrapers the metrics port; health stays reachable (the kubelet's probes). */
export function networkPolicyManifests(o: DeployOptions): KubeManifest[] {
  const ingress: Record<string, unknown>[] = [];
  if (o.apiServerCidrs.length > 0) {
    ingress.push({ from: o.apiServerCidrs.map((cidr) => ({ ipBlock: { cidr } })), ports: [{ protocol: 'TCP', port: 9443 }] });
  }
  if (o.metricsFrom.length > 0) ingress.push({ from: o.metricsFrom.map((peer) => structuredClone(peer)), ports: [{ protocol: 'TCP', port: 8080 }] });
  ingress.push({ ports: [{ protocol: 'TCP', port: 8081 }] });
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'podlife-controller', namespace: o.namespace, labels: APP_LABELS },
      spec: { podSelector: { matchLabels: APP_LABELS }, policyTypes: ['Ingress'], ingress },
    },
  ];
}

/** The name of the ValidatingAdmissionPolicy (and its binding) that bounds the controller's reach. */
export const REACH_POLICY = 'podlife-controller-reach';

/**
 * What a stolen controller token cannot do, whatever RBAC grants it: exec, add ephemeral
 * containers, delete pods or write pod status in the protected namespaces (`protectedNamespaces`).
 * The API server enforces it (a ValidatingAdmissionPolicy matched on the ServiceAccount's name);
 * none when the admin lists every one of them.
 */
export function reachPolicyManifests(o: DeployOptions): KubeManifest[] {
  const namespaces = protectedNamespaces(o);
  if (namespaces.length === 0) return [];
  const rule = (operation: string, resource: string) => ({ apiGroups: [''], apiVersions: ['v1'], operations: [operation], resources: [resource], scope: 'Namespaced' });
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: REACH_POLICY, labels: APP_LABELS },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [rule('CONNECT', 'pods/exec'), rule('UPDATE', 'pods/ephemeralcontainers'), rule('DELETE', 'pods'), rule('UPDATE', 'pods/status')],
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: namespaces }] },
        },
        matchConditions: [{ name: 'podlife-controller', expression: `request.userInfo.username == ${JSON.stringify(`system:serviceaccount:${o.namespace}:${SERVICE_ACCOUNT}`)}` }],
        validations: [
          {
            expression: 'false',
            message: 'podlife-controller does not act in this namespace: list it in the controller\'s namespaces to allow it (docs/adr/0257)',
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: REACH_POLICY, labels: APP_LABELS },
      spec: { policyName: REACH_POLICY, validationActions: ['Deny'] },
    },
  ];
}

export function webhookManifests(o: DeployOptions): KubeManifest[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: {
        name: 'podlife',
        labels: APP_LABELS,
        // caBundle: filled in by cert-manager's CA injector, or set it by hand to the CA of the Secret.
        annotations: { 'cert-manager.io/inject-ca-from': `${o.namespace}/${WEBHOOK_CERTIFICATE}` },
      },
      webhooks: [
        webhookEntry({ service: { namespace: o.namespace, name: SERVICE_NAME, path: WEBHOOK_PATH, port: 443 } }, o),
        policyWebhookEntry({ service: { namespace: o.namespace, name: SERVICE_NAME, path: WEBHOOK_PATH, port: 443 } }, o),
      ],
    },
  ];
}

/** The names the webhook's certificate must hold: the Service's DNS names. */
export function webhookDnsNames(o: Pick<DeployOptions, 'namespace'>): string[] {
  return [`${SERVICE_NAME}.${o.namespace}.svc`, `${SERVICE_NAME}.${o.namespace}.svc.cluster.local`];
}

/**
 * With cert-manager: a self-signed Issuer and the Certificate that writes the webhook's Secret
 * (the webhook configuration's `inject-ca-from` names it). Not in deploy/ (cert-manager is optional
 * there, deploy/README.md); the chart renders them when asked to.
 */
export function certManagerManifests(o: DeployOptions): KubeManifest[] {
  return [
    { apiVersion: 'cert-manager.io/v1', kind: 'Issuer', metadata: { name: 'podlife-selfsigned', namespace: o.namespace, labels: APP_LABELS }, spec: { selfSigned: {} } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: WEBHOOK_CERTIFICATE, namespace: o.namespace, labels: APP_LABELS },
      spec: { secretName: WEBHOOK_TLS_SECRET, dnsNames: webhookDnsNames(o), issuerRef: { kind: 'Issuer', name: 'podlife-selfsigned' } },
    },
  ];
}

/** For the Prometheus operator: scrape the Service's metrics port. Not in deploy/ (the operator is optional). */
export function serviceMonitorManifests(o: DeployOptions): KubeManifest[] {
  return [
    {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'podlife-controller', namespace: o.namespace, labels: APP_LABELS },
      spec: { selector: { matchLabels: APP_LABELS }, endpoints: [{ port: 'metrics', path: '/metrics', interval: '30s' }] },
    },
  ];
}

/** One webhook entry; `clientConfig` is a Service in a cluster or a URL outside one (tests). */
export function webhookEntry(clientConfig: Record<string, unknown>, o: Pick<DeployOptions, 'namespace' | 'namespaces'>): Record<string, unknown> {
  const namespaceSelector =
    o.namespaces.length > 0
      ? { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...o.namespaces] }] }
      : { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...SYSTEM_NAMESPACES, o.namespace] }] };
  return {
    name: 'pods.podlife.dev',
    admissionReviewVersions: ['v1'],
    clientConfig,
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
    // A webhook outage must never stop pods from being created: the conversion it makes is an
    // optimisation (the controller still stops sidecars of unconverted pods).
    failurePolicy: 'Ignore',
    // Only pods that opted in (the injector that adds a sidecar sets the label) pay the round trip.
    objectSelector: { matchLabels: { [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE } },
    namespaceSelector,
    sideEffects: 'None',
    // The conversion takes well under a millisecond; a webhook that cannot be reached (a
    // NetworkPolicy that drops the API server's packets) costs each opted-in pod creation this
    // long before it fails open (docs/adr/0257).
    timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS,
    // Sidecars added by webhooks that run after this one get a second pass.
    reinvocationPolicy: 'IfNeeded',
    matchPolicy: 'Equivalent',
  };
}

/**
 * The entry that reaches pods of the namespaces lifecycle policies cover (docs/adr/0269): every
 * pod of a namespace labelled `podlife.dev/policies: enabled` (outside the system namespaces),
 * except those the first entry already sends; the same route, so the same answer.
 */
export function policyWebhookEntry(clientConfig: Record<string, unknown>, o: Pick<DeployOptions, 'namespace' | 'namespaces'>): Record<string, unknown> {
  const entry = webhookEntry(clientConfig, o);
  const selector = entry.namespaceSelector as Record<string, unknown>;
  return {
    ...entry,
    name: 'policies.podlife.dev',
    objectSelector: { matchExpressions: [{ key: WEBHOOK_OPT_IN_LABEL, operator: 'NotIn', values: [WEBHOOK_OPT_IN_VALUE] }] },
    namespaceSelector: { matchLabels: { [PolicyNamespaceLabel.key]: PolicyNamespaceLabel.value }, ...selector },
  };
}

/** One file under deploy/ and the manifests it holds. */
export interface DeployFile {
  name: string;
  manifests: KubeManifest[];
  comment: string;
  /** Not in kustomization.yaml nor in the chart's defaults: installing it is the admin's choice. */
  optIn?: true;
}

/** The files under deploy/, in apply order. */
export function deployFiles(o: DeployOptions = defaultDeployOptions): DeployFile[] {
  return [
    { name: 'namespace.yaml', comment: 'The controller\'s namespace (restricted Pod Security).', manifests: namespaceManifest(o) },
    { name: 'rbac.yaml', comment: 'ServiceAccount and one least-privilege ClusterRole per enabled controller.', manifests: rbacManifests(o) },
    {
      name: 'reach.yaml',
      comment: `The controller's ServiceAccount never execs, adds ephemeral containers, deletes pods or writes pod status in ${protectedNamespaces(o).join(', ') || 'no namespace'} (docs/adr/0257).`,
      manifests: reachPolicyManifests(o),
    },
    { name: 'config.yaml', comment: 'Admin-only settings (see the controller\'s --config).', manifests: configManifests(o) },
    { name: 'availability.yaml', comment: 'A PriorityClass and a PodDisruptionBudget: the controller runs where and when it is needed.', manifests: availabilityManifests(o) },
    {
      name: 'deployment.yaml',
      comment: `Two replicas: one leader acts, both serve the webhook. Sized "${o.size}": ${sizeSummary(CONTROLLER_SIZES[o.size])} (deploy/README.md).`,
      manifests: deploymentManifests(o),
    },
    {
      name: 'networkpolicy.yaml',
      comment: `Only the API server reaches the webhook port: set apiServerCidrs (docs/adr/0094); until then nothing does, and each opted-in pod creation waits the webhook's ${WEBHOOK_TIMEOUT_SECONDS} s timeout before admission fails open. Metrics: only metricsFrom (none by default).`,
      manifests: networkPolicyManifests(o),
    },
    {
      name: 'webhook.yaml',
      comment: 'Native-sidecar conversion and lifecycle policies at admission (opted-in pods; every pod of namespaces labelled podlife.dev/policies=enabled); never blocks pod creation.',
      manifests: webhookManifests(o),
    },
    {
      name: 'node-webhook.yaml',
      optIn: true,
      comment: 'Opt-in, not in kustomization.yaml: readiness taints added to a node as it registers (Node CREATE), for pools whose kubelet flags cannot be set; fails open, skips control-plane nodes (docs/adr/0274).',
      manifests: nodeWebhookManifests(o),
    },
  ];
}

/** One line saying what a size holds, e.g. "up to 25,000 pods and 1,000 nodes, with keystone, network-conditions, node-readiness; memory request 448Mi, limit 512Mi". */
export function sizeSummary(size: ControllerSize): string {
  const cluster = `up to ${size.pods.toLocaleString('en-US')} pods and ${size.nodes.toLocaleString('en-US')} nodes`;
  const managed = size.managedShare !== undefined ? `, ${size.managedShare * 100}% of the pods labelled podlife.dev/managed (--managed-pods-only)` : '';
  return `${cluster}${managed}, with ${size.controllers.join(', ')}; memory request ${size.memoryRequest}, limit ${size.memoryLimit}`;
}

export function renderYaml(file: DeployFile): string {
  const header = `# Generated by packages/controller/scripts/render-deploy.ts — do not edit by hand.\n# ${file.comment}\n`;
  return header + file.manifests.map((m) => `---\n${stringify(m, { lineWidth: 0 })}`).join('');
}
