/**
 * `pnpm demo`: a Job with a sidecar on a local, real control plane, its pod's timeline shown live.
 *
 * It starts etcd, kube-apiserver and kube-controller-manager (the real Job controller), the
 * simulated kubelet (which plays the node: no containers really run), and the podlife controller
 * when examples/demo/podlife.ts provides one; applies examples/job-with-sidecar/job.yaml; prints
 * every change of the Job's pod (phase, conditions, containers) as it happens; then tears it all
 * down, also on Ctrl-C.
 *
 * It reports what the API server says and nothing else. If the Job does not finish within
 * PODLIFE_DEMO_WAIT_SECONDS (default 15) after its app container has, it says so and why. Exit
 * code: 0 when the Job completed, or when it did not and no podlife controller was running (the
 * demo then shows the problem podlife exists to solve); 1 when a podlife controller was running and
 * the Job still did not complete, or anything failed.
 */
import { readFileSync } from 'node:fs';
import { loadYaml, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { Informer, objectKey, resourcePath } from '@podlife/core';
import { startControlPlane, type ControlPlane } from '../../test/support/control-plane.js';
import { SimulatedKubelet } from '../../test/support/kubelet.js';
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

type Outcome = { kind: 'complete' } | { kind: 'failed'; message: string } | { kind: 'stuck'; appFinishedAt: number | undefined; running: string[] };

async function main(): Promise<number> {
  say(bold('starting a local control plane (etcd, kube-apiserver, kube-controller-manager)'));
  let cp: ControlPlane | undefined;
  let kubelet: SimulatedKubelet | undefined;
  let controller: RunningController | undefined;
  const informers: Informer<V1Pod | V1Job>[] = [];
  try {
    cp = await startControlPlane({ controllerManager: true, log: (line) => say(dim(line)) });
    kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['demo-node'] });
    await kubelet.start();
    say('simulated kubelet: node demo-node registered (it binds pods and reports container states; nothing really runs)');
    controller = await startPodlife(cp, say);
    say(controller
      ? `podlife controller: ${controller.description}`
      : bold('podlife controller: not part of this demo yet, so this shows what Kubernetes alone does'));

    await cp.client.create(resourcePath({ version: 'v1', resource: 'namespaces' }), { metadata: { name: namespace } });
    const job = loadYaml<V1Job>(readFileSync(new URL('../job-with-sidecar/job.yaml', import.meta.url), 'utf8'));
    const jobName = job.metadata?.name ?? 'report';
    await cp.client.create(resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace }), job);
    say(`applied examples/job-with-sidecar/job.yaml: job/${jobName} (containers: app, proxy [sidecar])`);

    const outcome = await new Promise<Outcome>((resolve) => {
      const views = new Map<string, PodView>();
      let appFinishedAt: number | undefined;
      let stuckTimer: NodeJS.Timeout | undefined;
      let latestPod: V1Pod | undefined;
      const runningNames = (): string[] => (latestPod?.status?.containerStatuses ?? []).filter((c) => c.state?.running).map((c) => c.name);
      setTimeout(() => resolve({ kind: 'stuck', appFinishedAt, running: runningNames() }), overallLimitMs).unref();

      const pods = new Informer<V1Pod>({ client: cp?.client, path: resourcePath({ version: 'v1', resource: 'pods', namespace }), labelSelector: `job-name=${jobName}`, name: 'demo-pods' });
      const onPod = (pod: V1Pod): void => {
        latestPod = pod;
        const name = pod.metadata?.name ?? '?';
        const view = viewOf(pod);
        for (const line of changes(views.get(name), view)) say(`pod ${name}  ${line}`);
        views.set(name, view);
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

      const jobs = new Informer<V1Job>({ client: cp?.client, path: resourcePath({ group: 'batch', version: 'v1', resource: 'jobs', namespace }), fieldSelector: `metadata.name=${jobName}`, name: 'demo-jobs' });
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
      informers.push(pods as Informer<V1Pod | V1Job>, jobs as Informer<V1Pod | V1Job>);
      pods.start();
      jobs.start();
    });

    process.stdout.write('\n');
    if (outcome.kind === 'complete') {
      say(bold(`job/${jobName} completed: its pod finished, sidecar included.`));
      return 0;
    }
    if (outcome.kind === 'failed') {
      say(bold(`job/${jobName} failed: ${outcome.message}`));
      return 1;
    }
    if (outcome.appFinishedAt === undefined) {
      say(bold(`job/${jobName}: its app container did not finish within ${overallLimitMs / 1000}s; stopping here.`));
      return 1;
    }
    const waited = ((Date.now() - outcome.appFinishedAt) / 1000).toFixed(0);
    say(bold(`job/${jobName} did not complete: app finished ${waited}s ago, but ${outcome.running.join(', ') || 'a container'} is still running,`));
    say(bold('so the pod stays Running and the Job stays active. Kubernetes does not stop a sidecar in spec.containers;'));
    say(bold(controller
      ? 'the podlife controller was running and did not end it: that is a failure.'
      : 'that is the job of the podlife controller, which this demo does not run yet. Stopping here.'));
    return controller ? 1 : 0;
  } finally {
    for (const informer of informers) await informer.stop().catch(() => {});
    await controller?.stop().catch(() => {});
    await kubelet?.stop().catch(() => {});
    await cp?.stop();
    say(dim('control plane stopped, temporary files removed'));
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
