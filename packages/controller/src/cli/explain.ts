/**
 * `podlife explain <pod>`: fetch a pod and its Events, print the explanation; with --watch, redraw
 * every second until the pod is ready or finished.
 *
 * The kubeconfig is found the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster),
 * `--context` picks a context, and the namespace defaults to the context's.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, resourcePath } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { podExplanation, renderExplanation } from '@podlife/pod-conditions';
import type { PodEvent, PodExplanation } from '@podlife/pod-conditions';
import type { ExplainArgs } from './args.js';
import { connect, contextNamespace } from './kubeconfig.js';

export interface Output {
  write(text: string): void;
  isTTY: boolean;
  columns: number | undefined;
}

async function fetchExplanation(client: KubeClient, namespace: string, name: string): Promise<PodExplanation> {
  const pod = await client.get<V1Pod>(resourcePath({ version: 'v1', resource: 'pods', namespace, name }));
  const events = await client
    .get<{ items?: PodEvent[] }>(resourcePath({ version: 'v1', resource: 'events', namespace }), {
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name}`,
    })
    .catch(() => ({ items: [] as PodEvent[] })); // events are evidence, not a requirement (RBAC may hide them)
  return podExplanation(pod, events.items ?? [], Date.now());
}

function settled(x: PodExplanation): boolean {
  return x.diagnosis.cause === 'Ready' || x.diagnosis.cause === 'Succeeded' || x.diagnosis.cause === 'Failed';
}

/** Runs the command; resolves with the process exit code. */
export async function runExplain(args: ExplainArgs, out: Output, signal?: AbortSignal): Promise<number> {
  const namespace = args.namespace ?? contextNamespace(args.context);
  const client = await connect(args.context);
  const render = (x: PodExplanation): string =>
    args.output === 'json'
      ? JSON.stringify(x, null, args.watch ? undefined : 2)
      : renderExplanation(x, { width: args.width ?? Math.min(out.columns ?? 80, 120), ascii: args.ascii });
  try {
    if (!args.watch) {
      out.write(`${render(await fetchExplanation(client, namespace, args.pod))}\n`);
      return 0;
    }
    for (;;) {
      const x = await fetchExplanation(client, namespace, args.pod);
      // A terminal gets the view redrawn in place; a pipe gets one snapshot per poll.
      if (out.isTTY && args.output === 'text') out.write('\x1b[H\x1b[2J');
      out.write(`${render(x)}\n`);
      if (settled(x)) return 0;
      const stop = await sleep(1000, signal);
      if (stop) return 130;
    }
  } catch (err) {
    if (isNotFound(err)) {
      out.write(`pod ${namespace}/${args.pod} not found (kubectl get pods -n ${namespace} lists what exists)\n`);
      return 1;
    }
    throw err;
  } finally {
    client.close();
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(true);
    }, { once: true });
  });
}
