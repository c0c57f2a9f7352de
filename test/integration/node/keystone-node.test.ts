/**
 * Keystone end to end on a real node: the podlife controller against a real control plane
 * (kube-apiserver, etcd, kube-scheduler, the Job and node-lifecycle controllers) and a real
 * kubelet with containerd and runc running real containers (test/support/node.ts).
 *
 * Every scenario ends with the containers really gone from the node (runc no longer runs them;
 * where the pod is deleted, containerd no longer has them), not only reported terminated.
 * Stop times (the triggering main container's exit to the last stopped container's exit) are
 * read from the containers' own clock lines (`/proc/uptime`, 10 ms) where the pod outlives its
 * containers, else from `finishedAt` (1 s) and the moment runc stopped running them; they are
 * printed after the suite.
 *
 * The simulated kubelet remains only in api/keystone-kubelet-skew.test.ts, for kubelet version skew (a node
 * with kubelet < 1.29 must keep `native-sidecars: auto` from converting), which one real node
 * cannot show.
 *
 * @releases every — the fallbacks (exec, ephemeral container, deletion) go through each release's
 *   kubelet, whose handling of ephemeral containers and grace periods is its own.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Container, V1ContainerStatus, V1Job, V1Pod } from '@kubernetes/client-node';
import { createLogger, isNotFound, resourcePath } from '@podlife/core';
import { ControllerApp, type ControllerConfig, type ControllerFlags } from '@podlife/controller';
import { COMPLETION, containerLog, type ControlPlane, createNamespace, keystoneFlags, localWebhook, type LocalWebhook, ON_KEYSTONE_EXIT, podOf, podTemplate, type PodTemplate, type PodTemplateOptions, type RealNode, sharedRealCluster, stopKey, waitFor } from '@podlife/testbed';

const flags = keystoneFlags;

/** Prints the host's uptime (10 ms steps, one clock for every container) tagged with the container's name; no single quotes (it goes into traps). */
const clock = (name: string) => `read -r up idle < /proc/uptime; echo "t ${name} $up"`;

/** A shell test that something in the pod's network namespace listens on a TCP port (busybox nc has no -z). */
const listening = (port: number) => `grep -q ":${port.toString(16).toUpperCase().padStart(4, '0')} [0-9A-F]*:0000 0A" /proc/net/tcp /proc/net/tcp6`;

/** A busybox main container: waits until the named sidecars are ready (their trap is set), runs, exits. */
function main(name: string, opts: { waitFor?: string[]; ports?: number[]; runS?: number; exit?: number } = {}): V1Container {
  const waits = [
    ...(opts.waitFor ?? []).map((f) => `until [ -e /sync/${f} ]; do sleep 0.1; done;`),
    ...(opts.ports ?? []).map((p) => `until ${listening(p)}; do sleep 0.1; done;`),
  ].join(' ');
  return busybox(name, `${waits} sleep ${opts.runS ?? 1}; ${clock(name)}; exit ${opts.exit ?? 0}`);
}

/** A busybox sidecar whose PID 1 (sh) handles TERM: it takes `delayS` and exits `exit`. */
function sidecar(name: string, opts: { exit?: number; delayS?: number; user?: number } = {}): V1Container {
  const onTerm = `${opts.delayS ? `sleep ${opts.delayS}; ` : ''}${clock(name)}; exit ${opts.exit ?? 0}`;
  return busybox(name, `trap '${onTerm}' TERM; touch /sync/${name}; sleep 3600 & wait`, opts.user);
}

let images: RealNode['images'];

function busybox(name: string, script: string, user?: number): V1Container {
  return {
    name,
    image: images.busybox,
    imagePullPolicy: 'Never',
    command: ['sh', '-c', script],
    volumeMounts: [{ name: 'sync', mountPath: '/sync' }],
    ...(user !== undefined ? { securityContext: { runAsUser: user, runAsGroup: user } } : {}),
  };
}

/** The suite's pods: a `sync` volume the busybox scripts meet in, no service links. */
function syncedPod(opts: Omit<PodTemplateOptions, 'spec'> & { shareProcessNamespace?: boolean }): PodTemplate {
  const { shareProcessNamespace, ...rest } = opts;
  return podTemplate({
    ...rest,
    spec: { enableServiceLinks: false, ...(shareProcessNamespace ? { shareProcessNamespace: true } : {}), volumes: [{ name: 'sync', emptyDir: {} }] },
  });
}
type Template = PodTemplate;

const podsPath = (ns: string, name?: string) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name });
const jobsPath = (ns: string, name?: string) => resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace: ns, name });
const allStatuses = (p: V1Pod): V1ContainerStatus[] => [
  ...(p.status?.initContainerStatuses ?? []),
  ...(p.status?.containerStatuses ?? []),
  ...(p.status?.ephemeralContainerStatuses ?? []),
];
const statusOf = (p: V1Pod, c: string) => allStatuses(p).find((s) => s.name === c);
const terminated = (p: V1Pod, c: string) => statusOf(p, c)?.state?.terminated;
const finishedAt = (p: V1Pod, c: string) => Date.parse(String(terminated(p, c)?.finishedAt));
const condition = (p: V1Pod, type: string) => p.status?.conditions?.find((c) => c.type === type);
const ephemeralNames = (p: V1Pod) => (p.spec?.ephemeralContainers ?? []).map((e) => e.name);
const containerIds = (p: V1Pod) => allStatuses(p).map((s) => s.containerID?.replace(/^containerd:\/\//, '')).filter((id): id is string => !!id);

function describePod(p: V1Pod | undefined): string {
  if (!p) return 'pod gone';
  const states = allStatuses(p).map((c) => `${c.name}:${Object.keys(c.state ?? {}).join()}${c.state?.terminated ? `(${c.state.terminated.exitCode})` : ''}`);
  return [
    `phase: ${p.status?.phase} deleting: ${p.metadata?.deletionTimestamp ?? 'no'}`,
    `conditions: ${JSON.stringify(p.status?.conditions?.filter((c) => c.type.startsWith('podlife')))}`,
    `states: ${states.join(' ')}`,
    `ephemeral: ${ephemeralNames(p).join()}`,
  ].join('\n');
}

/** Measured stop times, printed after the suite. */
const measured: string[] = [];

describe('keystone on a real node (kubelet, containerd, runc)', function () {
  this.timeout(180_000);
  let cp: ControlPlane;
  let node: RealNode;
  let ns: string;
  let nsEphemeral: string;
  const apps: ControllerApp[] = [];

  const execCommands = { 'stop-proxy': ['sh', '-c', 'kill -TERM "$(cat /tmp/proxy.pid)"'] };

  async function startApp(namespace: string, config: Partial<ControllerConfig>, over: Partial<ControllerFlags> = {}, extra: { identity?: string } = {}): Promise<ControllerApp> {
    const app = new ControllerApp({
      flags: flags({ namespaces: [namespace], ...over }),
      config: { execCommands, ephemeralContainerImage: images.busybox, keystoneLimit: 1, defaultStrategy: 'auto', namespaces: [namespace], ...config },
      client: cp.client,
      kubeConfig: cp.kubeConfig,
      logger: createLogger('keystone-node', { level: 'warn' }),
      bindAddress: '127.0.0.1',
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 300,
      ...extra,
    });
    await app.start();
    return app;
  }

  const getPod = (namespace: string, name: string) => cp.client.get<V1Pod>(podsPath(namespace, name));
  const findPod = (namespace: string, name: string) => getPod(namespace, name).catch((err: unknown) => (isNotFound(err) ? undefined : Promise.reject(err)));

  async function createPod(namespace: string, name: string, t: Template): Promise<V1Pod> {
    return cp.client.create<V1Pod>(podsPath(namespace), podOf(name, t));
  }

  async function createJob(namespace: string, name: string, t: Template): Promise<void> {
    await cp.client.create(jobsPath(namespace), { apiVersion: 'batch/v1', kind: 'Job', metadata: { name }, spec: { backoffLimit: 0, template: t } });
  }

  async function jobComplete(namespace: string, name: string, timeoutMs = 90_000): Promise<V1Job> {
    const job = await waitFor(`Job ${name} Complete or Failed`, async () => {
      const j = await cp.client.get<V1Job>(jobsPath(namespace, name));
      return j.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True') && j;
    }, { timeoutMs, intervalMs: 200 }).catch(async (err: Error) => {
      const pods = await cp.client.get<{ items: V1Pod[] }>(podsPath(namespace), { labelSelector: `job-name=${name}` });
      throw new Error(`${err.message}\n${pods.items.map(describePod).join('\n---\n')}`);
    });
    assert.ok(job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True'), `Job ${name} failed: ${JSON.stringify(job.status)}`);
    return job;
  }

  async function jobPod(namespace: string, job: string): Promise<V1Pod> {
    return waitFor(`the pod of Job ${job}`, async () => (await cp.client.get<{ items: V1Pod[] }>(podsPath(namespace), { labelSelector: `job-name=${job}` })).items[0]).catch(async (err: Error) => {
      throw new Error(`${err.message}\nJob events: ${JSON.stringify((await events(namespace, job)).map((e) => `${e.reason}: ${e.note}`))}`);
    });
  }

  /** Waits for a pod state, printing the pod when it does not come. */
  async function podUntil(namespace: string, name: string, what: string, ok: (p: V1Pod) => boolean, timeoutMs = 60_000): Promise<V1Pod> {
    return waitFor(what, async () => {
      const p = await getPod(namespace, name);
      return ok(p) && p;
    }, { timeoutMs, intervalMs: 100 }).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${describePod(await findPod(namespace, name))}`);
    });
  }

  /** The container ids once every listed container runs (to follow them after the pod is gone). */
  async function runningIds(namespace: string, name: string, containers: string[]): Promise<string[]> {
    const p = await podUntil(namespace, name, `${containers.join(', ')} running`, (p) => containers.every((c) => statusOf(p, c)?.state?.running));
    return containerIds(p);
  }

  /** Waits until runc runs none of these containers (and, with `removed`, containerd has none of them); returns when. */
  async function goneFromNode(ids: readonly string[], opts: { removed?: boolean; timeoutMs?: number } = {}): Promise<number> {
    assert.ok(ids.length > 0, 'container ids to follow');
    // Removal waits for the kubelet's container GC of deleted pods, which runs once a minute: on a
    // loaded node it can come just past a minute after the deletion.
    await waitFor(`containers ${ids.map((i) => i.slice(0, 8)).join(', ')} gone from the node`, async () => {
      const running = new Set(node.runningContainerIds());
      if (ids.some((id) => running.has(id))) return false;
      if (!opts.removed) return true;
      const known = new Set(node.containerIds());
      return ids.every((id) => !known.has(id));
    }, { timeoutMs: opts.timeoutMs ?? (opts.removed ? 120_000 : 60_000), intervalMs: 100 });
    return Date.now();
  }

  /** The clock line each named container printed as it exited (host uptime, seconds). */
  async function exitClock(namespace: string, pod: string, container: string): Promise<number> {
    const log = await containerLog(cp.client, namespace, pod, container);
    const m = new RegExp(`^t ${container} ([0-9.]+)$`, 'm').exec(log);
    assert.ok(m, `container ${container} printed its exit time; its log: ${JSON.stringify(log)}`);
    return Number(m[1]);
  }

  async function recordStop(scenario: string, namespace: string, pod: string, trigger: string, last: string): Promise<number> {
    const ms = Math.round((await exitClock(namespace, pod, last)) * 1000 - (await exitClock(namespace, pod, trigger)) * 1000);
    measured.push(`${scenario}: ${ms} ms (${trigger} exit -> ${last} exit, container clocks)`);
    return ms;
  }

  async function events(namespace: string, pod: string) {
    const list = await cp.client.get<{ items: { type?: string; reason?: string; note?: string; eventTime?: string; series?: { count?: number } }[] }>(
      resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }),
      { fieldSelector: `regarding.name=${pod}` },
    );
    return list.items;
  }

  before(async function () {
    this.timeout(300_000);
    ({ cp, node } = await sharedRealCluster());
    images = node.images;
    const suffix = randomBytes(3).toString('hex');
    ns = `keystone-node-${suffix}`;
    nsEphemeral = `keystone-node-eph-${suffix}`;
    for (const name of [ns, nsEphemeral]) await cp.client.create('/api/v1/namespaces', { metadata: { name } });
  });

  // A failure prints what the cluster saw: the last minute of Events and the kubelet's last words.
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    const since = Date.now() - 60_000;
    for (const namespace of [ns, nsEphemeral]) {
      const list = await cp.client.get<{ items: { eventTime?: string; deprecatedLastTimestamp?: string; regarding?: { name?: string }; reason?: string; note?: string; reportingController?: string }[] }>(
        resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }),
      );
      const at = (e: (typeof list.items)[number]) => Date.parse(e.eventTime ?? e.deprecatedLastTimestamp ?? '') || 0;
      const recent = list.items.filter((e) => at(e) >= since).sort((a, b) => at(a) - at(b));
      console.log(recent.map((e) => `      ${new Date(at(e)).toISOString()} ${e.regarding?.name} ${e.reportingController} ${e.reason}: ${e.note}`).join('\n'));
    }
    console.log(node.kubeletLogTail(150).split('\n').filter((l) => /[Kk]ill|phase|SyncLoop (DELETE|REMOVE)|grace/i.test(l)).map((l) => `      ${l.slice(0, 400)}`).join('\n'));
  });

  after(async () => {
    for (const app of apps) await app.stop();
    for (const name of [ns, nsEphemeral]) await cp?.client.delete(`/api/v1/namespaces/${name}`).catch(() => undefined);
    if (measured.length > 0) console.log(`\n    stop times on the real node:\n${measured.map((m) => `      ${m}`).join('\n')}\n`);
  });

  describe('exec first, ephemeral container as the fallback', () => {
    before(async () => {
      apps.push(await startApp(ns, { defaultStrategy: 'auto' }));
    });

    it('rule S (exec): a Job completes once its sidecar is stopped by kill in the container', async () => {
      await createJob(ns, 's-exec', syncedPod({ containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy')], roles: { proxy: 'sidecar' } }));
      const job = await jobComplete(ns, 's-exec');
      assert.equal(job.status?.succeeded, 1);
      const name = (await jobPod(ns, 's-exec')).metadata!.name!;
      const pod = await podUntil(ns, name, 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
      assert.equal(terminated(pod, 'proxy')?.exitCode, 0, 'the trap ran');
      assert.deepEqual(ephemeralNames(pod), [], 'exec was enough');
      assert.ok((await events(ns, name)).some((e) => e.reason === 'StoppingContainer' && /container proxy with signal:TERM via exec/.test(e.note ?? '')));
      await goneFromNode(containerIds(pod));
      await recordStop('rule S, exec', ns, name, 'app', 'proxy');
    });

    it('rule K (exec): mains first, then sidecars one at a time in reverse spec order, read from finishedAt', async () => {
      // Each stopped container takes 1.2 s to exit, so consecutive stops end in different seconds.
      await createPod(ns, 'k-order', syncedPod({
        containers: [
          main('app', { waitFor: ['worker', 'proxy-a', 'proxy-b'] }),
          sidecar('worker', { delayS: 1.2, exit: 0 }),
          sidecar('proxy-a', { delayS: 1.2 }),
          sidecar('proxy-b', { delayS: 1.2 }),
        ],
        roles: { app: 'keystone', 'proxy-a': 'sidecar', 'proxy-b': 'sidecar' },
      }));
      const pod = await podUntil(ns, 'k-order', 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
      assert.equal(condition(pod, 'podlife.dev/KeystoneFinished')?.status, 'True');
      const [app, worker, b, a] = ['app', 'worker', 'proxy-b', 'proxy-a'].map((c) => finishedAt(pod, c));
      assert.ok(app! <= worker! && worker! < b! && b! < a!, `order app <= worker < proxy-b < proxy-a, finishedAt: ${[app, worker, b, a].map((t) => new Date(t!).toISOString()).join(' ')}`);
      assert.deepEqual(['worker', 'proxy-a', 'proxy-b'].map((c) => terminated(pod, c)?.exitCode), [0, 0, 0]);
      await goneFromNode(containerIds(pod));
      await recordStop('rule K, exec, 3 stages of 1.2 s each', ns, 'k-order', 'app', 'proxy-a');
    });

    it('a distroless sidecar (no shell, no kill) falls back to an ephemeral container that POSTs to its preset endpoint', async () => {
      await createJob(ns, 'preset', syncedPod({
        containers: [main('app', { ports: [15020] }), { name: 'istio-proxy', image: images.quitserver, imagePullPolicy: 'Never' }],
        roles: { 'istio-proxy': 'sidecar' },
        annotations: { [stopKey('istio-proxy')]: 'preset:istio' },
      }));
      await jobComplete(ns, 'preset');
      const name = (await jobPod(ns, 'preset')).metadata!.name!;
      const pod = await podUntil(ns, name, 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
      assert.equal(terminated(pod, 'istio-proxy')?.exitCode, 0, 'quit over the pod loopback, not a signal (143)');
      assert.deepEqual(ephemeralNames(pod), ['podlife-stop-istio-proxy']);
      assert.equal(terminated(pod, 'podlife-stop-istio-proxy')?.exitCode, 0);
      await goneFromNode(containerIds(pod));
      const ms = finishedAt(pod, 'istio-proxy') - finishedAt(pod, 'app');
      measured.push(`distroless fallback to ephemeral, preset:istio: ${ms} ms (finishedAt, 1 s steps)`);
    });

    it('completion: phase with a sidecar that exits 143: the Job counts Succeeded, then the kubelet ends the sidecar', async () => {
      await createJob(ns, 'by-phase', syncedPod({
        containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy', { exit: 143 })],
        roles: { proxy: 'sidecar' },
        annotations: { [COMPLETION]: 'phase' },
        grace: 10,
      }));
      const name = (await jobPod(ns, 'by-phase')).metadata!.name!;
      const ids = await runningIds(ns, name, ['app', 'proxy']);
      const job = await jobComplete(ns, 'by-phase');
      assert.equal(job.status?.succeeded, 1);
      assert.equal(job.status?.failed ?? 0, 0);
      const goneAt = await goneFromNode(ids, { removed: true });
      assert.equal(await findPod(ns, name), undefined, 'the pod was deleted so that the kubelet ends it');
      measured.push(`completion: phase: containers gone from containerd ${Math.round((goneAt - Date.parse(String(job.status?.completionTime))) / 100) / 10} s after the Job completed`);
    });

    it('TerminatePod deletes the pod with its own grace period, and the kubelet ends every container', async () => {
      await createPod(ns, 'terminate', syncedPod({
        containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy', { delayS: 2 })],
        roles: { app: 'keystone', proxy: 'sidecar' },
        annotations: { [ON_KEYSTONE_EXIT]: 'TerminatePod' },
        grace: 7,
      }));
      const ids = await runningIds(ns, 'terminate', ['app', 'proxy']);
      const deleting = await podUntil(ns, 'terminate', 'pod terminating', (p) => !!p.metadata?.deletionTimestamp);
      assert.equal(deleting.metadata?.deletionGracePeriodSeconds, 7);
      assert.deepEqual(ephemeralNames(deleting), [], 'deleted, not stopped container by container');
      const deletedAt = Date.now();
      const goneAt = await goneFromNode(ids, { removed: true });
      assert.ok(goneAt - deletedAt < 7_000, `within the grace period (${goneAt - deletedAt} ms)`);
      await waitFor('pod deleted', async () => (await findPod(ns, 'terminate')) === undefined);
      measured.push(`TerminatePod (sidecar takes 2 s on TERM, grace 7 s): containers gone ${goneAt - deletedAt} ms after the deletion was seen`);
    });

    it('restartPolicy Always: a keystone exit deletes the pod', async () => {
      await createPod(ns, 'always', syncedPod({
        containers: [main('app', { waitFor: ['proxy'], exit: 3 }), sidecar('proxy')],
        roles: { app: 'keystone', proxy: 'sidecar' },
        restartPolicy: 'Always',
        grace: 5,
      }));
      const ids = await runningIds(ns, 'always', ['app', 'proxy']);
      // The deletion goes out before its record is written (ADR 0052): wait for both.
      const deleting = await podUntil(ns, 'always', 'pod terminating, with its record', (p) => !!p.metadata?.deletionTimestamp && condition(p, 'podlife.dev/KeystoneFinished') !== undefined);
      assert.match(condition(deleting, 'podlife.dev/KeystoneFinished')?.message ?? '', /restartPolicy Always/);
      const seenAt = Date.now();
      const goneAt = await goneFromNode(ids, { removed: true });
      measured.push(`restartPolicy Always keystone: containers gone ${goneAt - seenAt} ms after the deletion was seen`);
    });

    it('escalation of a sidecar that handles TERM but does not exit: the kubelet ends it, the Job completes', async () => {
      await createJob(ns, 'stubborn', syncedPod({
        containers: [main('app', { waitFor: ['proxy'] }), busybox('proxy', `trap 'echo ignoring TERM' TERM; touch /sync/proxy; while true; do sleep 0.2; done`)],
        roles: { proxy: 'sidecar' },
        grace: 4,
      }));
      const name = (await jobPod(ns, 'stubborn')).metadata!.name!;
      const ids = await runningIds(ns, name, ['app', 'proxy']);
      const appDone = finishedAt(await podUntil(ns, name, 'app finished', (p) => !!terminated(p, 'app')), 'app');
      const job = await jobComplete(ns, 'stubborn');
      assert.equal(job.status?.succeeded, 1, 'the result from the main container was recorded before the pod was deleted');
      assert.equal(job.status?.failed ?? 0, 0);
      const goneAt = await goneFromNode(ids, { removed: true });
      assert.ok((await events(ns, name)).some((e) => e.reason === 'StoppingContainer' && /outlived its share.*ending it through the kubelet/.test(e.note ?? '')));
      measured.push(`escalation after the share (grace 4 s, then the kubelet's own 4 s): app finishedAt -> containers gone from runc ${goneAt - appDone} ms (1 s steps)`);
    });

    it('escalation of a PID 1 without a TERM handler (busybox sleep): detected, explained, ended by the kubelet, Job complete', async () => {
      await createJob(ns, 'no-handler', syncedPod({
        containers: [main('app', { runS: 2 }), { name: 'proxy', image: images.busybox, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
        roles: { proxy: 'sidecar' },
        grace: 3,
      }));
      const name = (await jobPod(ns, 'no-handler')).metadata!.name!;
      const ids = await runningIds(ns, name, ['app', 'proxy']);
      const appDone = finishedAt(await podUntil(ns, name, 'app finished', (p) => !!terminated(p, 'app')), 'app');
      const job = await jobComplete(ns, 'no-handler');
      assert.equal(job.status?.succeeded, 1);
      const warning = await waitFor('the Warning explaining the missing handler', async () =>
        (await events(ns, name)).find((e) => e.type === 'Warning' && /PID 1 has no handler/.test(e.note ?? '')));
      assert.match(warning.note ?? '', /ending it through the kubelet/);
      const goneAt = await goneFromNode(ids, { removed: true });
      measured.push(`no TERM handler in PID 1 (exec): detected at the first stop, escalated at once (grace 3 s): app finishedAt -> gone from runc ${goneAt - appDone} ms (1 s steps)`);
    });

    it('escalation of a distroless PID 1 with no handler (exec impossible, ephemeral detects it): ended by the kubelet, Job complete', async () => {
      await createJob(ns, 'distroless', syncedPod({
        containers: [main('app', { runS: 2 }), { name: 'sleeper', image: images.distroless, imagePullPolicy: 'Never', securityContext: { runAsUser: 65532, runAsGroup: 65532 } }],
        roles: { sleeper: 'sidecar' },
        // Long enough that only the detection, not the end of the share, can explain an early end.
        grace: 12,
      }));
      const name = (await jobPod(ns, 'distroless')).metadata!.name!;
      const ids = await runningIds(ns, name, ['app', 'sleeper']);
      const appDone = finishedAt(await podUntil(ns, name, 'app finished', (p) => !!terminated(p, 'app')), 'app');
      const job = await jobComplete(ns, 'distroless');
      assert.equal(job.status?.succeeded, 1);
      const warning = await waitFor('the Warning explaining the missing handler', async () =>
        (await events(ns, name)).find((e) => e.type === 'Warning' && /container sleeper .*PID 1 has no handler/.test(e.note ?? '')));
      const escalatedAt = Date.parse(String(warning.eventTime));
      assert.ok(escalatedAt - appDone < 11_000, `escalated on detection, before the share ran out (${escalatedAt - appDone} ms after the app's exit)`);
      const goneAt = await goneFromNode(ids, { removed: true });
      measured.push(`distroless PID 1 without handler (exec impossible, ephemeral detects): app finishedAt -> escalation ${escalatedAt - appDone} ms, -> gone from runc ${goneAt - appDone} ms (grace 12 s: the kubelet gives the rest of it; 1 s steps)`);
    });

    describe('shareProcessNamespace: PID 1 is the pause process', () => {
      it('a signal stop is refused as invalid, and nothing is done to the pod', async () => {
        await createPod(ns, 'shared-signal', syncedPod({
          containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy')],
          roles: { proxy: 'sidecar' },
          shareProcessNamespace: true,
          grace: 2,
        }));
        const pod = await podUntil(ns, 'shared-signal', 'LifecycleValid=False', (p) => condition(p, 'podlife.dev/LifecycleValid')?.status === 'False');
        assert.match(condition(pod, 'podlife.dev/LifecycleValid')?.message ?? '', /shareProcessNamespace/);
        await podUntil(ns, 'shared-signal', 'app finished', (p) => !!terminated(p, 'app'));
        await new Promise((r) => setTimeout(r, 3000));
        const after = await getPod(ns, 'shared-signal');
        assert.ok(statusOf(after, 'proxy')?.state?.running, 'the sidecar was not touched');
        assert.deepEqual(ephemeralNames(after), []);
        const ids = containerIds(after);
        await cp.client.delete(podsPath(ns, 'shared-signal'), { gracePeriodSeconds: 1 });
        await goneFromNode(ids, { removed: true });
      });

      it('preset and exec-named stops work: the quit endpoint over loopback, a named command in the container', async () => {
        await createJob(ns, 'shared-ok', syncedPod({
          containers: [
            main('app', { waitFor: ['proxy'], ports: [15020] }),
            { name: 'istio-proxy', image: images.quitserver, imagePullPolicy: 'Never' },
            // `$$$$`: the kubelet expands `$(VAR)` in commands and turns `$$` into `$`.
            busybox('proxy', `echo $$$$ > /tmp/proxy.pid; trap '${clock('proxy')}; exit 0' TERM; touch /sync/proxy; sleep 3600 & wait`),
          ],
          roles: { 'istio-proxy': 'sidecar', proxy: 'sidecar' },
          annotations: { [stopKey('istio-proxy')]: 'preset:istio', [stopKey('proxy')]: 'exec:stop-proxy' },
          shareProcessNamespace: true,
        }));
        const name = (await jobPod(ns, 'shared-ok')).metadata!.name!;
        await jobComplete(ns, 'shared-ok');
        const pod = await podUntil(ns, name, 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True').catch(async (err: Error) => {
          throw new Error(`${err.message}\nevents: ${JSON.stringify((await events(ns, name)).map((e) => `${e.reason}: ${e.note}`))}`);
        });
        assert.deepEqual(['istio-proxy', 'proxy'].map((c) => terminated(pod, c)?.exitCode), [0, 0]);
        assert.ok(finishedAt(pod, 'proxy') <= finishedAt(pod, 'istio-proxy'), 'reverse spec order');
        await goneFromNode(containerIds(pod));
        measured.push(`shareProcessNamespace, exec:stop-proxy then preset:istio: ${finishedAt(pod, 'istio-proxy') - finishedAt(pod, 'app')} ms (finishedAt, 1 s steps)`);
      });
    });
  });

  describe('ephemeral containers first', () => {
    before(async () => {
      apps.push(await startApp(nsEphemeral, { defaultStrategy: 'ephemeral' }));
    });

    it('rule S (ephemeral, signal): the stop container signals the sidecar in its PID namespace', async () => {
      await createJob(nsEphemeral, 's-eph', syncedPod({ containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy', { user: 1000 })], roles: { proxy: 'sidecar' } }));
      await jobComplete(nsEphemeral, 's-eph');
      const name = (await jobPod(nsEphemeral, 's-eph')).metadata!.name!;
      const pod = await podUntil(nsEphemeral, name, 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
      assert.deepEqual(ephemeralNames(pod), ['podlife-stop-proxy']);
      // The stop container stays until the sidecar's init exits; the kernel then ends it.
      assert.equal(terminated(pod, 'podlife-stop-proxy')?.exitCode, 137);
      assert.equal(terminated(pod, 'proxy')?.exitCode, 0);
      await goneFromNode(containerIds(pod));
      await recordStop('rule S, ephemeral signal', nsEphemeral, name, 'app', 'proxy');
    });

    it('rule K (ephemeral, http:): POST to the quit endpoint over the pod loopback', async () => {
      await createPod(nsEphemeral, 'k-http', syncedPod({
        containers: [main('app', { ports: [4191] }), { name: 'linkerd-proxy', image: images.quitserver, imagePullPolicy: 'Never' }],
        roles: { app: 'keystone', 'linkerd-proxy': 'sidecar' },
        annotations: { [stopKey('linkerd-proxy')]: 'http:4191/shutdown' },
      }));
      const pod = await podUntil(nsEphemeral, 'k-http', 'SidecarsStopped=True', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
      assert.equal(terminated(pod, 'linkerd-proxy')?.exitCode, 0);
      assert.deepEqual(ephemeralNames(pod), ['podlife-stop-linkerd-proxy']);
      await goneFromNode(containerIds(pod));
      measured.push(`rule K, ephemeral http: ${finishedAt(pod, 'linkerd-proxy') - finishedAt(pod, 'app')} ms (finishedAt, 1 s steps)`);
    });
  });

  describe('native sidecars through the webhook (the API server calls it over TLS)', () => {
    let webhook: LocalWebhook | undefined;
    let hook: ControllerApp | undefined;
    const labels = { 'podlife.dev/admission': 'enabled' };

    before(async () => {
      webhook = await localWebhook(cp.client, `podlife-node-${randomBytes(3).toString('hex')}`);
      // The webhook only: the keystone controllers above already act in these namespaces.
      hook = await startApp(ns, {}, { controllers: ['keystone'], dryRun: true, webhookPort: 0, tlsCertFile: webhook.certFile, tlsKeyFile: webhook.keyFile });
      await webhook.register(hook.webhook!.port, [ns]);
      const probe = syncedPod({ containers: [main('app'), sidecar('proxy')], roles: { proxy: 'sidecar' }, labels });
      await waitFor('the webhook in the admission chain', async () => {
        const p = await cp.client.create<V1Pod>(podsPath(ns), podOf(`dry-${randomBytes(3).toString('hex')}`, probe), { dryRun: 'All' });
        return p.spec?.initContainers?.some((c) => c.name === 'proxy' && c.restartPolicy === 'Always');
      }, { timeoutMs: 20_000 });
    });
    after(async () => {
      await hook?.stop();
      await webhook?.remove();
    });

    it('the sidecar becomes a restartable init container, and the kubelet itself ends it after the app', async () => {
      await createJob(ns, 'native', syncedPod({ containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy')], roles: { proxy: 'sidecar' }, labels }));
      await jobComplete(ns, 'native');
      const pod = await jobPod(ns, 'native');
      assert.deepEqual(pod.spec?.containers.map((c) => c.name), ['app']);
      assert.deepEqual(pod.spec?.initContainers?.map((c) => [c.name, c.restartPolicy]), [['proxy', 'Always']]);
      const done = await podUntil(ns, pod.metadata!.name!, 'the native sidecar terminated', (p) => !!terminated(p, 'proxy'));
      assert.equal(terminated(done, 'proxy')?.exitCode, 0);
      assert.deepEqual(ephemeralNames(done), [], 'podlife sent nothing');
      await goneFromNode(containerIds(done));
      await recordStop('native sidecar (the kubelet ends it)', ns, pod.metadata!.name!, 'app', 'proxy');
    });
  });

  describe('restarts and replicas', () => {
    it('a controller killed mid-sequence is resumed by its successor without repeating a stop', async () => {
      const namespace = await createNamespace(cp.client, 'keystone-node-resume');
      const dir = mkdtempSync(join(tmpdir(), 'podlife-node-cfg-'));
      const configFile = join(dir, 'config.yaml');
      writeFileSync(configFile, `ephemeralContainer:\n  image: ${images.busybox}\n`);
      const mainTs = fileURLToPath(new URL('../../../packages/controller/src/main.ts', import.meta.url));
      const run = (): ChildProcess =>
        spawn(process.execPath, ['--import=tsx', '--conditions=@podlife/source', mainTs, `--kubeconfig=${cp.kubeconfigPath}`, `--namespace=${namespace}`, `--config=${configFile}`, '--metrics-port=0', '--health-port=0', '--log-level=warn'], {
          stdio: ['ignore', 'ignore', 'inherit'],
        });
      let child = run();
      try {
        // proxy-b (stopped first: reverse spec order) takes 4 s to exit after TERM.
        await createPod(namespace, 'resume', syncedPod({
          containers: [main('app', { waitFor: ['proxy-a', 'proxy-b'] }), sidecar('proxy-a'), sidecar('proxy-b', { delayS: 4 })],
          roles: { app: 'keystone', 'proxy-a': 'sidecar', 'proxy-b': 'sidecar' },
        }));
        // Killed once the stop of proxy-b is both recorded (the progress condition) and announced.
        await waitFor('the stop of proxy-b recorded and announced', async () => {
          const p = await getPod(namespace, 'resume');
          return /issued: proxy-b(@\d+)?$/.test(condition(p, 'podlife.dev/SidecarsStopped')?.message ?? '') &&
            (await events(namespace, 'resume')).some((e) => e.reason === 'StoppingContainer' && /container proxy-b /.test(e.note ?? ''));
        }, { timeoutMs: 60_000 });
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        assert.ok(statusOf(await getPod(namespace, 'resume'), 'proxy-b')?.state?.running, 'killed mid-sequence: proxy-b still stopping');
        child = run();
        const pod = await podUntil(namespace, 'resume', 'both sidecars stopped', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
        // finishedAt has 1 s steps and proxy-a exits at once on TERM: order by the containers' own clocks.
        const [b, a] = [await exitClock(namespace, 'resume', 'proxy-b'), await exitClock(namespace, 'resume', 'proxy-a')];
        assert.ok(b < a, `reverse spec order: proxy-b exited at ${b}, proxy-a at ${a} (uptime, s)`);
        assert.deepEqual(['proxy-a', 'proxy-b'].map((c) => terminated(pod, c)?.exitCode), [0, 0]);
        const stopping = (await events(namespace, 'resume')).filter((e) => e.reason === 'StoppingContainer');
        assert.deepEqual(stopping.map((e) => /container (\S+)/.exec(e.note ?? '')?.[1]).sort(), ['proxy-a', 'proxy-b']);
        assert.ok(stopping.every((e) => (e.series?.count ?? 1) === 1), 'each stop announced once');
        assert.equal((await containerLog(cp.client, namespace, 'resume', 'proxy-b')).match(/^t proxy-b /gm)?.length, 1, 'proxy-b got one TERM');
        await goneFromNode(containerIds(pod));
        await recordStop('rule K, exec, controller SIGKILLed and restarted mid-sequence', namespace, 'resume', 'app', 'proxy-a');
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
        rmSync(dir, { recursive: true, force: true });
        await cp.client.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
      }
    });

    it('of two replicas with leader election, only the leader acts', async () => {
      const namespace = await createNamespace(cp.client, 'keystone-node-le');
      const a = await startApp(namespace, {}, { leaderElect: true, leaderElectionNamespace: namespace }, { identity: 'replica-a' });
      const b = await startApp(namespace, {}, { leaderElect: true, leaderElectionNamespace: namespace }, { identity: 'replica-b' });
      try {
        await waitFor('a leader', async () => a.manager.isLeader() || b.manager.isLeader(), { timeoutMs: 20_000 });
        assert.notEqual(a.manager.isLeader(), b.manager.isLeader(), 'exactly one leader');
        const leader = a.manager.isLeader() ? 'replica-a' : 'replica-b';
        await createPod(namespace, 'two-replicas', syncedPod({ containers: [main('app', { waitFor: ['proxy'] }), sidecar('proxy')], roles: { proxy: 'sidecar' } }));
        const pod = await podUntil(namespace, 'two-replicas', 'the sidecar stopped', (p) => condition(p, 'podlife.dev/SidecarsStopped')?.status === 'True');
        const list = await cp.client.get<{ items: { reportingInstance?: string }[] }>(
          resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }),
          { fieldSelector: 'regarding.name=two-replicas' },
        );
        // The scheduler and the kubelet report on the pod too; podlife's Events come from one replica.
        const ours = list.items.filter((e) => e.reportingInstance?.startsWith('replica-'));
        assert.ok(ours.length > 0);
        assert.deepEqual([...new Set(ours.map((e) => e.reportingInstance))], [leader]);
        await goneFromNode(containerIds(pod));
      } finally {
        await Promise.all([a.stop(), b.stop()]);
        await cp.client.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
      }
    });
  });
});
