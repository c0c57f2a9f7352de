/**
 * A real Kubernetes node on this host: containerd (with runc and the CNI bridge plugin) and the
 * kubelet, registered with a control plane from control-plane.ts.
 *
 * Guarantees:
 * - every component runs with private folders under one temporary folder: containerd's root,
 *   state, sockets and config, runc's state, the CNI config and IP allocations, the kubelet's root,
 *   pod logs and certificates; the binaries and images come from scripts/node-assets.mjs;
 * - pods get addresses on a bridge this harness creates (10.88.N.0/24, N free on this host) that
 *   also carries the node IP; pods have no default route and nothing is masqueraded or forwarded,
 *   so no pod traffic can leave the machine; every image pull resolves to a loopback endpoint
 *   where nothing listens, so a missing image fails locally with a real ErrImagePull;
 * - `startNode` resolves once the Node is Ready and its test images are imported; it fails with
 *   the failing component's log otherwise, and names any missing prerequisite (root, cgroups,
 *   packages) instead of skipping;
 * - `stop()` leaves nothing behind: no process (containerd's shims and the containers included),
 *   mount, network namespace, interface, log symlink or file outside the temporary folder; the
 *   same cleanup script runs from processes.ts when the test process dies without calling stop().
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { sleep, type KubeClient } from '@podlife/core';
import { ensureNodeAssets, type ImageKey, type NodeAssets } from '../../scripts/node-assets.mjs';
import { startControlPlane, type ControlPlane } from './control-plane.js';
import { freePorts } from './ports.js';
import { makeTempDir, registerCleanupScript, removeTempDir, runRegisteredCleanup, startProcess, type ManagedProcess } from './processes.js';

export interface RealNode {
  readonly name: string;
  /** The temporary folder everything of this node lives in. */
  readonly dir: string;
  /** The bridge the node IP and the pods are on. */
  readonly bridge: string;
  /** The node's InternalIP (the bridge's address). */
  readonly ip: string;
  /** The pods' subnet on the bridge. */
  readonly podSubnet: string;
  readonly kubeletVersion: string;
  /** What the node's containerd reports as its version (`1.6.20~ds1`, `v2.4.2`). */
  readonly containerdVersion: string;
  /** Image references to use with `imagePullPolicy: Never`. */
  readonly images: Record<ImageKey, string>;
  /** containerd's socket (for `ctr -a`). */
  readonly containerdAddress: string;
  /** Container ids containerd knows in the k8s.io namespace (running or not). */
  containerIds(): string[];
  /** Ids of containers whose process is still running, per runc. */
  runningContainerIds(): string[];
  /**
   * containerd's own record of a container (its CRI status), with the nanosecond times the API
   * server's container statuses round to whole seconds; undefined once the container is removed.
   */
  containerTimes(id: string): ContainerTimes | undefined;
  pids(): number[];
  kubeletLogTail(lines?: number): string;
  stop(): Promise<void>;
}

/** Times in milliseconds since the epoch, with the fraction containerd recorded. */
export interface ContainerTimes {
  /** When the runtime finished creating it (before its start). */
  readonly createdAtMs: number;
  readonly startedAtMs: number;
  /** 0 while the container runs. */
  readonly finishedAtMs: number;
  readonly exitCode: number;
}

export interface NodeOptions {
  name?: string;
  /** `--register-with-taints` (e.g. `readiness.k8s.io/network=pending:NoSchedule`). */
  registerWithTaints?: string[];
  labels?: Record<string, string>;
  /**
   * More OCI image archives to import next to the test images (e.g. the controller image). With
   * `digest` (the manifest's), the image is also named `<repository>@<digest>`, as a pull by digest
   * names it: that is the name the kubelet looks up for a pod that references the image by digest.
   */
  importImages?: { ref: string; tar: string; digest?: string }[];
  /** Wait for the Node to be Ready (default true). A node tainted for readiness is still Ready. */
  waitReady?: boolean;
  /**
   * The kubelet's release (`v1.34.4`, `1.34`), when it is not the run's: an older node beside a
   * newer control plane, within the kubelet skew the API server accepts.
   */
  kubernetes?: string;
  /**
   * The runtime: `host` is the host's containerd 1.6 (Debian's package), `v2` the pinned containerd
   * v2 built by scripts/node-assets.mjs, which honours a container's stop signal (KEP-4960;
   * docs/adr/0213). Unset: PODLIFE_NODE_CONTAINERD (`host` or `v2`), else `host`.
   */
  containerd?: 'host' | 'v2';
  /** Kubelet feature gates (`featureGates` of its configuration), e.g. an alpha gate a test needs. */
  featureGates?: Record<string, boolean>;
  log?: (line: string) => void;
}

const readyTimeoutMs = 120_000;

/** The runtime of a node whose options name none: PODLIFE_NODE_CONTAINERD, else the host's. */
function defaultContainerd(): 'host' | 'v2' {
  const raw = (process.env.PODLIFE_NODE_CONTAINERD ?? '').trim();
  if (raw === '' || raw === 'host') return 'host';
  if (raw === 'v2') return 'v2';
  throw new Error(`PODLIFE_NODE_CONTAINERD=${raw} is not a runtime the node knows: 'host' (containerd 1.6, the default) or 'v2'`);
}

/** Why this host cannot run a node, or undefined when it can. */
export function nodePrerequisiteProblem(): string | undefined {
  if (process.platform !== 'linux') return `a real node needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'a real node needs root (containerd, runc, mounts and a bridge)';
  if (!existsSync('/sys/fs/cgroup/memory') && !existsSync('/sys/fs/cgroup/cgroup.controllers')) {
    return 'a real node needs cgroups mounted at /sys/fs/cgroup';
  }
  return undefined;
}

function run(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A 10.88.N.0/24 that no interface on this host uses, and a bridge name free for it. */
function freeSubnet(): { n: number; bridge: string } {
  const used = run('ip', ['-4', '-o', 'addr', 'show']);
  const links = run('ip', ['-o', 'link', 'show']);
  for (let n = 1 + Math.floor(Math.random() * 200); ; n = (n % 250) + 1) {
    const bridge = `plnode${n}`;
    if (!used.includes(`10.88.${n}.`) && !links.includes(` ${bridge}:`) && !links.includes(` ${bridge}@`)) return { n, bridge };
  }
}

const shQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The cleanup script: containers (through runc's own state), the shims that served our
 * containerd socket, mounts under our folder (network namespaces included), our bridge and the
 * kubelet's log symlinks that point into our folder. Idempotent; every step tolerates absence.
 */
function cleanupScript(dir: string, bridge: string, sock: string, runcRoot: string, cgroup: string): string {
  const d = shQuote(dir);
  return [
    '#!/bin/sh',
    `DIR=${d}; SOCK=${shQuote(sock)}; RUNC_ROOT=${shQuote(runcRoot)}; BRIDGE=${shQuote(bridge)}; CGROUP=${shQuote(cgroup)}`,
    // The shim keeps each namespace's containers under a folder of its own (k8s.io for the CRI).
    'for r in "$RUNC_ROOT" "$RUNC_ROOT"/*/; do [ -d "$r" ] || continue; for id in $(runc --root "$r" list -q 2>/dev/null); do runc --root "$r" delete --force "$id" >/dev/null 2>&1; done; done',
    // A shim is ours when its command line names our socket (a path under our folder).
    'for p in /proc/[0-9]*; do',
    '  if tr "\\000" "\\n" < "$p/cmdline" 2>/dev/null | grep -qxF -- "$SOCK"; then kill -9 "${p#/proc/}" 2>/dev/null; fi',
    'done',
    // Deepest mounts first; the field is octal-escaped in mountinfo, and our paths have no spaces.
    'for m in $(awk \'{print $5}\' /proc/self/mountinfo | grep -F -- "$DIR/" | sort -r); do umount -l "$m" 2>/dev/null; done',
    'ip link delete "$BRIDGE" 2>/dev/null',
    // Whatever still runs in our cgroups (a container whose shim was killed) goes, then the cgroups.
    'for h in /sys/fs/cgroup/*/; do [ -d "$h$CGROUP" ] || continue; for f in $(find "$h$CGROUP" -name cgroup.procs); do for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null; done; done; done',
    'for h in /sys/fs/cgroup/*/; do [ -d "$h$CGROUP" ] || continue; for i in 1 2 3 4 5 6 7 8 9 10; do find "$h$CGROUP" -depth -type d -exec rmdir {} \\; 2>/dev/null; [ -d "$h$CGROUP" ] || break; sleep 0.2; done; done',
    'for l in /var/log/containers/*.log; do case "$(readlink "$l" 2>/dev/null)" in "$DIR"/*) rm -f "$l";; esac; done',
    'exit 0',
    '',
  ].join('\n');
}

export async function startNode(cp: ControlPlane, opts: NodeOptions = {}): Promise<RealNode> {
  const problem = nodePrerequisiteProblem();
  if (problem) throw new Error(problem);
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const assets: NodeAssets = await ensureNodeAssets({ log, ...(opts.kubernetes ? { kubernetes: opts.kubernetes } : {}), containerd: opts.containerd ?? defaultContainerd() });
  const containerdVersion = run(assets.containerd, ['--version']).trim().split(/\s+/)[2] ?? 'unknown';
  const name = opts.name ?? 'node-1';
  // Short: unix socket paths are limited to 107 bytes.
  const dir = makeTempDir('plnode-');
  const path = (...p: string[]): string => join(dir, ...p);
  for (const sub of ['containerd', 'state', 'runc', 'cni/conf', 'cni/ipam', 'certs.d/_default', 'kubelet', 'pod-logs']) {
    mkdirSync(path(sub), { recursive: true });
  }
  const sock = path('containerd.sock');
  const runcRoot = path('runc');
  // Another run may take the same subnet between the look and the creation: then try another.
  let picked: { n: number; bridge: string } | undefined;
  for (let attempt = 0; picked === undefined; attempt++) {
    const candidate = freeSubnet();
    try {
      run('ip', ['link', 'add', 'name', candidate.bridge, 'type', 'bridge']);
      picked = candidate;
    } catch (err) {
      if (attempt >= 5) throw err;
    }
  }
  const { n, bridge } = picked;
  const ip = `10.88.${n}.1`;
  const podSubnet = `10.88.${n}.0/24`;
  // The pods' cgroups live under one of ours in every hierarchy, so that they can be found and removed.
  const cgroup = basename(dir);
  const cleanup = path('cleanup.sh');
  writeFileSync(cleanup, cleanupScript(dir, bridge, sock, runcRoot, cgroup), { mode: 0o700 });
  registerCleanupScript(cleanup);

  const procs: ManagedProcess[] = [];
  let stopped = false;
  const stopAll = async (): Promise<void> => {
    for (const proc of [...procs].reverse()) await proc.stop(5_000);
    runRegisteredCleanup(cleanup);
    removeTempDir(dir);
  };

  try {
    // The bridge carries the node IP; CNI attaches pods to it without adding a gateway address.
    run('ip', ['addr', 'add', `${ip}/24`, 'dev', bridge]);
    run('ip', ['link', 'set', bridge, 'up']);

    createCgroup(cgroup);
    writeFileSync(path('cni/conf/10-podlife.conflist'), JSON.stringify({
      cniVersion: '1.0.0',
      name: 'podlife-test',
      plugins: [{
        type: 'bridge',
        bridge,
        isGateway: false,
        isDefaultGateway: false,
        ipMasq: false,
        hairpinMode: true,
        ipam: { type: 'host-local', ranges: [[{ subnet: podSubnet, rangeStart: `10.88.${n}.10` }]], routes: [], dataDir: path('cni/ipam') },
      }],
    }, null, 2));
    // Every registry resolves to a loopback port where nothing listens.
    writeFileSync(path('certs.d/_default/hosts.toml'), 'server = "http://127.0.0.1:9"\n\n[host."http://127.0.0.1:9"]\n  capabilities = ["pull", "resolve"]\n');
    writeFileSync(path('containerd.toml'), containerdConfig(assets, {
      root: path('containerd'), state: path('state'), sock, ttrpc: path('containerd-ttrpc.sock'), runcRoot, cniConfDir: path('cni/conf'), certsDir: path('certs.d'),
    }));

    const containerd = startProcess({
      name: 'containerd', command: assets.containerd, args: ['--config', path('containerd.toml'), '--log-level', 'info'], logPath: path('containerd.log'),
      // Its shim (named in the configuration too) first on PATH, so containerd never runs another release's.
      env: { ...process.env, PATH: `${dirname(assets.containerdShim)}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    });
    procs.push(containerd);
    await waitFor(containerd, () => existsSync(sock), 'containerd socket');
    for (const [key, image] of Object.entries(assets.images)) {
      run(assets.ctr, ['-a', sock, '-n', 'k8s.io', 'images', 'import', '--no-unpack', image.tar]);
      log(`imported ${key} (${image.ref})`);
    }
    for (const image of opts.importImages ?? []) {
      run(assets.ctr, ['-a', sock, '-n', 'k8s.io', 'images', 'import', '--no-unpack', image.tar]);
      if (image.digest) {
        const named = run(assets.ctr, ['-a', sock, '-n', 'k8s.io', 'images', 'list', '-q']).split('\n')
          .find((n) => n === image.ref || n.endsWith(`/${image.ref}`));
        if (!named) throw new Error(`importing ${image.tar} named no image ${image.ref}`);
        run(assets.ctr, ['-a', sock, '-n', 'k8s.io', 'images', 'tag', named, `${named.slice(0, named.lastIndexOf(':'))}@${image.digest}`]);
      }
      log(`imported ${image.ref}${image.digest ? `@${image.digest}` : ''}`);
    }
    log(`containerd ready (${Date.now() - started} ms)`);

    const [kubeletPort = 0, healthzPort = 0] = await freePorts(2);
    writeFileSync(path('ca.crt'), cp.caPem);
    const serving = await cp.issueCertificate({ commonName: name, ips: [ip, '127.0.0.1'], server: true });
    writeFileSync(path('kubelet.crt'), serving.certPem);
    writeFileSync(path('kubelet.key'), serving.keyPem, { mode: 0o600 });
    const kubeconfig = await cp.kubeconfigFor(`system:node:${name}`, ['system:nodes', 'system:masters']);
    writeFileSync(path('resolv.conf'), '');
    writeFileSync(path('kubelet.yaml'), JSON.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // This host: cgroup v1, cgroupfs, no QoS hierarchy, no swap accounting.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupsPerQOS: false,
      cgroupRoot: `/${cgroup}`,
      enforceNodeAllocatable: [],
      failSwapOn: false,
      address: ip,
      port: kubeletPort,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort,
      tlsCertFile: path('kubelet.crt'),
      tlsPrivateKeyFile: path('kubelet.key'),
      authentication: { anonymous: { enabled: false }, webhook: { enabled: false }, x509: { clientCAFile: path('ca.crt') } },
      authorization: { mode: 'AlwaysAllow' },
      // Pods get a resolver that answers nothing rather than a warning about a missing one.
      clusterDNS: [ip],
      clusterDomain: 'cluster.local',
      resolvConf: path('resolv.conf'),
      podLogsDir: path('pod-logs'),
      containerRuntimeEndpoint: `unix://${sock}`,
      imageServiceEndpoint: `unix://${sock}`,
      // The test images are imported, never pulled: never collect them, never evict for disk.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%' },
      serializeImagePulls: false,
      nodeStatusUpdateFrequency: '2s',
      nodeStatusReportFrequency: '10s',
      syncFrequency: '5s',
      fileCheckFrequency: '5s',
      shutdownGracePeriod: '0s',
      registerNode: true,
      registerWithTaints: (opts.registerWithTaints ?? []).map(parseTaint),
      localStorageCapacityIsolation: false,
      protectKernelDefaults: false,
      maxPods: 110,
      ...(opts.featureGates ? { featureGates: opts.featureGates } : {}),
    }, null, 2));

    const labels = Object.entries(opts.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
    const kubelet = startProcess({
      // A PATH without iptables: the kubelet then leaves the host's netfilter tables alone (it
      // would add KUBE-FIREWALL and canary chains that outlive the node). Nothing here needs them:
      // pods are on a bridge without NAT, and there is no kube-proxy.
      env: { ...process.env, PATH: kubeletPath(path('bin')) },
      name: 'kubelet',
      command: assets.kubelet,
      args: [
        `--config=${path('kubelet.yaml')}`,
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${name}`,
        `--node-ip=${ip}`,
        `--root-dir=${path('kubelet')}`,
        `--cert-dir=${path('kubelet', 'pki')}`,
        ...(labels ? [`--node-labels=${labels}`] : []),
        '--v=2',
      ],
      logPath: path('kubelet.log'),
    });
    procs.push(kubelet);

    let node: V1Node | undefined;
    await waitFor(kubelet, async () => {
      node = await cp.client.get<V1Node>(`/api/v1/nodes/${name}`).catch(() => undefined);
      if (!node) return false;
      if (opts.waitReady === false) return true;
      return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    }, `Node ${name} Ready`);
    const kubeletVersion = node?.status?.nodeInfo?.kubeletVersion ?? 'unknown';
    log(`node ${name} (${ip}, kubelet ${kubeletVersion}, containerd ${containerdVersion}) ready in ${Date.now() - started} ms`);

    const ctr = (args: string[]): string => run(assets.ctr, ['-a', sock, '-n', 'k8s.io', ...args]);
    return {
      name,
      dir,
      bridge,
      ip,
      podSubnet,
      kubeletVersion,
      containerdVersion,
      images: Object.fromEntries(Object.entries(assets.images).map(([k, v]) => [k, v.ref])) as Record<ImageKey, string>,
      containerdAddress: sock,
      containerIds: () => ctr(['containers', 'list', '-q']).split('\n').filter(Boolean),
      runningContainerIds: () => {
        const out = run(assets.runc, ['--root', join(runcRoot, 'k8s.io'), 'list', '--format', 'json']).trim();
        const list = out && out !== 'null' ? (JSON.parse(out) as { id: string; status: string }[]) : [];
        return list.filter((c) => c.status === 'running').map((c) => c.id);
      },
      containerTimes: (id) => readContainerTimes(path('containerd', 'io.containerd.grpc.v1.cri', 'containers', id, 'status')),
      pids: () => procs.filter((p) => p.running).map((p) => p.pid),
      kubeletLogTail: (lines = 40) => kubelet.logTail(lines),
      async stop(): Promise<void> {
        if (stopped) return;
        stopped = true;
        await stopAll();
      },
    };
  } catch (err) {
    stopped = true;
    await stopAll();
    throw err;
  }
}

interface ContainerdPaths {
  root: string;
  state: string;
  sock: string;
  ttrpc: string;
  runcRoot: string;
  cniConfDir: string;
  certsDir: string;
}

/**
 * containerd's configuration, in the form its release reads: version 2 for 1.6, version 3 for v2
 * (whose CRI plugin is split into `io.containerd.cri.v1.images` and `io.containerd.cri.v1.runtime`).
 * Both say the same: cgroupfs, runc with a private state folder, the test CNI bridge, registries
 * resolved to a dead loopback port, and only a lowered oom_score_adj (root here lacks CAP_SYS_RESOURCE).
 */
function containerdConfig(assets: NodeAssets, p: ContainerdPaths): string {
  const common = ['', `root = "${p.root}"`, `state = "${p.state}"`, '[grpc]', `  address = "${p.sock}"`, '[ttrpc]', `  address = "${p.ttrpc}"`, '[metrics]', '  address = ""'];
  const runcOptions = ['        SystemdCgroup = false', `        BinaryName = "${assets.runc}"`, `        Root = "${p.runcRoot}"`];
  if (assets.containerdConfigVersion === 2) {
    return ['version = 2', ...common,
      '[plugins."io.containerd.grpc.v1.cri"]',
      `  sandbox_image = "${assets.images.pause.ref}"`,
      '  restrict_oom_score_adj = true',
      '  netns_mounts_under_state_dir = true',
      '  disable_apparmor = true',
      '  stream_server_address = "127.0.0.1"',
      '  stream_server_port = "0"',
      '  [plugins."io.containerd.grpc.v1.cri".containerd]',
      '    snapshotter = "overlayfs"',
      '    default_runtime_name = "runc"',
      '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
      '      runtime_type = "io.containerd.runc.v2"',
      '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
      ...runcOptions,
      '  [plugins."io.containerd.grpc.v1.cri".cni]',
      `    bin_dir = "${assets.cniBinDir}"`,
      `    conf_dir = "${p.cniConfDir}"`,
      '    max_conf_num = 1',
      '  [plugins."io.containerd.grpc.v1.cri".registry]',
      `    config_path = "${p.certsDir}"`,
      ''].join('\n');
  }
  return ['version = 3',
    // NRI would listen on one host-wide socket (/var/run/nri): nodes side by side must not share it.
    "disabled_plugins = ['io.containerd.nri.v1.nri']", ...common,
    "[plugins.'io.containerd.cri.v1.images']",
    '  snapshotter = "overlayfs"',
    "  [plugins.'io.containerd.cri.v1.images'.pinned_images]",
    `    sandbox = "${assets.images.pause.ref}"`,
    "  [plugins.'io.containerd.cri.v1.images'.registry]",
    `    config_path = "${p.certsDir}"`,
    "[plugins.'io.containerd.cri.v1.runtime']",
    '  restrict_oom_score_adj = true',
    '  netns_mounts_under_state_dir = true',
    '  disable_apparmor = true',
    "  [plugins.'io.containerd.cri.v1.runtime'.containerd]",
    '    default_runtime_name = "runc"',
    "    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]",
    '      runtime_type = "io.containerd.runc.v2"',
    `      runtime_path = "${assets.containerdShim}"`,
    "      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]",
    ...runcOptions,
    "  [plugins.'io.containerd.cri.v1.runtime'.cni]",
    `    bin_dirs = ["${assets.cniBinDir}"]`,
    `    conf_dir = "${p.cniConfDir}"`,
    '    max_conf_num = 1',
    "[plugins.'io.containerd.grpc.v1.cri']",
    '  stream_server_address = "127.0.0.1"',
    '  stream_server_port = "0"',
    ''].join('\n');
}

/** Creates /<name> in every cgroup v1 hierarchy (cpuset needs its cpus and mems filled in). */
function createCgroup(name: string): void {
  const root = '/sys/fs/cgroup';
  for (const h of readdirSync(root)) {
    const hierarchy = join(root, h);
    if (h === 'unified' || !existsSync(join(hierarchy, 'cgroup.procs'))) continue;
    mkdirSync(join(hierarchy, name), { recursive: true });
    if (h === 'cpuset') {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(hierarchy, name, f), readFileSync(join(hierarchy, f)));
    }
  }
}

/** The host tools the kubelet runs (mounts, disk usage, namespaces), linked into a folder of ours. */
function kubeletPath(binDir: string): string {
  mkdirSync(binDir, { recursive: true });
  const tools = ['mount', 'umount', 'findmnt', 'losetup', 'blkid', 'nsenter', 'du', 'find', 'nice', 'ionice', 'sh', 'cat', 'ls', 'test'];
  for (const tool of tools) {
    const found = ['/usr/bin', '/usr/sbin', '/bin', '/sbin'].map((d) => join(d, tool)).find((p) => existsSync(p));
    if (found && !existsSync(join(binDir, tool))) symlinkSync(found, join(binDir, tool));
  }
  return binDir;
}

/** containerd's CRI status file (the same in 1.6 and v2): `{"Version":"v1",...,"StartedAt":<ns>,"FinishedAt":<ns>,"ExitCode":n}`. */
function readContainerTimes(file: string): ContainerTimes | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  // Nanoseconds since the epoch exceed a double's exact range: read the digits, not the number.
  const ns = (field: string): number => {
    const digits = new RegExp(`"${field}":(\\d+)`).exec(text)?.[1];
    return digits ? Number(BigInt(digits) / 1000n) / 1000 : 0;
  };
  const exitCode = /"ExitCode":(-?\d+)/.exec(text)?.[1];
  return { createdAtMs: ns('CreatedAt'), startedAtMs: ns('StartedAt'), finishedAtMs: ns('FinishedAt'), exitCode: Number(exitCode ?? 0) };
}

function parseTaint(spec: string): { key: string; value?: string; effect: string } {
  const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(spec);
  if (!m?.[1] || !m[3]) throw new Error(`taint ${JSON.stringify(spec)} is not key[=value]:Effect`);
  return { key: m[1], ...(m[2] !== undefined ? { value: m[2] } : {}), effect: m[3] };
}

async function waitFor(proc: ManagedProcess, ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (!proc.running) throw new Error(`${proc.name} exited before ${what}; its log ends with:\n${proc.logTail(40)}`);
    if (await ok()) return;
    await sleep(100);
  }
  throw new Error(`no ${what} after ${readyTimeoutMs / 1000} s; ${proc.name}'s log ends with:\n${proc.logTail(40)}`);
}

export interface RealCluster {
  readonly cp: ControlPlane;
  readonly node: RealNode;
}

let shared: Promise<RealCluster> | undefined;

/**
 * One real cluster per test process, started on first use: its own control plane (with the
 * controller-manager and kube-scheduler, which must not meet the simulated kubelet's nodes) and
 * one node. The global mocha hook stops it.
 */
export function sharedRealCluster(): Promise<RealCluster> {
  shared ??= (async () => {
    const cp = await startControlPlane({ controllerManager: true, scheduler: true });
    try {
      return { cp, node: await startNode(cp) };
    } catch (err) {
      await cp.stop();
      throw err;
    }
  })();
  return shared;
}

export async function stopSharedRealCluster(): Promise<void> {
  if (!shared) return;
  const pending = shared;
  shared = undefined;
  const cluster = await pending.catch(() => undefined);
  await cluster?.node.stop();
  await cluster?.cp.stop();
}

/**
 * What a node left on this host: processes whose command line or executable lives in its folder
 * or names it (containerd, shims, kubelet, containers' processes), mounts under it, its bridge,
 * the folder itself, and kubelet log links into it. Empty when it is all gone.
 */
export function nodeLeftovers(node: { dir: string; bridge: string }): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const cgroups = readFileSync(`/proc/${entry}/cgroup`, 'utf8');
      if (cmdline.includes(node.dir) || cgroups.includes(`/${basename(node.dir)}`)) found.push(`process ${entry}: ${cmdline.trim().slice(0, 120)}`);
    } catch {
      // The process ended while we looked.
    }
  }
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const mountPoint = line.split(' ')[4];
    if (mountPoint?.startsWith(`${node.dir}/`) || mountPoint === node.dir) found.push(`mount ${mountPoint}`);
  }
  if (existsSync(`/sys/class/net/${node.bridge}`)) found.push(`interface ${node.bridge}`);
  for (const h of readdirSync('/sys/fs/cgroup')) {
    if (existsSync(join('/sys/fs/cgroup', h, basename(node.dir)))) found.push(`cgroup ${h}/${basename(node.dir)}`);
  }
  if (existsSync(node.dir)) found.push(`folder ${node.dir}`);
  if (existsSync('/var/log/containers')) {
    for (const link of readdirSync('/var/log/containers')) {
      try {
        if (readlinkSync(join('/var/log/containers', link)).startsWith(`${node.dir}/`)) found.push(`log link /var/log/containers/${link}`);
      } catch {
        // Not a link, or gone.
      }
    }
  }
  return found;
}

/** A container's log as the kubelet serves it (through the API server, pods/log). */
export async function containerLog(client: KubeClient, namespace: string, pod: string, container: string, opts: { previous?: boolean } = {}): Promise<string> {
  const res = await client.stream({
    path: `/api/v1/namespaces/${namespace}/pods/${pod}/log`,
    query: { container, ...(opts.previous ? { previous: 'true' } : {}) },
    timeoutMs: 10_000,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
