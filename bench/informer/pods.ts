/**
 * Realistic pods for the informer benchmark, as the API server lists them.
 *
 * Guarantees:
 * - `pod(i)` depends on `i` alone (a PRNG seeded by the index), so the server can generate any
 *   page on demand and every run sees byte-identical pods;
 * - pods vary the way a busy cluster does: several workload shapes with 1-4 containers, init
 *   containers (some of them native sidecars), env with values and references, volumes, probes,
 *   phases from Pending to Failed, restarts, deletions in progress, and podlife annotations on
 *   the Job-like pods;
 * - strings that are unique in a real cluster (uids, names, IPs, container ids, timestamps) are
 *   unique here too, so the cache cannot share them;
 * - `metadata.managedFields` is derived from the pod's own fields the way server-side apply
 *   tracks them (a controller-manager entry for metadata+spec, a kubelet entry for status), so
 *   its size scales with the pod like the real thing. Items carry no apiVersion/kind, as in a
 *   real list body.
 */
import { seededRandom } from '@podlife/testbed';
import type {
  V1Container,
  V1ContainerStatus,
  V1EnvVar,
  V1ManagedFieldsEntry,
  V1Pod,
  V1PodCondition,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';


/** A seeded generator's next number in [0, 1). */
export type Rand = () => number;
export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
export const int = (r: Rand, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));
const HEX = '0123456789abcdef';
const ALNUM = 'bcdfghjklmnpqrstvwxz2456789';
function chars(r: Rand, alphabet: string, n: number): string {
  let s = '';
  for (let k = 0; k < n; k++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}
export const hex = (r: Rand, n: number): string => chars(r, HEX, n);
/** Five characters of a pod-name suffix for n < 27^5. */
function base27(n: number): string {
  let s = '';
  for (let k = 0; k < 5; k++, n = Math.floor(n / 27)) s += ALNUM[n % 27];
  return s;
}
export function uuid(r: Rand): string {
  const h = hex(r, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
}
/** The same digest for the same image everywhere, as in a real cluster. */
export function digest(image: string): string {
  const r = seededRandom([...image].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619), 2166136261));
  return hex(r, 64);
}

export const BASE_MS = Date.UTC(2025, 4, 1, 8, 0, 0);
/** RFC 3339 at second precision, as metav1.Time marshals it. */
const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** The same where client-node's types say Date: on the wire it is this string. */
export const wire = (ms: number): Date => stamp(ms) as unknown as Date;
/** An unset lastProbeTime, which the API writes as null. */
const NEVER = null as unknown as Date;

interface ContainerShape {
  name: string;
  image: string;
  port?: number;
  env: number;
  probes: boolean;
  args?: string[];
}

interface Workload {
  name: string;
  kind: 'ReplicaSet' | 'StatefulSet' | 'Job' | 'DaemonSet';
  containers: ContainerShape[];
  init?: ContainerShape[];
  /** Init containers with restartPolicy Always (native sidecars). */
  sidecars?: ContainerShape[];
  configMaps?: string[];
  secrets?: string[];
  podlife?: Record<string, string>;
  /** Containers carry a restrictive securityContext. */
  hardened?: boolean;
  /** Share of the cluster's pods, in slots. */
  weight: number;
}

const WORKLOADS: readonly Workload[] = [
  {
    name: 'storefront',
    kind: 'ReplicaSet',
    weight: 2,
    hardened: true,
    containers: [{ name: 'web', image: 'registry.example.com/shop/storefront:v3.18.2', port: 8080, env: 5, probes: true }],
    configMaps: ['storefront-config'],
    secrets: ['storefront-db'],
  },
  {
    name: 'checkout-api',
    kind: 'ReplicaSet',
    weight: 1,
    containers: [
      { name: 'api', image: 'registry.example.com/shop/checkout:2.41.0', port: 9000, env: 6, probes: true },
      { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.24.2', port: 15090, env: 8, probes: false, args: ['proxy', 'sidecar'] },
    ],
    init: [{ name: 'istio-init', image: 'docker.io/istio/proxyv2:1.24.2', env: 2, probes: false, args: ['istio-iptables', '-p', '15001'] }],
    configMaps: ['checkout-config', 'istio-ca-root-cert'],
    secrets: ['checkout-stripe'],
  },
  {
    name: 'orders-worker',
    kind: 'ReplicaSet',
    weight: 2,
    containers: [{ name: 'worker', image: 'registry.example.com/shop/orders:1.9.7', env: 6, probes: true, args: ['--queue=orders'] }],
    sidecars: [{ name: 'cloud-sql-proxy', image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1', port: 9801, env: 3, probes: true }],
    secrets: ['orders-sql'],
  },
  {
    name: 'nightly-report',
    kind: 'Job',
    weight: 2,
    containers: [
      { name: 'report', image: 'registry.example.com/analytics/report:2025.05.1', env: 5, probes: false, args: ['--since=24h'] },
      { name: 'log-shipper', image: 'docker.io/fluent/fluent-bit:3.2.4', port: 2020, env: 3, probes: false },
    ],
    configMaps: ['fluent-bit-config'],
    podlife: {
      'role.podlife.dev/report': 'keystone',
      'role.podlife.dev/log-shipper': 'sidecar',
      'stop.podlife.dev/log-shipper': 'signal:TERM',
      'podlife.dev/on-keystone-exit': 'StopContainers',
    },
  },
  {
    name: 'session-cache',
    kind: 'StatefulSet',
    weight: 2,
    containers: [
      { name: 'redis', image: 'docker.io/library/redis:7.4.2', port: 6379, env: 2, probes: true, args: ['redis-server', '/etc/redis/redis.conf'] },
      { name: 'exporter', image: 'docker.io/oliver006/redis_exporter:v1.67.0', port: 9121, env: 2, probes: false },
    ],
    configMaps: ['session-cache-conf'],
  },
  {
    name: 'feature-pipeline',
    kind: 'Job',
    weight: 1,
    containers: [
      { name: 'extract', image: 'registry.example.com/ml/extract:0.33.0', env: 4, probes: false },
      { name: 'transform', image: 'registry.example.com/ml/transform:0.33.0', env: 4, probes: false },
      { name: 'load', image: 'registry.example.com/ml/load:0.33.0', env: 4, probes: false },
      { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.24.2', port: 15090, env: 8, probes: false, args: ['proxy', 'sidecar'] },
    ],
    init: [{ name: 'fetch-model', image: 'docker.io/library/busybox:1.37', env: 1, probes: false, args: ['sh', '-c', 'wget -qO /models/m.bin $MODEL_URL'] }],
    podlife: {
      'role.podlife.dev/load': 'keystone',
      'role.podlife.dev/istio-proxy': 'sidecar',
      'stop.podlife.dev/istio-proxy': 'preset:istio',
      'podlife.dev/completion': 'containers',
    },
  },
  {
    name: 'node-exporter',
    kind: 'DaemonSet',
    weight: 4,
    containers: [{ name: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.8.2', port: 9100, env: 1, probes: true, args: ['--path.rootfs=/host'] }],
  },
  {
    name: 'search-indexer',
    kind: 'ReplicaSet',
    weight: 1,
    containers: [
      { name: 'indexer', image: 'registry.example.com/search/indexer:5.2.0', port: 8081, env: 6, probes: true },
      { name: 'otel-agent', image: 'docker.io/otel/opentelemetry-collector-contrib:0.118.0', port: 4317, env: 4, probes: false },
    ],
    sidecars: [{ name: 'vault-agent', image: 'docker.io/hashicorp/vault:1.18.3', env: 6, probes: false, args: ['agent', '-config=/vault/config'] }],
    configMaps: ['indexer-config', 'otel-agent-config'],
    secrets: ['search-credentials'],
  },
];
const SLOTS = WORKLOADS.flatMap((w) => Array.from({ length: w.weight }, () => w));
/** Every image the workloads run, once. */
export const WORKLOAD_IMAGES: readonly string[] = [...new Set(WORKLOADS.flatMap((w) => [...w.containers, ...(w.init ?? []), ...(w.sidecars ?? [])].map((c) => c.image)))];

const ENV_NAMES = [
  'LOG_LEVEL', 'LOG_FORMAT', 'HTTP_ADDR', 'METRICS_ADDR', 'DATABASE_HOST', 'DATABASE_PORT', 'DATABASE_NAME', 'DATABASE_USER',
  'DATABASE_PASSWORD', 'REDIS_URL', 'CACHE_TTL', 'FEATURE_FLAGS', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES', 'POD_NAME', 'POD_NAMESPACE', 'POD_IP', 'NODE_NAME', 'GOMAXPROCS', 'GOMEMLIMIT', 'JAVA_TOOL_OPTIONS',
  'REGION', 'TENANT', 'QUEUE_PREFETCH', 'REQUEST_TIMEOUT', 'UPSTREAM_URL', 'SENTRY_DSN',
];

function envVar(r: Rand, name: string, k: number): V1EnvVar {
  if (name === 'POD_NAME' || name === 'POD_NAMESPACE' || name === 'POD_IP' || name === 'NODE_NAME') {
    const fieldPath = { POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace', POD_IP: 'status.podIP', NODE_NAME: 'spec.nodeName' }[name];
    return { name, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } } };
  }
  if (name === 'DATABASE_PASSWORD' || name === 'SENTRY_DSN') {
    return { name, valueFrom: { secretKeyRef: { name: 'app-secrets', key: name.toLowerCase().replace(/_/g, '-') } } };
  }
  if (name === 'GOMEMLIMIT') return { name, valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1' } } };
  const values: Record<string, string> = {
    LOG_LEVEL: 'info', LOG_FORMAT: 'json', HTTP_ADDR: ':8080', METRICS_ADDR: ':9090', DATABASE_PORT: '5432',
    CACHE_TTL: '5m', GOMAXPROCS: '2', REQUEST_TIMEOUT: '30s', QUEUE_PREFETCH: '32',
  };
  return { name, value: values[name] ?? `${name.toLowerCase().replace(/_/g, '-')}-${k % 7}:${int(r, 1000, 9999)}` };
}

function container(r: Rand, shape: ContainerShape, volumes: V1VolumeMount[], sidecar: boolean, hardened: boolean): V1Container {
  const offset = int(r, 0, ENV_NAMES.length - 1);
  const env = Array.from({ length: shape.env }, (_, k) => envVar(r, ENV_NAMES[(offset + k) % ENV_NAMES.length] as string, k));
  const c: V1Container = { name: shape.name, image: shape.image };
  if (shape.args) c.args = shape.args;
  if (shape.port !== undefined) c.ports = [{ name: shape.port === 9100 || shape.port > 9000 ? 'metrics' : 'http', containerPort: shape.port, protocol: 'TCP' }];
  if (env.length) c.env = env;
  c.resources = {
    requests: { cpu: pick(r, ['50m', '100m', '250m', '500m']), memory: pick(r, ['64Mi', '128Mi', '256Mi', '1Gi']) },
    limits: { memory: pick(r, ['256Mi', '512Mi', '2Gi']) },
  };
  c.volumeMounts = volumes;
  if (shape.probes && shape.port !== undefined) {
    const probe = { httpGet: { path: '/healthz', port: shape.port, scheme: 'HTTP' }, timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
    c.livenessProbe = { ...probe, initialDelaySeconds: 15 };
    c.readinessProbe = { ...probe, httpGet: { ...probe.httpGet, path: '/readyz' }, periodSeconds: 5 };
  }
  if (sidecar) c.restartPolicy = 'Always';
  c.terminationMessagePath = '/dev/termination-log';
  c.terminationMessagePolicy = 'File';
  c.imagePullPolicy = 'IfNotPresent';
  if (hardened) {
    c.securityContext = {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 10001,
    };
  }
  return c;
}

/** The projected service-account volume every pod gets from admission. */
function apiAccessVolume(name: string): V1Volume {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  };
}

type Phase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

function containerStatus(
  r: Rand,
  c: V1Container,
  phase: Phase,
  startMs: number,
  keystoneDone: boolean,
): V1ContainerStatus {
  const image = c.image ?? '';
  const repo = image.replace(/:[^:/]+$/, '');
  const s: V1ContainerStatus = {
    name: c.name,
    image,
    imageID: `${repo}@sha256:${digest(image)}`,
    ready: phase === 'Running',
    restartCount: 0,
  };
  const started = wire(startMs + int(r, 2_000, 40_000));
  if (phase === 'Pending') {
    s.state = { waiting: { reason: 'ContainerCreating' } };
    s.lastState = {};
    s.started = false;
    s.imageID = '';
    return s;
  }
  s.containerID = `containerd://${hex(r, 64)}`;
  if (phase === 'Running') {
    const crashed = r() < 0.04;
    if (crashed) {
      s.restartCount = int(r, 1, 40);
      s.lastState = {
        terminated: { exitCode: 1, reason: 'Error', startedAt: started, finishedAt: wire(startMs + 60_000), containerID: `containerd://${hex(r, 64)}` },
      };
    } else s.lastState = {};
    s.state = { running: { startedAt: started } };
    s.started = true;
  } else {
    const exitCode = phase === 'Succeeded' || keystoneDone ? 0 : int(r, 1, 137);
    s.state = {
      terminated: {
        exitCode,
        reason: exitCode === 0 ? 'Completed' : exitCode === 137 ? 'OOMKilled' : 'Error',
        startedAt: started,
        finishedAt: wire(startMs + int(r, 60_000, 3_600_000)),
        containerID: s.containerID,
      },
    };
    s.lastState = {};
    s.started = false;
  }
  return s;
}

function conditions(phase: Phase, startMs: number, gates: string[]): V1PodCondition[] {
  const at = (s: number): Date => wire(startMs + s * 1000);
  const ok = phase === 'Running';
  const list: V1PodCondition[] = [
    { type: 'PodReadyToStartContainers', status: phase === 'Pending' ? 'False' : ok ? 'True' : 'False', lastProbeTime: NEVER, lastTransitionTime: at(3) },
    { type: 'Initialized', status: phase === 'Pending' ? 'False' : 'True', lastProbeTime: NEVER, lastTransitionTime: at(5) },
    { type: 'Ready', status: ok ? 'True' : 'False', lastProbeTime: NEVER, lastTransitionTime: at(21) },
    { type: 'ContainersReady', status: ok ? 'True' : 'False', lastProbeTime: NEVER, lastTransitionTime: at(21) },
    { type: 'PodScheduled', status: 'True', lastProbeTime: NEVER, lastTransitionTime: at(0) },
  ];
  if (!ok && phase !== 'Pending') {
    for (const c of list.slice(2, 4)) c.reason = 'PodCompleted';
  }
  if (phase === 'Pending') {
    for (const c of list.slice(1, 4)) {
      c.reason = c.type === 'Initialized' ? 'ContainersNotInitialized' : 'ContainersNotReady';
      c.message = 'containers with incomplete status: [init]';
    }
  }
  for (const gate of gates) list.push({ type: gate, status: ok ? 'True' : 'False', lastProbeTime: NEVER, lastTransitionTime: at(25) });
  return list;
}

/** Server-side apply's field set of a JSON value: object keys as `f:`, keyed list items as `k:`. */
export function fieldSet(value: unknown, listKey?: (item: Record<string, unknown>) => string | undefined): Record<string, unknown> {
  if (Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    for (const item of value) {
      const key = item && typeof item === 'object' ? listKey?.(item as Record<string, unknown>) : undefined;
      if (key === undefined) return {}; // an atomic list is one field
      out[`k:${key}`] = { '.': {}, ...fieldSet(item) };
    }
    return out;
  }
  if (value === null || typeof value !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    const keyed = KEYED_LISTS[k];
    const nested = fieldSet(v, keyed);
    out[`f:${k}`] = v && typeof v === 'object' && !Array.isArray(v) && Object.keys(nested).length ? { '.': {}, ...nested } : nested;
  }
  return out;
}

const byName = (i: Record<string, unknown>): string => JSON.stringify({ name: i.name });
const KEYED_LISTS: Record<string, (item: Record<string, unknown>) => string | undefined> = {
  containers: byName,
  initContainers: byName,
  env: byName,
  volumes: byName,
  ports: (i) => JSON.stringify({ containerPort: i.containerPort, protocol: i.protocol }),
  volumeMounts: (i) => JSON.stringify({ mountPath: i.mountPath }),
  conditions: (i) => JSON.stringify({ type: i.type }),
  podIPs: (i) => JSON.stringify({ ip: i.ip }),
  hostIPs: (i) => JSON.stringify({ ip: i.ip }),
  ownerReferences: (i) => JSON.stringify({ uid: i.uid }),
  addresses: (i) => JSON.stringify({ type: i.type }),
};

export const NAMESPACES = 300;
export const NODES = 5_000;
/** The name and InternalIP of node number `n` (nodes.ts), where the pods that run there point. */
export const nodeName = (n: number): string => `node-${String(n).padStart(4, '0')}`;
export const nodeIP = (n: number): string => `10.0.${n >> 8}.${n & 255}`;

/** Pod number `i` of the simulated cluster. */
export function pod(i: number): V1Pod {
  const r = seededRandom(0x9e3779b1 ^ Math.imul(i + 1, 2654435761));
  const w = SLOTS[i % SLOTS.length] as Workload;
  // Unique for every i < 27^5 (7919 is prime to 27), so no two pods share a key.
  const suffix = base27((i * 7919 + 12_345) % 14_348_907);
  const namespace = `team-${String(i % NAMESPACES).padStart(3, '0')}`;
  const ownerHash = chars(seededRandom(i % 4_096), ALNUM, 10);
  const name =
    w.kind === 'StatefulSet' ? `${w.name}-${Math.floor(i / SLOTS.length)}` :
    w.kind === 'ReplicaSet' ? `${w.name}-${ownerHash}-${suffix}` :
    `${w.name}-${suffix}`;
  const ownerName = w.kind === 'ReplicaSet' ? `${w.name}-${ownerHash}` : w.kind === 'Job' ? `${w.name}-${29_100_000 + (i % 977)}` : w.name;
  const createdMs = BASE_MS + i * 7_000 + int(r, 0, 6_000);
  const startMs = createdMs + int(r, 500, 4_000);
  const job = w.kind === 'Job';
  const roll = r();
  const phase: Phase = roll < 0.03 ? 'Pending' : job ? (roll < 0.55 ? 'Running' : roll < 0.93 ? 'Succeeded' : 'Failed') : roll < 0.995 ? 'Running' : 'Failed';

  const apiVolume = `kube-api-access-${chars(r, ALNUM, 5)}`;
  const volumes: V1Volume[] = [];
  const extraMounts: V1VolumeMount[] = [];
  for (const cm of w.configMaps ?? []) {
    volumes.push({ name: cm, configMap: { name: cm, defaultMode: 420 } });
    extraMounts.push({ name: cm, mountPath: `/etc/${cm}`, readOnly: true });
  }
  for (const s of w.secrets ?? []) {
    volumes.push({ name: s, secret: { secretName: s, defaultMode: 420 } });
    extraMounts.push({ name: s, mountPath: `/var/run/secrets/${s}`, readOnly: true });
  }
  volumes.push({ name: 'tmp', emptyDir: {} });
  volumes.push(apiAccessVolume(apiVolume));
  const mounts = (k: number): V1VolumeMount[] => [
    ...extraMounts.slice(0, 1 + (k % Math.max(1, extraMounts.length))),
    { name: 'tmp', mountPath: '/tmp' },
    { name: apiVolume, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
  ];

  const hardened = w.hardened === true;
  const containers = w.containers.map((s, k) => container(r, s, mounts(k), false, hardened));
  const initContainers = [
    ...(w.init ?? []).map((s) => container(r, s, mounts(0), false, hardened)),
    ...(w.sidecars ?? []).map((s) => container(r, s, mounts(1), true, hardened)),
  ];
  const gates = i % 10 === 3 ? ['example.com/load-balancer-attached'] : [];
  const deleting = r() < 0.01;
  const node = nodeName(i % NODES);
  const podIP = `10.${64 + ((i >> 16) & 63)}.${(i >> 8) & 255}.${i & 255}`;
  const hostIP = nodeIP(i % NODES);

  const labels: Record<string, string> = {
    'app.kubernetes.io/name': w.name,
    'app.kubernetes.io/instance': `${w.name}-${namespace}`,
    'app.kubernetes.io/part-of': pick(r, ['shop', 'analytics', 'search', 'platform']),
    'app.kubernetes.io/version': (w.containers[0]?.image ?? '').split(':').pop() ?? '',
  };
  if (w.kind === 'ReplicaSet') labels['pod-template-hash'] = ownerHash;
  if (w.kind === 'Job') {
    labels['batch.kubernetes.io/job-name'] = ownerName;
    labels['batch.kubernetes.io/controller-uid'] = uuid(seededRandom(i % 977));
  }
  if (w.kind === 'StatefulSet') labels['statefulset.kubernetes.io/pod-name'] = name;
  const annotations: Record<string, string> = {
    'prometheus.io/scrape': 'true',
    'prometheus.io/port': String(w.containers.find((c) => c.port)?.port ?? 9090),
    ...(w.podlife ?? {}),
  };
  if (w.kind === 'ReplicaSet') annotations['kubectl.kubernetes.io/restartedAt'] = stamp(createdMs - 86_400_000);
  if (w.configMaps) annotations['checksum/config'] = hex(seededRandom(i % 31), 64);
  if (w.containers.some((c) => c.name === 'istio-proxy')) {
    annotations['sidecar.istio.io/status'] =
      '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["workload-socket","credential-socket","workload-certs","istio-envoy","istio-data","istio-podinfo","istio-token","istiod-ca-cert"],"imagePullSecrets":null,"revision":"default"}';
  }

  const metadata: V1Pod['metadata'] = {
    name,
    ...(w.kind === 'StatefulSet' ? {} : { generateName: name.slice(0, name.lastIndexOf('-') + 1) }),
    namespace,
    uid: uuid(r),
    resourceVersion: String(1_000_000 + i * 3 + int(r, 0, 2)),
    creationTimestamp: wire(createdMs),
    labels,
    annotations,
    ownerReferences: [
      { apiVersion: w.kind === 'Job' ? 'batch/v1' : 'apps/v1', kind: w.kind, name: ownerName, uid: uuid(seededRandom(10_000 + (i % 4_096))), controller: true, blockOwnerDeletion: true },
    ],
  };
  if (job) metadata.finalizers = ['batch.kubernetes.io/job-tracking'];
  if (deleting) {
    metadata.deletionTimestamp = wire(createdMs + 3_600_000);
    metadata.deletionGracePeriodSeconds = 30;
  }

  const spec: V1Pod['spec'] = {
    volumes,
    ...(initContainers.length ? { initContainers } : {}),
    containers,
    restartPolicy: job ? 'Never' : 'Always',
    terminationGracePeriodSeconds: job ? 60 : 30,
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: w.name,
    serviceAccount: w.name,
    nodeName: phase === 'Pending' && roll < 0.01 ? undefined : node,
    securityContext: hardened ? { fsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } } : {},
    schedulerName: 'default-scheduler',
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    priority: 0,
    enableServiceLinks: true,
    preemptionPolicy: 'PreemptLowerPriority',
  };
  if (w.name === 'storefront') {
    spec.affinity = {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { 'app.kubernetes.io/name': w.name } }, topologyKey: 'kubernetes.io/hostname' } },
        ],
      },
    };
  }
  if (gates.length) spec.readinessGates = gates.map((conditionType) => ({ conditionType }));

  const keystoneDone = phase === 'Running' && job && r() < 0.2;
  const status: V1Pod['status'] = {
    phase,
    conditions: conditions(phase, startMs, gates),
    ...(spec.nodeName ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
    ...(phase === 'Pending' ? {} : { podIP, podIPs: [{ ip: podIP }] }),
    startTime: wire(startMs),
    ...(initContainers.length
      ? { initContainerStatuses: initContainers.map((c) => containerStatus(r, c, phase === 'Pending' ? 'Pending' : c.restartPolicy === 'Always' && phase === 'Running' ? 'Running' : 'Succeeded', startMs, false)) }
      : {}),
    containerStatuses: containers.map((c, k) => containerStatus(r, c, keystoneDone && k === 0 ? 'Succeeded' : phase, startMs, keystoneDone)),
    qosClass: 'Burstable',
  };

  const managedFields: V1ManagedFieldsEntry[] = [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: wire(createdMs),
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': fieldSet({ generateName: metadata.generateName, labels, annotations, ownerReferences: metadata.ownerReferences, finalizers: metadata.finalizers }),
        // What the workload controller wrote: the template, not what admission and the scheduler added.
        'f:spec': fieldSet({ ...spec, volumes: volumes.slice(0, -1), nodeName: undefined, tolerations: undefined, priority: undefined }),
      },
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: wire(startMs + 25_000),
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': fieldSet({ ...status, containerStatuses: {}, initContainerStatuses: status.initContainerStatuses && {}, phase: status.phase }) },
      subresource: 'status',
    },
  ];
  metadata.managedFields = managedFields;
  return { metadata, spec, status };
}
