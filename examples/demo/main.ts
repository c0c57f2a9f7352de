/**
 * `pnpm demo`: a Job with a sidecar on a local, real control plane, its pod's timeline shown live.
 *
 * It starts etcd, kube-apiserver and kube-controller-manager (the real Job controller) and, when
 * this host can run one, a real node (kube-scheduler, containerd, runc, kubelet: the containers
 * really run, and their output is printed as they write it, read through pods/log); elsewhere it
 * says why in one line and the simulated kubelet plays the node. Then the podlife controller
 * (examples/demo/podlife.ts); applies examples/job-with-sidecar/job.yaml; prints every change of
 * the Job's pod (phase, conditions, containers) and podlife's Events as they happen; then tears it
 * all down, also on Ctrl-C.
 *
 * It reports what the API server and the containers say and nothing else. If the Job does not
 * finish within PODLIFE_DEMO_WAIT_SECONDS (default 15) after its app container has, it says so
 * and why. Exit code: 0 when the Job completed; 1 when it did not, or anything failed.
 */
import { readFileSync } from 'node:fs';
import { loadYaml, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { Informer, objectKey, resourcePath } from '@podlife/core';
import { startDemoCluster, type DemoCluster } from './cluster.js';
import { followLog, type LogFollower } from './logs.js';
import { startPodlife, type RunningController } from './podlife.js';
import { changes, viewOf, type PodView } from './timeline.js';

const namespace = 'demo';
const waitAfterAppMs = Number(process.env.PODLIFE_DEMO_WAIT_SECONDS ?? 15) * 1000;
/** However the pod behaves, the demo ends after this long. */
const overallLimitMs = 60_000 + waitAfterAppMs;
const tty = process.stdout.isTTY;
const dim = (s: string): string => (tty ? `\x1b[2m${s}\x1b[0m` : s);
const bold = (s: string): string => (tty ? `\x1b[1m${s}\x1b[0m` : s);

const t0 = Date.now();
function say(line: string): void {
  const stamp = `+${((Date.now() - t0) / 1000).toFixed(1)}s`.padStart(7);
  process.stdout.write(`${dim(stamp)}  ${line}\n`);
}

/** What podlife says about the pod: the Events its controller records (events.k8s.io/v1). */
interface PodEvent {
  metadata?: { name?: string };
  reason?: string;
  note?: string;
  reportingController?: string;
  regarding?: { name?: string };
}

type Outcome = { kind: 'complete' } | { kind: 'failed'; message: string } | { kind: 'stuck'; appFinishedAt: number | undefined; running: string[] };

async function main(): Promise<number> {
  let cluster: DemoCluster | undefined;
  let controller: RunningController | undefined;
  const informers: Informer<V1Pod | V1Job | PodEvent>[] = [];
  const followers: LogFollower[] = [];
  try {
    cluster = await startDemoCluster(say, dim);
    const { cp } = cluster;
    controller = await startPodlife(cp, cluster);
    say(`podlife controller: ${controller.description}`);

    await cp.client.create(resourcePath({ version: 'v1', resource: 'namespaces' }), { metadata: { name: namespace } });
    const written = loadYaml<V1Job>(readFileSync(new URL('../job-with-sidecar/job.yaml', import.meta.url), 'utf8'));
    const { job, changes: adapted } = cluster.runnable(written);
    const jobName = job.metadata?.name ?? 'report';
    await cp.client.create(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace }), job);
    say(`applied examples/job-with-sidecar/job.yaml: job/${jobName} (containers: app, proxy [sidecar])`);
    for (const line of adapted) say(dim(`  ${line}`));

    const outcome = await new Promise<Outcome>((resolve) => {
      const views = new Map<string, PodView>();
      let appFinishedAt: number | undefined;
      let stuckTimer: NodeJS.Timeout | undefined;
      let latestPod: V1Pod | undefined;
      const runningNames = (): string[] => (latestPod?.status?.containerStatuses ?? []).filter((c) => c.state?.running).map((c) => c.name);
      setTimeout(() => resolve({ kind: 'stuck', appFinishedAt, running: runningNames() }), overallLimitMs).unref();

      // A real kubelet serves each container's output; follow it from the moment it has started.
      const following = new Set<string>();
      const follow = (pod: V1Pod): void => {
        const name = pod.metadata?.name;
        if (!cluster?.real || !name) return;
        for (const s of pod.status?.containerStatuses ?? []) {
          const key = `${name}/${s.name}`;
          if (following.has(key) || !(s.state?.running || s.state?.terminated)) continue;
          following.add(key);
          followers.push(followLog(cp.client, { namespace, pod: name, container: s.name }, (line) => say(`${s.name.padStart(5)} | ${line}`), (message) => say(dim(`log of ${s.name}: ${message}`))));
        }
      };

      const pods = new Informer<V1Pod>({ client: cp.client, path: resourcePath({ version: 'v1', resource: 'pods', namespace }), labelSelector: `job-name=${jobName}`, name: 'demo-pods' });
      const onPod = (pod: V1Pod): void => {
        latestPod = pod;
        const name = pod.metadata?.name ?? '?';
        const view = viewOf(pod);
        for (const line of changes(views.get(name), view)) say(`pod ${name}  ${line}`);
        views.set(name, view);
        follow(pod);
        const app = pod.status?.containerStatuses?.find((c) => c.name === 'app');
        if (app?.state?.terminated && appFinishedAt === undefined) {
          appFinishedAt = Date.now();
          stuckTimer = setTimeout(() => {
            resolve({ kind: 'stuck', appFinishedAt, running: runningNames() });
          }, waitAfterAppMs);
        }
      };
      pods.on('add', onPod);
      // The store holds the newest version whichever argument order `update` uses.
      pods.on('update', (pod) => onPod(pods.store.get(objectKey(pod)) ?? pod));
      pods.on('delete', (pod) => say(`pod ${pod.metadata?.name} deleted`));

      const events = new Informer<PodEvent>({ client: cp.client, path: resourcePath({ group: 'events.k8s.io', version: 'v1', resource: 'events', namespace }), name: 'demo-events' });
      events.on('add', (e) => {
        if (e.reportingController !== 'podlife.dev/controller') return;
        say(`podlife event on ${e.regarding?.name ?? '?'}: ${e.reason ?? '?'}: ${e.note ?? ''}`);
      });

      const jobs = new Informer<V1Job>({ client: cp.client, path: resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace }), fieldSelector: `metadata.name=${jobName}`, name: 'demo-jobs' });
      const seen = new Set<string>();
      const onJob = (j: V1Job): void => {
        for (const c of j.status?.conditions ?? []) {
          const key = `${c.type}=${c.status}`;
          if (seen.has(key)) continue;
          seen.add(key);
          say(`job/${jobName}  ${key}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`);
          if (c.status !== 'True') continue;
          if (c.type === 'Complete') {
            clearTimeout(stuckTimer);
            resolve({ kind: 'complete' });
          } else if (c.type === 'Failed') {
            clearTimeout(stuckTimer);
            resolve({ kind: 'failed', message: c.message ?? c.reason ?? '' });
          }
        }
      };
      jobs.on('add', onJob);
      jobs.on('update', (j) => onJob(jobs.store.get(objectKey(j)) ?? j));
      informers.push(pods as Informer<V1Pod | V1Job | PodEvent>, jobs as Informer<V1Pod | V1Job | PodEvent>, events as Informer<V1Pod | V1Job | PodEvent>);
      pods.start();
      jobs.start();
      events.start();
    });

    process.stdout.write('\n');
    const where = cluster.real ? 'on a real node' : 'on the simulated kubelet';
    if (outcome.kind === 'complete') {
      say(bold(`job/${jobName} completed ${where}: its pod finished, sidecar included.`));
      return 0;
    }
    if (outcome.kind === 'failed') {
      say(bold(`job/${jobName} failed ${where}: ${outcome.message}`));
      return 1;
    }
    if (outcome.appFinishedAt === undefined) {
      say(bold(`job/${jobName}: its app container did not finish within ${overallLimitMs / 1000}s; stopping here.`));
      return 1;
    }
    const waited = ((Date.now() - outcome.appFinishedAt) / 1000).toFixed(0);
    say(bold(`job/${jobName} did not complete: app finished ${waited}s ago, but ${outcome.running.join(', ') || 'a container'} is still running,`));
    say(bold('so the pod stays Running and the Job stays active. The podlife controller was running and did not end it: that is a failure.'));
    return 1;
  } finally {
    for (const follower of followers) follower.stop();
    for (const informer of informers) await informer.stop().catch(() => {});
    await controller?.stop().catch(() => {});
    await cluster?.stop();
    say(dim(`${cluster?.real ? 'node and control plane' : 'control plane'} stopped, temporary files removed; ${((Date.now() - t0) / 1000).toFixed(1)}s in all`));
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
