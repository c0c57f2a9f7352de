/**
 * podlife deployed from deploy/ on the real node, as pods of the image scripts/controller-image.mjs
 * builds (imported into the node's containerd, referenced by digest; the node's registry endpoint
 * is a dead loopback port, so nothing else could run): the objects of deploy/kustomization.yaml
 * in its order (CRD, restricted namespace, RBAC, config, priority class and PDB, the two-replica
 * Deployment and its Service, NetworkPolicy, webhook), the webhook's TLS Secret and caBundle made
 * here from a generated CA as deploy/README.md tells an operator to. Then:
 * - the namespace enforces the restricted Pod Security profile (a privileged pod is refused there)
 *   and admitted both replicas; the Jobs below run in a restricted namespace too;
 * - the webhook converts a sidecar to a native one: the API server reaches it through the Service
 *   (with `--enable-aggregator-routing`, its service resolver dials the EndpointSlice's pod
 *   address, since there is no kube-proxy for the ClusterIP); failurePolicy Ignore would let the
 *   pod through unconverted otherwise;
 * - a Job whose sidecar ignores the end of its main container completes (the leader stops it);
 * - deleting the leader pod hands the Lease to the other replica, which then completes a Job.
 *
 * The same is proven for the Helm chart (deploy/helm/podlife), installed by a real helm with its
 * defaults but for the values below: the chart makes the webhook's certificate itself.
 *
 * What the test changes in deploy/'s objects (for the chart: the values it sets), and why —
 * nothing else:
 * - the container image: `podlife/podlife-controller@sha256:<the built digest>` (same repository,
 *   pinned by digest instead of the tag);
 * - the container env gains KUBERNETES_SERVICE_HOST/PORT, pointing at the node IP where the
 *   control plane relays to the API server: there is no kube-proxy, so the `kubernetes` Service's
 *   ClusterIP leads nowhere here, and a container's own env overrides the kubelet's.
 *
 * @releases newest — deploy/ and the chart on the real node; their schema is checked on every
 *   release by deploy-chart, their RBAC by deploy-rbac.
 * @real-node — podlife's own Deployment runs on it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { V1Container, V1Deployment, V1Job, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { ApiError, resourcePath } from '@podlife/core';
import { devCertificates } from '@podlife/controller';
import { ensureControllerImage, IMAGE_NAME, type ControllerImage } from '../../../scripts/controller-image.mjs';
import { ensureGoTool } from '../../../scripts/go-tools.mjs';
import { containerLog, type ControlPlane, createNamespace, manifestPath, type ManifestRef, nodeLeftovers, type RealNode, roleKey, startControlPlane, startNode, waitFor } from '@podlife/testbed';

const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const chartDir = `${deployDir}helm/podlife`;
const NS = 'podlife-system';
const RESTRICTED = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/enforce-version': 'latest' };

type Manifest = ManifestRef & Record<string, unknown>;

/** The objects `kubectl apply -k deploy/` applies, in the kustomization's order. */
function deployManifests(): Manifest[] {
  const kustomization = parse(readFileSync(`${deployDir}kustomization.yaml`, 'utf8')) as { resources: string[] };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(`${deployDir}${file}`, 'utf8')).map((d) => d.toJS() as Manifest | null).filter((m): m is Manifest => m !== null));
}

const collection = (m: ManifestRef): string => {
  const path = manifestPath(m);
  return path.slice(0, path.lastIndexOf('/'));
};
const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });
const jobsPath = (ns: string, name?: string) => resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns, name });
const leasePath = resourcePath({ group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: NS, name: 'podlife-controller' });
const selector = 'app.kubernetes.io/name=podlife-controller';

/** Runs helm against the control plane with no user configuration; throws with its output when it fails. */
function helm(helmPath: string, kubeconfig: string, args: string[]): string {
  const r = spawnSync(helmPath, ['--kubeconfig', kubeconfig, ...args], {
    encoding: 'utf8',
    env: { ...process.env, HELM_CACHE_HOME: '/nonexistent-helm-cache', HELM_CONFIG_HOME: '/nonexistent-helm-config', HELM_DATA_HOME: '/nonexistent-helm-data' },
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`helm ${args.slice(0, 2).join(' ')} failed (exit ${r.status}): ${r.stderr}`);
  return r.stdout;
}

for (const via of ['deploy/', 'the Helm chart'] as const) {
  describe(`podlife from ${via} on the real node (the controller image, two replicas)`, function () {
    this.timeout(300_000);
    const log = (line: string): void => void process.stderr.write(`      ${line}\n`);
    let cp: ControlPlane | undefined;
    let node: RealNode | undefined;
    let image: ControllerImage;
    let testNs = '';
    let t0 = Date.now();
    const elapsed = (): string => `${((Date.now() - t0) / 1000).toFixed(1)} s`;

    const controllerPods = async (): Promise<V1Pod[]> =>
      (await cp!.client.get<{ items: V1Pod[] }>(podsPath(NS), { labelSelector: selector })).items;
    const holder = async (): Promise<string | undefined> =>
      (await cp!.client.get<{ spec?: { holderIdentity?: string } }>(leasePath).catch(() => undefined))?.spec?.holderIdentity;
    const running = (p: V1Pod): boolean =>
      p.metadata?.deletionTimestamp === undefined && p.status?.phase === 'Running' && (p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);

    /** What a failed wait shows: the pods' states, the namespace's Events, the controllers' last log lines. */
    async function describeNamespace(ns: string): Promise<string> {
      const lines: string[] = [];
      const pods = (await cp!.client.get<{ items: V1Pod[] }>(podsPath(ns)).catch(() => ({ items: [] as V1Pod[] }))).items;
      for (const p of pods) {
        const states = (p.status?.containerStatuses ?? []).map((c) => `${c.name}:${JSON.stringify(c.state)} restarts=${c.restartCount}`);
        lines.push(`pod ${p.metadata?.name}: ${p.status?.phase} ${states.join(' ')}`);
        for (const c of p.status?.containerStatuses ?? []) {
          if (!c.state?.waiting || c.restartCount > 0) {
            const text = await containerLog(cp!.client, ns, p.metadata!.name!, c.name, { previous: c.restartCount > 0 }).catch((e: unknown) => String(e));
            lines.push(`  log ${c.name}: ${text.split('\n').slice(-15).join('\n    ')}`);
          }
        }
      }
      const events = (await cp!.client.get<{ items: { reason?: string; message?: string; involvedObject?: { name?: string } }[] }>(
        resourcePath({ version: 'v1', resource: 'events', namespace: ns })).catch(() => ({ items: [] }))).items;
      for (const e of events.slice(-25)) lines.push(`event ${e.involvedObject?.name} ${e.reason}: ${e.message}`);
      return lines.join('\n');
    }

    before(async function () {
      this.timeout(20 * 60_000);
      t0 = Date.now();
      image = ensureControllerImage({ log });
      log(`image ${image.ref}@${image.digest} (${(image.size / 1048576).toFixed(1)} MiB) at ${elapsed()}`);
      cp = await startControlPlane({ controllerManager: true, scheduler: true, serviceAccounts: true,
        moreControllers: ['deployment-controller', 'replicaset-controller'], apiServerArgs: ['--enable-aggregator-routing=true'] });
      node = await startNode(cp, { importImages: [{ ref: image.ref, tar: image.tar, digest: image.digest }] });
      const api = await cp.exposeTo(node.ip);
      log(`control plane ${cp.version} and node ${node.ip} up; API server relayed at ${api.host}:${api.port} (${elapsed()})`);

      if (via === 'the Helm chart') {
        // The chart makes no Namespace (helm's --create-namespace could not label it restricted).
        await cp.client.create('/api/v1/namespaces', { metadata: { name: NS, labels: RESTRICTED } });
        const helmPath = (await ensureGoTool('helm')).path;
        helm(helmPath, cp.kubeconfigPath, ['install', 'podlife', chartDir, '--namespace', NS,
          '--set', `image.digest=${image.digest}`,
          '--set', 'extraEnv[0].name=KUBERNETES_SERVICE_HOST', '--set-string', `extraEnv[0].value=${api.host}`,
          '--set', 'extraEnv[1].name=KUBERNETES_SERVICE_PORT', '--set-string', `extraEnv[1].value=${api.port}`,
          '--set', `networkPolicy.apiServerCidrs={${node.ip}/32}`]);
      }
      const certs = await devCertificates([`podlife-controller.${NS}.svc`]);
      for (const m of via === 'deploy/' ? deployManifests() : []) {
        if (m.kind === 'Deployment') {
          const spec = (m as unknown as V1Deployment).spec!.template.spec!;
          const c = spec.containers.find((x) => x.name === 'controller')!;
          assert.match(c.image ?? '', new RegExp(`^${IMAGE_NAME}:`), 'deploy/ runs the controller image');
          c.image = `${IMAGE_NAME}@${image.digest}`;
          c.env = [...(c.env ?? []), { name: 'KUBERNETES_SERVICE_HOST', value: api.host }, { name: 'KUBERNETES_SERVICE_PORT', value: String(api.port) }];
        }
        if (m.kind === 'MutatingWebhookConfiguration') {
          for (const w of (m as unknown as { webhooks: { clientConfig: { caBundle?: string } }[] }).webhooks) {
            w.clientConfig.caBundle = Buffer.from(certs.caPem).toString('base64');
          }
        }
        await cp.client.create(collection(m), m);
        if (m.kind === 'Namespace') {
          // What deploy/README.md says to create before the Deployment runs.
          await cp.client.create(resourcePath({ version: 'v1', resource: 'secrets', namespace: NS }), {
            metadata: { name: 'podlife-webhook-tls', namespace: NS },
            type: 'kubernetes.io/tls',
            data: { 'tls.crt': Buffer.from(certs.certPem).toString('base64'), 'tls.key': Buffer.from(certs.keyPem).toString('base64') },
          });
        }
      }
      await waitFor('two ready replicas of the Deployment', async () => {
        const d = await cp!.client.get<V1Deployment>(resourcePath({ group: 'apps', version: 'v1', resource: 'deployments', namespace: NS, name: 'podlife-controller' }));
        return (d.status?.readyReplicas ?? 0) === 2;
      }, { timeoutMs: 90_000, intervalMs: 500 }).catch(async (err: unknown) => {
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n${await describeNamespace(NS)}`);
      });
      await waitFor('a leader', holder, { timeoutMs: 60_000 });
      log(`${via} applied, two replicas ready, ${await holder()} leads (${elapsed()})`);

      testNs = await createNamespace(cp.client, 'e2e', RESTRICTED);
      await waitFor(`the default ServiceAccount in ${testNs}`, () => cp!.client.get(resourcePath({ version: 'v1', resource: 'serviceaccounts', namespace: testNs, name: 'default' })));
    });

    after(async function () {
      this.timeout(120_000);
      const pods = cp && (await controllerPods().catch(() => []));
      if (this.currentTest?.state === 'failed' || pods === undefined) log(`controller pods: ${JSON.stringify(pods?.map((p) => [p.metadata?.name, p.status?.phase]))}`);
      await node?.stop();
      if (node) assert.deepEqual(nodeLeftovers(node), []);
      await cp?.stop();
    });

    const restrictedContext = { runAsUser: 4242, runAsGroup: 4242, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
    const busybox = (name: string, script: string): V1Container => ({
      name, image: node!.images.busybox, imagePullPolicy: 'Never', command: ['sh', '-c', script], securityContext: restrictedContext,
    });
    const podSpec = (containers: V1Container[]): V1PodSpec => ({
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 10,
      securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
      containers,
    });
    // The sidecar exits 0 on TERM (PID 1 of a container ignores it otherwise) and would run for an hour.
    const sidecar = () => busybox('proxy', "trap 'exit 0' TERM; sleep 3600 & wait");
    const app = () => busybox('app', 'sleep 2; exit 0');

    /** A Job whose main container ends while its sidecar runs on: it completes only if podlife stops the sidecar. */
    async function jobCompletes(name: string): Promise<number> {
      const started = Date.now();
      await cp!.client.create(jobsPath(testNs), {
        metadata: { name },
        spec: {
          backoffLimit: 0,
          template: { metadata: { annotations: { [roleKey('proxy')]: 'sidecar' } }, spec: podSpec([app(), sidecar()]) },
        },
      });
      await waitFor(`Job ${name} Complete`, async () => {
        const job = await cp!.client.get<V1Job>(jobsPath(testNs, name));
        if (job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True')) throw new Error(`Job ${name} failed: ${JSON.stringify(job.status)}`);
        return job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
      }, { timeoutMs: 120_000, intervalMs: 250 });
      const [pod] = (await cp!.client.get<{ items: V1Pod[] }>(podsPath(testNs), { labelSelector: `job-name=${name}` })).items;
      const proxy = pod?.status?.containerStatuses?.find((s) => s.name === 'proxy');
      assert.equal(proxy?.state?.terminated?.exitCode, 0, 'the sidecar ended on TERM');
      return Date.now() - started;
    }

    it('runs both replicas from the image by digest in a namespace that enforces the restricted profile', async () => {
      const ns = await cp!.client.get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${NS}`);
      assert.equal(ns.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
      const pods = (await controllerPods()).filter(running);
      assert.equal(pods.length, 2);
      for (const p of pods) {
        assert.equal(p.spec?.containers[0]?.image, `${IMAGE_NAME}@${image.digest}`);
        assert.match(p.status?.containerStatuses?.[0]?.imageID ?? '', new RegExp(`${image.digest}$`));
        assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 0);
      }
      // The profile is enforced there: a privileged pod is refused, so the replicas passed it.
      await assert.rejects(
        cp!.client.create(podsPath(NS), { metadata: { name: 'privileged' }, spec: { containers: [{ name: 'c', image: node!.images.busybox, securityContext: { privileged: true } }] } }, { dryRun: 'All' }),
        (err: unknown) => err instanceof ApiError && err.status === 403 && /violates PodSecurity "restricted/.test(err.message),
      );
    });

    it('converts a sidecar to a native one at admission: the API server reaches the webhook through the Service', async () => {
      const pod = (name: string) => ({
        metadata: { name, labels: { 'podlife.dev/admission': 'enabled' }, annotations: { [roleKey('proxy')]: 'sidecar' } },
        spec: podSpec([busybox('app', 'sleep 1'), sidecar()]),
      });
      const created = await waitFor('a converted pod (the webhook in the admission chain)', async () => {
        const p = await cp!.client.create<V1Pod>(podsPath(testNs), pod(`native-${randomBytes(3).toString('hex')}`), { dryRun: 'All' });
        return p.spec?.initContainers?.length ? p : undefined;
      }, { timeoutMs: 60_000, intervalMs: 1_000 });
      assert.deepEqual(created.spec?.containers.map((c) => c.name), ['app']);
      assert.deepEqual(created.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['proxy', 'Always']]);
      const stored = await cp!.client.create<V1Pod>(podsPath(testNs), pod('native'));
      assert.deepEqual(stored.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['proxy', 'Always']]);
      log(`webhook converted the sidecar (${elapsed()})`);
    });

    it('completes a Job whose sidecar would run on (the leader stops it)', async () => {
      const ms = await jobCompletes('with-sidecar');
      log(`Job with a sidecar complete in ${(ms / 1000).toFixed(1)} s`);
    });

    it('hands leadership over when the leader pod is deleted, and the new leader acts', async () => {
      const before = await holder();
      const pods = (await controllerPods()).filter(running).map((p) => p.metadata!.name!);
      assert.ok(before && pods.includes(before), `the holder ${before} is one of ${pods.join(', ')}`);
      const other = pods.find((p) => p !== before)!;
      const deleted = Date.now();
      await cp!.client.delete(podsPath(NS, before));
      const next = await waitFor('another holder of the Lease', async () => {
        const h = await holder();
        return h && h !== before ? h : undefined;
      }, { timeoutMs: 60_000, intervalMs: 100 });
      const handover = Date.now() - deleted;
      log(`Lease: ${before} -> ${next} in ${(handover / 1000).toFixed(1)} s after the delete`);
      // The replica already running takes over within a retry period when the leader releases the
      // Lease on its way out; a replacement pod could only win a race for an expired one.
      const now = (await controllerPods()).map((p) => p.metadata!.name!);
      assert.ok(now.includes(next) && next !== before, `${next} is a live replica (${now.join(', ')})`);
      if (next !== other) log(`the replacement pod ${next} took the Lease, not ${other}`);
      const ms = await jobCompletes('after-handover');
      log(`Job with a sidecar complete under the new leader in ${(ms / 1000).toFixed(1)} s (${elapsed()})`);
    });
  });
}
