/**
 * The kubeconfig the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster), with
 * `--context` checked up front: an unknown context is an error naming it and the contexts that
 * exist, not a later "no current cluster". Loading is `options/kubeconfig.ts`: no kubeconfig is
 * "no kubeconfig found (looked at …)", and a malformed one never prints its contents.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@podlife/core';
import { loadKubeConfig as load } from '../options/kubeconfig.js';

function loadKubeConfig(context: string | undefined): KubeConfig {
  const loaded = load({ context });
  if (!loaded.ok) throw new Error(loaded.message);
  return loaded.kc;
}

/** The context's namespace, as kubectl would default it. */
export function contextNamespace(context: string | undefined): string {
  const kc = loadKubeConfig(context);
  return kc.getContextObject(context ?? kc.getCurrentContext())?.namespace ?? 'default';
}

export async function connect(context: string | undefined): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(loadKubeConfig(context));
}
