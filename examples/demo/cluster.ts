/**
 * Where the demo's pod runs: a real node on this host when it can run one (containerd, runc and
 * the kubelet next to the control plane, with the kube-scheduler), the simulated kubelet otherwise.
 *
 * Guarantees:
 * - on a real node every container really runs, from images built on this host: the Job's
 *   `busybox:*` images are replaced by the local busybox image with `imagePullPolicy: Never`, and
 *   any other image is refused by name, so nothing is ever pulled and what runs is what was said;
 * - on the simulated kubelet the Job is applied as written (its script annotation drives it);
 * - `stop()` stops the node before the control plane and leaves nothing behind.
 */
import type { V1Job } from '@kubernetes/client-node';
import { type ControlPlane, nodePrerequisiteProblem, type RealNode, SimulatedKubelet, startControlPlane, startNode } from '@podlife/testbed';

export interface DemoCluster {
  readonly cp: ControlPlane;
  /** A real node runs the containers; pods/log and pods/exec are served by a real kubelet. */
  readonly real: boolean;
  /** An image with `kill` and `sh` the controller may use for ephemeral stop containers. */
  readonly stopImage: string;
  /** The Job as this cluster can run it, and what was changed, for the timeline. */
  runnable(job: V1Job): { job: V1Job; changes: string[] };
  stop(): Promise<void>;
}

type Say = (line: string) => void;

export async function startDemoCluster(say: Say, dim: (s: string) => string): Promise<DemoCluster> {
  const problem = nodePrerequisiteProblem();
  if (problem) say(`no real node on this host (${problem}): the simulated kubelet plays the node, no container really runs`);
  say(`starting a local control plane (etcd, kube-apiserver, kube-controller-manager${problem ? '' : ', kube-scheduler'})`);
  const cp = await startControlPlane({ controllerManager: true, scheduler: !problem, log: (line) => say(dim(line)) });
  try {
    return problem ? await simulated(cp, say) : await realNode(cp, say, dim);
  } catch (err) {
    await cp.stop();
    throw err;
  }
}

async function simulated(cp: ControlPlane, say: Say): Promise<DemoCluster> {
  const kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['demo-node'] });
  await kubelet.start();
  say('simulated kubelet: node demo-node registered (it binds pods and reports container states; nothing really runs)');
  return {
    cp,
    real: false,
    stopImage: 'busybox:1.36',
    runnable: (job) => ({ job, changes: [] }),
    async stop() {
      await kubelet.stop().catch(() => {});
      await cp.stop();
    },
  };
}

async function realNode(cp: ControlPlane, say: Say, dim: (s: string) => string): Promise<DemoCluster> {
  say('starting a real node (containerd, runc, a CNI bridge on this host, kubelet)');
  const node: RealNode = await startNode(cp, { name: 'demo-node', log: (line) => say(dim(line)) });
  say(`node ${node.name} Ready: kubelet ${node.kubeletVersion}, pods on ${node.podSubnet} (a local bridge, no route out)`);
  return {
    cp,
    real: true,
    stopImage: node.images.busybox,
    runnable: (job) => localImages(job, node.images.busybox),
    async stop() {
      await node.stop().catch((err: unknown) => say(`stopping the node: ${err instanceof Error ? err.message : String(err)}`));
      await cp.stop();
    },
  };
}

/** The Job with its busybox images replaced by the one built on this host (never pulled). */
function localImages(job: V1Job, busybox: string): { job: V1Job; changes: string[] } {
  const copy = structuredClone(job);
  const changes = new Set<string>();
  const spec = copy.spec?.template.spec;
  for (const c of [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])]) {
    if (!/^(docker\.io\/)?(library\/)?busybox(:[\w.-]+)?$/.test(c.image ?? '')) {
      throw new Error(`container ${c.name}: the demo node has only a locally built busybox image, not ${c.image ?? '(no image)'}`);
    }
    changes.add(`${c.image} -> ${busybox}`);
    c.image = busybox;
    c.imagePullPolicy = 'Never';
  }
  return { job: copy, changes: [...changes].map((c) => `image ${c} (built on this host from Debian's busybox-static; imagePullPolicy Never)`) };
}
