/**
 * A real, local Kubernetes control plane: etcd, kube-apiserver and, optionally,
 * kube-controller-manager, on free 127.0.0.1 ports.
 *
 * Guarantees:
 * - the binaries are the pinned upstream ones (scripts/control-plane-assets.mjs builds or reuses
 *   them; KUBEBUILDER_ASSETS points elsewhere) and `version` is what the running server's
 *   /version says, not what we hoped to build;
 * - the API server runs with envtest's shape of configuration: a fresh CA per run, client
 *   certificates for identities (admin = O=system:masters), freshly generated service-account
 *   signing keys, RBAC authorization, no endpoint reconciler, advertised on 127.0.0.1;
 * - one deliberate difference from a production cluster: the ServiceAccount admission plugin is
 *   off, because no controller creates each namespace's `default` service account unless the
 *   controller-manager runs, and a test's pods must not depend on that;
 * - `startControlPlane` resolves only once /readyz answers 200; on failure it stops what it started
 *   and the error quotes the failing component's log;
 * - the controller-manager runs the Job, garbage-collector and TTL-after-finished controllers with
 *   its own credentials (a system:masters certificate) and no leader election;
 * - with `scheduler: true`, the real kube-scheduler binds pods (for a real node, see node.ts); the
 *   API server always holds a client certificate the kubelet accepts, for exec, logs and attach;
 * - with `serviceAccounts: true`, pods get service-account tokens as in a production cluster (the
 *   ServiceAccount admission plugin, and the controllers that make `default` accounts, the
 *   `kube-root-ca.crt` ConfigMaps and EndpointSlices); `exposeTo(ip)` lets pods on a real node reach
 *   the API server at `ip` (its serving certificate gains the address, reloaded without a restart,
 *   and a TCP relay bound to `ip` only forwards to the loopback port; TLS stays end to end);
 * - every process and temporary folder is removed by `stop()`, and by processes.ts when the test
 *   process exits or is interrupted without calling it.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, sleep } from '@podlife/core';
import { ensureControlPlaneAssets } from '../../scripts/control-plane-assets.mjs';
import { writeKubeconfig } from './kubeconfig.js';
import { createCertificateAuthority, createServiceAccountKeys, type CertificateAuthority, type IssueOptions, type KeyPairPem } from './pki.js';
import { freePorts } from './ports.js';
import { makeTempDir, removeTempDir, startProcess, type ManagedProcess } from './processes.js';

export interface ControlPlane {
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly client: KubeClient;
  readonly version: string;
  /** etcd's client URL (plain HTTP on loopback). */
  readonly etcdUrl: string;
  /** The cluster CA (it signs the API server, every client and the kubelet's serving certificate). */
  readonly caPem: string;
  issueCertificate(opts: IssueOptions): Promise<KeyPairPem>;
  /** The process ids of every component currently running (for leak checks). */
  pids(): number[];
  kubeconfigFor(user: string, groups?: string[]): Promise<string>;
  restartApiServer(): Promise<void>;
  pauseApiServer(): void;
  resumeApiServer(): void;
  /**
   * Compacts etcd at its current revision: a watch or exact read from any older resourceVersion
   * gets 410 Gone (served by etcd, so with the watch cache off; the cache keeps its own window).
   * One edge is etcd's, not ours: a watch from exactly the revision before the newest one starts
   * at the newest, whose previous value is gone, and the API server answers 500 instead.
   */
  compactEtcd(): Promise<void>;
  /**
   * Makes the API server reachable at `ip` (an address of this host, e.g. a real node's) for pods:
   * resolves once its serving certificate names `ip` and a relay listens there; the port it returns
   * is what pods use as KUBERNETES_SERVICE_PORT. The relay stops with the control plane.
   */
  exposeTo(ip: string): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** The minor of a Kubernetes 1.x version (`v1.37.2` -> 37), for assertions that differ by release. */
export function kubernetesMinor(version: string): number {
  const m = /^v1\.(\d+)\./.exec(version);
  if (!m?.[1]) throw new Error(`not a Kubernetes 1.x version: ${version}`);
  return Number(m[1]);
}

export interface ControlPlaneOptions {
  /** Also run kube-controller-manager (Job, garbage-collector and TTL-after-finished controllers). */
  controllerManager?: boolean;
  /**
   * Also run kube-scheduler, and the node-lifecycle controller in the controller-manager (needed
   * by a real node; the simulated kubelet schedules by itself and does not renew node leases).
   */
  scheduler?: boolean;
  /** The API server's watch cache (default on, as in production). Off, watches go to etcd directly. */
  watchCache?: boolean;
  /**
   * Pods get service-account tokens: the ServiceAccount admission plugin stays on, and the
   * controller-manager (which this implies) also runs the service-account, root-CA publisher and
   * EndpointSlice controllers. Off by default (see the module header).
   */
  serviceAccounts?: boolean;
  /** More kube-controller-manager controllers by name (e.g. `deployment-controller`); implies the controller-manager. */
  moreControllers?: string[];
  /** Extra kube-apiserver flags, appended last (a later flag wins). */
  apiServerArgs?: string[];
  /** Progress lines; default silent. */
  log?: (line: string) => void;
}

const readyTimeoutMs = 90_000;
const controllers = ['job-controller', 'garbage-collector-controller', 'ttl-after-finished-controller'];
const serviceAccountControllers = ['serviceaccount-controller', 'root-ca-certificate-publisher-controller', 'endpointslice-controller'];

interface TlsMaterial {
  ca: string;
  cert: string;
  key: string;
}

function getJson(url: string, tls: TlsMaterial | undefined, timeoutMs = 2_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = tls
      ? https.get(url, { ca: tls.ca, cert: tls.cert, key: tls.key, timeout: timeoutMs, agent: false }, onResponse)
      : http.get(url, { timeout: timeoutMs, agent: false }, onResponse);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}

function postJson(url: string, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) },
      timeout: 10_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`etcd ${url}: HTTP ${res.statusCode}: ${text}`));
        else resolve(JSON.parse(text) as unknown);
      });
    });
    req.on('timeout', () => req.destroy(new Error(`etcd ${url}: no answer within 10 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The subjectAltName of the certificate the server on 127.0.0.1:`port` presents ('' on failure). */
function servedNames(port: number, caPem: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, ca: caPem, servername: 'localhost' }, () => {
      const names = socket.getPeerCertificate().subjectaltname ?? '';
      socket.destroy();
      resolve(names);
    });
    socket.setTimeout(2_000, () => socket.destroy());
    socket.on('error', () => resolve(''));
    socket.on('close', () => resolve(''));
  });
}

/** Polls `url` until it answers 200 (and `accept(body)`), failing fast if the process exits. */
async function waitUntilReady(proc: ManagedProcess, url: string, tls: TlsMaterial | undefined, accept: (body: string) => boolean = () => true): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!proc.running) {
      const info = await proc.exited;
      throw new Error(`${proc.name} exited (${info.signal ?? `code ${info.code}`}) before ${url} was ready; its log ends with:\n${proc.logTail()}`);
    }
    try {
      const res = await getJson(url, tls);
      if (res.status === 200 && accept(res.body)) return;
      last = `HTTP ${res.status}: ${res.body.slice(0, 500)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(100);
  }
  throw new Error(`${proc.name} not ready at ${url} after ${readyTimeoutMs / 1000} s (last: ${last}); its log ends with:\n${proc.logTail()}`);
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const assets = await ensureControlPlaneAssets({ log: (line) => log(line) });
  const bin = (name: string): string => join(assets.dir, name);
  const dir = makeTempDir('podlife-cp-');
  const file = (name: string, content: string): string => {
    const path = join(dir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  };

  const [etcdPort = 0, peerPort = 0, apiPort = 0] = await freePorts(3);
  const server = `https://127.0.0.1:${apiPort}`;
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;

  const ca: CertificateAuthority = await createCertificateAuthority();
  const serving = await ca.issue({ commonName: 'kube-apiserver', server: true });
  const servingIps: string[] = [];
  const relays: { server: net.Server; sockets: Set<net.Socket> }[] = [];
  const admin = await ca.issue({ commonName: 'podlife-admin', organizations: ['system:masters'] });
  const kubeletClient = await ca.issue({ commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'] });
  const sa = createServiceAccountKeys();
  const caPath = file('ca.crt', ca.certPem);
  const saPub = file('sa.pub', sa.publicPem);
  const saKey = file('sa.key', sa.privatePem);
  const kubeconfigPath = writeKubeconfig(join(dir, 'admin.kubeconfig'), {
    server, caPem: ca.certPem, certPem: admin.certPem, keyPem: admin.keyPem, user: 'podlife-admin',
  });
  const adminTls: TlsMaterial = { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem };

  const running: ManagedProcess[] = [];
  let etcd: ManagedProcess | undefined;
  let apiServer: ManagedProcess | undefined;
  let controllerManager: ManagedProcess | undefined;
  let scheduler: ManagedProcess | undefined;
  let stopped = false;

  const apiServerArgs = [
    `--etcd-servers=${etcdUrl}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${apiPort}`,
    '--advertise-address=127.0.0.1',
    `--tls-cert-file=${file('apiserver.crt', serving.certPem)}`,
    `--tls-private-key-file=${file('apiserver.key', serving.keyPem)}`,
    `--client-ca-file=${caPath}`,
    `--cert-dir=${dir}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    `--service-account-issuer=${server}`,
    `--service-account-key-file=${saPub}`,
    `--service-account-signing-key-file=${saKey}`,
    '--authorization-mode=RBAC',
    '--endpoint-reconciler-type=none',
    '--allow-privileged=true',
    ...(opts.serviceAccounts ? [] : ['--disable-admission-plugins=ServiceAccount']),
    `--kubelet-client-certificate=${file('kubelet-client.crt', kubeletClient.certPem)}`,
    `--kubelet-client-key=${file('kubelet-client.key', kubeletClient.keyPem)}`,
    `--kubelet-certificate-authority=${caPath}`,
    '--kubelet-preferred-address-types=InternalIP',
    ...(opts.watchCache === false ? ['--watch-cache=false'] : []),
    ...(opts.apiServerArgs ?? []),
  ];

  const startApiServer = async (): Promise<ManagedProcess> => {
    const proc = startProcess({ name: 'kube-apiserver', command: bin('kube-apiserver'), args: apiServerArgs, logPath: join(dir, 'kube-apiserver.log') });
    running.push(proc);
    await waitUntilReady(proc, `${server}/readyz`, adminTls);
    return proc;
  };

  const stopAll = async (): Promise<void> => {
    // Reverse order of start: clients of the API server first, etcd last.
    for (const proc of [scheduler, controllerManager, apiServer, etcd]) if (proc) await proc.stop();
    for (const proc of running) await proc.stop();
  };

  try {
    etcd = startProcess({
      name: 'etcd',
      command: bin('etcd'),
      args: [
        '--name=default',
        `--data-dir=${join(dir, 'etcd-data')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=default=http://127.0.0.1:${peerPort}`,
        // Test data is disposable: skipping fsync makes etcd fast on shared disks (envtest does the same).
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
      logPath: join(dir, 'etcd.log'),
    });
    running.push(etcd);
    await waitUntilReady(etcd, `${etcdUrl}/health`, undefined, (body) => body.includes('"health":"true"'));
    log(`etcd ready at ${etcdUrl} (${Date.now() - started} ms)`);

    apiServer = await startApiServer();
    log(`kube-apiserver ready at ${server} (${Date.now() - started} ms)`);

    if (opts.controllerManager || opts.serviceAccounts || opts.moreControllers?.length) {
      const kcm = await ca.issue({ commonName: 'system:kube-controller-manager', organizations: ['system:masters'] });
      const kcmKubeconfig = writeKubeconfig(join(dir, 'kube-controller-manager.kubeconfig'), {
        server, caPem: ca.certPem, certPem: kcm.certPem, keyPem: kcm.keyPem, user: 'system:kube-controller-manager',
      });
      controllerManager = startProcess({
        name: 'kube-controller-manager',
        command: bin('kube-controller-manager'),
        args: [
          `--kubeconfig=${kcmKubeconfig}`,
          // A real node registers tainted not-ready; the node-lifecycle controller lifts the taint.
          `--controllers=${[...controllers, ...(opts.scheduler ? ['node-lifecycle-controller'] : []), ...(opts.serviceAccounts ? serviceAccountControllers : []), ...(opts.moreControllers ?? [])].join(',')}`,
          '--use-service-account-credentials=false',
          '--leader-elect=false',
          // No serving endpoint: nothing scrapes it, and it would need a port and certificates.
          '--secure-port=0',
          `--service-account-private-key-file=${saKey}`,
          `--root-ca-file=${caPath}`,
        ],
        logPath: join(dir, 'kube-controller-manager.log'),
      });
      running.push(controllerManager);
      log(`kube-controller-manager started (${controllers.join(', ')}${opts.scheduler ? ', node-lifecycle-controller' : ''})`);
    }

    if (opts.scheduler) {
      const sched = await ca.issue({ commonName: 'system:kube-scheduler', organizations: ['system:masters'] });
      const schedKubeconfig = writeKubeconfig(join(dir, 'kube-scheduler.kubeconfig'), {
        server, caPem: ca.certPem, certPem: sched.certPem, keyPem: sched.keyPem, user: 'system:kube-scheduler',
      });
      const [schedulerPort = 0] = await freePorts(1);
      scheduler = startProcess({
        name: 'kube-scheduler',
        command: bin('kube-scheduler'),
        args: [
          `--kubeconfig=${schedKubeconfig}`,
          `--authentication-kubeconfig=${schedKubeconfig}`,
          `--authorization-kubeconfig=${schedKubeconfig}`,
          '--leader-elect=false',
          '--bind-address=127.0.0.1',
          `--secure-port=${schedulerPort}`,
          `--cert-dir=${join(dir, 'scheduler-certs')}`,
        ],
        logPath: join(dir, 'kube-scheduler.log'),
      });
      running.push(scheduler);
      log('kube-scheduler started');
    }
  } catch (err) {
    await stopAll();
    removeTempDir(dir);
    throw err;
  }

  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  const client = await KubeClient.fromKubeConfig(kubeConfig);
  const versionInfo = await client.get<{ gitVersion: string }>('/version');
  log(`control plane ${versionInfo.gitVersion} up in ${Date.now() - started} ms`);

  return {
    server,
    kubeconfigPath,
    kubeConfig,
    client,
    version: versionInfo.gitVersion,
    etcdUrl,
    caPem: ca.certPem,
    issueCertificate: (o: IssueOptions) => ca.issue(o),
    pids: () => running.filter((p) => p.running).map((p) => p.pid),
    async kubeconfigFor(user: string, groups: string[] = []): Promise<string> {
      const pair = await ca.issue({ commonName: user, organizations: groups });
      const safe = user.replace(/[^A-Za-z0-9_.-]/g, '_');
      return writeKubeconfig(join(dir, `user-${safe}-${Date.now()}.kubeconfig`), {
        server, caPem: ca.certPem, certPem: pair.certPem, keyPem: pair.keyPem, user,
      });
    },
    async restartApiServer(): Promise<void> {
      if (stopped) throw new Error('restartApiServer: the control plane is stopped');
      await apiServer?.stop();
      apiServer = await startApiServer();
    },
    pauseApiServer(): void {
      apiServer?.pause();
    },
    resumeApiServer(): void {
      apiServer?.resume();
    },
    async compactEtcd(): Promise<void> {
      // etcd's JSON gateway: read the current revision, then compact everything before it.
      const status = (await postJson(`${etcdUrl}/v3/maintenance/status`, {})) as { header?: { revision?: string } };
      const revision = status.header?.revision;
      if (!revision) throw new Error(`compactEtcd: etcd status has no revision: ${JSON.stringify(status)}`);
      await postJson(`${etcdUrl}/v3/kv/compaction`, { revision, physical: true });
    },
    async exposeTo(ip: string): Promise<{ host: string; port: number }> {
      if (!servingIps.includes(ip)) {
        servingIps.push(ip);
        const pair = await ca.issue({ commonName: 'kube-apiserver', server: true, ips: servingIps });
        // The key first: the API server reloads the pair when either file changes, and keeps the
        // old one while they do not match.
        writeFileSync(join(dir, 'apiserver.key'), pair.keyPem, { mode: 0o600 });
        writeFileSync(join(dir, 'apiserver.crt'), pair.certPem, { mode: 0o600 });
        const deadline = Date.now() + 90_000;
        while (!(await servedNames(apiPort, ca.certPem)).includes(`IP Address:${ip}`)) {
          if (Date.now() > deadline) throw new Error(`exposeTo(${ip}): the API server still serves a certificate without ${ip} after 90 s`);
          await sleep(200);
        }
      }
      const sockets = new Set<net.Socket>();
      const relay = net.createServer((down) => {
        const up = net.connect(apiPort, '127.0.0.1');
        for (const s of [down, up]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {
            down.destroy();
            up.destroy();
          });
        }
        down.pipe(up).pipe(down);
      });
      await new Promise<void>((resolve, reject) => {
        relay.once('error', reject);
        relay.listen(0, ip, () => resolve());
      });
      relays.push({ server: relay, sockets });
      const address = relay.address();
      if (address === null || typeof address === 'string') throw new Error(`exposeTo(${ip}): the relay has no port`);
      log(`kube-apiserver relayed at ${ip}:${address.port}`);
      return { host: ip, port: address.port };
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      for (const relay of relays) {
        relay.server.close();
        for (const s of relay.sockets) s.destroy();
      }
      client.close();
      await stopAll();
      removeTempDir(dir);
    },
  };
}

let shared: Promise<ControlPlane> | undefined;

/** One control plane (with the controller-manager) per test process, started on first use. */
export function sharedControlPlane(): Promise<ControlPlane> {
  shared ??= startControlPlane({ controllerManager: true });
  return shared;
}

/** Stops the shared control plane if it was started (the global mocha hook calls this). */
export async function stopSharedControlPlane(): Promise<void> {
  if (!shared) return;
  const pending = shared;
  shared = undefined;
  const plane = await pending.catch(() => undefined);
  await plane?.stop();
}
