/**
 * Realistic Nodes for the informer benchmark, as the API server lists them.
 *
 * What they model: a GKE Standard node of a Kubernetes 1.32 cluster (containerd on
 * Container-Optimized OS, private nodes, three zones, node-problem-detector running), as
 * `kubectl get nodes -o json` shows one: ~27 labels (the kubelet's, GKE's cloud.google.com/* and a
 * pool's own), GKE's annotations (instance id, CSI node id, the last-applied labels and taints) and
 * the kubelet's and controller manager's, podCIDR and providerID, taints, InternalIP and Hostname,
 * capacity and allocatable, 12 conditions (the kubelet's four, kube-controller-manager's
 * NetworkUnavailable and node-problem-detector's seven) with their heartbeats, daemonEndpoints,
 * nodeInfo, runtimeHandlers, features, attached persistent disks on some nodes, and `images`: the
 * 30-50 images the node holds, largest first, each with its digest and tag names and its size, as
 * the kubelet reports them (at most 50). `metadata.managedFields` has the six entries of the four
 * managers that write a GKE node, derived from the fields each one writes.
 *
 * Guarantees:
 * - `node(n)` depends on `n` alone, so the server can generate any page on demand;
 * - node `n` is the one pods.ts schedules pods onto (`nodeName(n)`, InternalIP `nodeIP(n)`; pods
 *   use the first `NODES`), and its images are the workloads' (with the pods' digests), GKE's
 *   system images and older tags of the workloads';
 * - taints: two pools of three taint their nodes (one of them twice), 3% of nodes still carry a
 *   readiness.k8s.io/ taint and 1% are cordoned, so nodes carry 0 to 3, about one on average.
 */
import { seededRandom } from '@podlife/testbed';
import type { V1ContainerImage, V1ManagedFieldsEntry, V1Node, V1NodeCondition, V1Taint } from '@kubernetes/client-node';
import { BASE_MS, digest, fieldSet, hex, int, nodeIP, nodeName, pick, uuid, wire, type Rand, WORKLOAD_IMAGES } from './pods.js';

const PROJECT = 'acme-prod';
const REGION = 'us-central1';
const ZONES = ['us-central1-a', 'us-central1-b', 'us-central1-c'];
/** When the bench lists: after the newest pod, so heartbeats are recent. */
const NOW_MS = BASE_MS + 150_000 * 7_000;

interface Pool {
  name: string;
  machine: string;
  cpu: number;
  memoryKi: number;
  spot: boolean;
  labels: Record<string, string>;
  taints: V1Taint[];
}

const POOLS: readonly Pool[] = [
  { name: 'default-pool', machine: 'n2-standard-8', cpu: 8, memoryKi: 32_880_320, spot: false, labels: {}, taints: [] },
  {
    name: 'batch-pool',
    machine: 'n2-highcpu-16',
    cpu: 16,
    memoryKi: 16_373_428,
    spot: true,
    labels: { 'workload.example.com/class': 'batch' },
    taints: [
      { key: 'workload.example.com/class', value: 'batch', effect: 'NoSchedule' },
      { key: 'cloud.google.com/gke-spot', value: 'true', effect: 'NoSchedule' },
    ],
  },
  {
    name: 'memory-pool',
    machine: 'n2-highmem-8',
    cpu: 8,
    memoryKi: 65_837_412,
    spot: false,
    labels: { 'workload.example.com/class': 'stateful' },
    taints: [{ key: 'workload.example.com/class', value: 'stateful', effect: 'NoSchedule' }],
  },
];

const KUBELET_VERSIONS = ['v1.32.2-gke.1297002', 'v1.32.3-gke.1170000'];

/** GKE's own images on every node: [name, size in bytes]. */
const SYSTEM_IMAGES: readonly [string, number][] = [
  ['gke.gcr.io/gke-metrics-agent:1.14.5-gke.0', 91_204_113],
  ['gke.gcr.io/fluent-bit:v1.8.12-gke.38', 95_822_307],
  ['gke.gcr.io/fluent-bit-gke-exporter:v0.28.0-gke.8', 40_911_552],
  ['gke.gcr.io/kube-proxy-amd64:v1.32.2-gke.1297002', 30_477_916],
  ['gke.gcr.io/gcp-compute-persistent-disk-csi-driver:v1.15.4-gke.0', 25_104_981],
  ['gke.gcr.io/csi-node-driver-registrar:v2.9.4-gke.24', 10_981_452],
  ['gke.gcr.io/netd:v0.8.2-gke.0', 35_410_776],
  ['gke.gcr.io/ip-masq-agent:v2.11.0-gke.25', 8_114_203],
  ['gke.gcr.io/k8s-dns-node-cache:1.23.1-gke.8', 30_820_466],
  ['gke.gcr.io/prometheus-to-sd:v0.11.12-gke.33', 19_765_030],
  ['gke.gcr.io/gke-metadata-server:20250211_2300_RC0', 43_208_120],
  ['gke.gcr.io/pause:3.8', 300_150],
];

/** Tags the workloads ran before the current ones: a node keeps them until it garbage-collects images. */
const OLDER_TAGS = ['-rc.1', '-rc.2', '-1', '-hotfix.1'];

/** The same size for the same image on every node. */
const sizeOf = (name: string): number => int(seededRandom(Number.parseInt(digest(name).slice(0, 8), 16)), 4_000_000, 900_000_000);

/** 30-50 images, largest first, each named by digest and by tag, as the kubelet lists them. */
function images(r: Rand): V1ContainerImage[] {
  const held = new Map<string, number>(SYSTEM_IMAGES);
  const wanted = int(r, 30, 50);
  for (const name of WORKLOAD_IMAGES) if (r() < 0.8) held.set(name, sizeOf(name));
  while (held.size < wanted) {
    const name = `${pick(r, WORKLOAD_IMAGES)}${pick(r, OLDER_TAGS)}`;
    held.set(name, sizeOf(name));
  }
  return [...held]
    .sort(([, a], [, b]) => b - a)
    .map(([name, sizeBytes]) => ({ names: [`${name.replace(/:[^:/]+$/, '')}@sha256:${digest(name)}`, name], sizeBytes }));
}

/** node-problem-detector's conditions: [type, reason, message] while nothing is wrong. */
const PROBLEMS: readonly [string, string, string][] = [
  ['FrequentUnregisterNetDevice', 'NoFrequentUnregisterNetDevice', 'node is functioning properly'],
  ['FrequentKubeletRestart', 'NoFrequentKubeletRestart', 'kubelet is functioning properly'],
  ['FrequentDockerRestart', 'NoFrequentDockerRestart', 'docker is functioning properly'],
  ['FrequentContainerdRestart', 'NoFrequentContainerdRestart', 'containerd is functioning properly'],
  ['KernelDeadlock', 'KernelHasNoDeadlock', 'kernel has no deadlock'],
  ['ReadonlyFilesystem', 'FilesystemIsNotReadOnly', 'Filesystem is not read-only'],
  ['CorruptDockerOverlay2', 'NoCorruptDockerOverlay2', 'docker overlay2 is functioning properly'],
];
const PROBLEM_TYPES = PROBLEMS.map(([type]) => type);

function conditions(r: Rand, createdMs: number, ready: boolean): V1NodeCondition[] {
  const heartbeat = wire(NOW_MS - int(r, 0, 40_000));
  const problem = wire(NOW_MS - int(r, 0, 300_000));
  const since = wire(createdMs + int(r, 20_000, 60_000));
  const kubelet = (type: string, status: string, reason: string, message: string): V1NodeCondition => ({ type, status, reason, message, lastHeartbeatTime: heartbeat, lastTransitionTime: since });
  const routed = wire(createdMs + int(r, 5_000, 30_000));
  return [
    ...PROBLEMS.map(([type, reason, message]): V1NodeCondition => ({ type, status: 'False', reason, message, lastHeartbeatTime: problem, lastTransitionTime: since })),
    { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated', message: 'NodeController create implicit route', lastHeartbeatTime: routed, lastTransitionTime: routed },
    kubelet('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    kubelet('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    kubelet('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    ready
      ? kubelet('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status')
      : kubelet('Ready', 'False', 'KubeletNotReady', 'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized'),
  ];
}

function taints(r: Rand, pool: Pool, createdMs: number, starting: boolean, cordoned: boolean): V1Taint[] {
  const list = [...pool.taints];
  if (starting) list.push({ key: pick(r, ['readiness.k8s.io/network-ready', 'readiness.k8s.io/storage-ready']), effect: 'NoSchedule' });
  if (cordoned) list.push({ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: wire(createdMs + 86_400_000) });
  return list;
}

/** Node number `n` of the simulated cluster. */
export function node(n: number): V1Node {
  const r = seededRandom(0x85ebca6b ^ Math.imul(n + 1, 2246822519));
  const pool = POOLS[n % POOLS.length] as Pool;
  const zone = ZONES[Math.floor(n / POOLS.length) % ZONES.length] as string;
  const name = nodeName(n);
  const createdMs = BASE_MS - 30 * 86_400_000 + n * 60_000 + int(r, 0, 50_000);
  const roll = r();
  const starting = roll < 0.03;
  const cordoned = roll > 0.99;
  const family = pool.machine.split('-')[0] as string;
  const version = KUBELET_VERSIONS[n % 7 === 0 ? 1 : 0] as string;

  const gkeLabels: Record<string, string> = {
    'cloud.google.com/gke-boot-disk': 'pd-balanced',
    'cloud.google.com/gke-container-runtime': 'containerd',
    'cloud.google.com/gke-cpu-scaling-level': String(pool.cpu),
    'cloud.google.com/gke-logging-variant': 'DEFAULT',
    'cloud.google.com/gke-max-pods-per-node': '110',
    'cloud.google.com/gke-memory-gb-scaling-level': String(Math.round(pool.memoryKi / 1_048_576)),
    'cloud.google.com/gke-nodepool': pool.name,
    'cloud.google.com/gke-os-distribution': 'cos',
    'cloud.google.com/gke-provisioning': pool.spot ? 'spot' : 'standard',
    ...(pool.spot ? { 'cloud.google.com/gke-spot': 'true' } : {}),
    'cloud.google.com/gke-stack-type': 'IPV4',
    'cloud.google.com/machine-family': family,
    'cloud.google.com/private-node': 'true',
    'iam.gke.io/gke-metadata-server-enabled': 'true',
    ...pool.labels,
  };
  const kubeletLabels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/instance-type': pool.machine,
    'beta.kubernetes.io/os': 'linux',
    'failure-domain.beta.kubernetes.io/region': REGION,
    'failure-domain.beta.kubernetes.io/zone': zone,
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': name,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': pool.machine,
    'topology.gke.io/zone': zone,
    'topology.kubernetes.io/region': REGION,
    'topology.kubernetes.io/zone': zone,
  };
  const gkeAnnotations: Record<string, string> = {
    'container.googleapis.com/instance_id': String(int(r, 1_000_000_000, 9_999_999_999)) + String(int(r, 100_000_000, 999_999_999)),
    'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'pd.csi.storage.gke.io': `projects/${PROJECT}/zones/${zone}/instances/${name}` }),
    'node.gke.io/last-applied-node-labels': Object.entries(gkeLabels).map(([k, v]) => `${k}=${v}`).join(','),
    'node.gke.io/last-applied-node-taints': pool.taints.map((t) => `${t.key}=${t.value}:${t.effect}`).join(','),
  };
  const annotations: Record<string, string> = {
    ...gkeAnnotations,
    'node.alpha.kubernetes.io/ttl': '0',
    'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
  };
  const podCIDR = `10.${128 + (n >> 8)}.${n & 255}.0/24`;
  const spec: V1Node['spec'] = {
    podCIDR,
    podCIDRs: [podCIDR],
    providerID: `gce://${PROJECT}/${zone}/${name}`,
    taints: taints(r, pool, createdMs, starting, cordoned),
    ...(cordoned ? { unschedulable: true } : {}),
  };

  const resources = (cpu: string, memoryKi: number, storage: string): Record<string, string> => ({
    cpu,
    'ephemeral-storage': storage,
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: `${memoryKi}Ki`,
    pods: '110',
  });
  const disks = pool.name === 'memory-pool' ? int(r, 1, 4) : 0;
  const volumes = Array.from({ length: disks }, () => `kubernetes.io/csi/pd.csi.storage.gke.io^projects/${PROJECT}/zones/${zone}/disks/pvc-${uuid(r)}`);
  const status: V1Node['status'] = {
    addresses: [
      { type: 'InternalIP', address: nodeIP(n) },
      { type: 'Hostname', address: name },
    ],
    allocatable: resources(`${pool.cpu * 1000 - 90 - 10 * pool.cpu}m`, Math.round(pool.memoryKi * 0.88), '47060071478'),
    capacity: resources(String(pool.cpu), pool.memoryKi, '98831908Ki'),
    conditions: conditions(r, createdMs, !starting),
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    features: { supplementalGroupsPolicy: true },
    images: images(r),
    nodeInfo: {
      architecture: 'amd64',
      bootID: uuid(r),
      containerRuntimeVersion: 'containerd://1.7.24',
      kernelVersion: '6.6.72+',
      kubeProxyVersion: version,
      kubeletVersion: version,
      machineID: hex(r, 32),
      operatingSystem: 'linux',
      osImage: 'Container-Optimized OS from Google',
      systemUUID: uuid(r),
    },
    runtimeHandlers: [
      { name: '', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
      { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: true } },
    ],
    ...(disks > 0 ? { volumesInUse: volumes, volumesAttached: volumes.map((v) => ({ name: v, devicePath: '' })) } : {}),
  };

  const conditionsOf = (...types: string[]): V1NodeCondition[] => (status.conditions ?? []).filter((c) => types.includes(c.type));
  const entry = (manager: string, ms: number, fields: Record<string, unknown>, subresource?: string): V1ManagedFieldsEntry => ({
    manager,
    operation: 'Update',
    apiVersion: 'v1',
    time: wire(ms),
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
    ...(subresource ? { subresource } : {}),
  });
  const managedFields = [
    entry('kubelet', createdMs, { 'f:metadata': fieldSet({ annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' }, labels: kubeletLabels }) }),
    entry('gcp-controller-manager', createdMs + 4_000, { 'f:metadata': fieldSet({ annotations: gkeAnnotations, labels: gkeLabels }), 'f:spec': fieldSet({ taints: spec.taints }) }),
    entry('kube-controller-manager', createdMs + 2_000, { 'f:metadata': fieldSet({ annotations: { 'node.alpha.kubernetes.io/ttl': '0' } }), 'f:spec': fieldSet({ podCIDR, podCIDRs: spec.podCIDRs }) }),
    entry('kube-controller-manager', createdMs + 9_000, { 'f:status': fieldSet({ conditions: conditionsOf('NetworkUnavailable') }) }, 'status'),
    entry('node-problem-detector', NOW_MS - 300_000, { 'f:status': fieldSet({ conditions: conditionsOf(...PROBLEM_TYPES) }) }, 'status'),
    entry(
      'kubelet',
      NOW_MS - 40_000,
      { 'f:status': fieldSet({ ...status, conditions: conditionsOf('MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready'), volumesInUse: undefined, volumesAttached: undefined }) },
      'status',
    ),
  ];
  return {
    metadata: {
      name,
      uid: uuid(r),
      resourceVersion: String(3_000_000 + n * 5 + int(r, 0, 4)),
      creationTimestamp: wire(createdMs),
      labels: { ...kubeletLabels, ...gkeLabels },
      annotations,
      managedFields,
    },
    spec,
    status,
  };
}
