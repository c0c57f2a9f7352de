/**
 * The kubeconfig the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster), with
 * `--context` checked up front: an unknown context is an error naming it and the contexts that
 * exist, not a later "no current cluster".
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@podlife/core';

function loadKubeConfig(context: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  if (context !== undefined && kc.getContextObject(context) === null) {
    const known = kc.getContexts().map((c) => c.name);
    throw new Error(`--context "${context}": no such context in the kubeconfig (${known.length > 0 ? `it has ${known.join(', ')}` : 'it has none'})`);
  }
  return kc;
}

/** The context's namespace, as kubectl would default it. */
export function contextNamespace(context: string | undefined): string {
  const kc = loadKubeConfig(context);
  return kc.getContextObject(context ?? kc.getCurrentContext())?.namespace ?? 'default';
}

export async function connect(context: string | undefined): Promise<KubeClient> {
  loadKubeConfig(context);
  return KubeClient.fromDefault(context);
}
