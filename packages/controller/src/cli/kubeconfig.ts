/**
 * The kubeconfig the way kubectl finds it (`--kubeconfig`, KUBECONFIG, ~/.kube/config, in-cluster),
 * with `--context` checked up front: an unknown context is an error naming it and the contexts
 * that exist, not a later "no current cluster". Loading is `options/kubeconfig.ts`: no kubeconfig
 * is "no kubeconfig found (looked at …)", and a malformed one never prints its contents.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@podlife/core';
import { loadKubeConfig as load } from '../options/kubeconfig.js';

/** The cluster flags every command takes. */
export interface ClusterFlags {
  context?: string | undefined;
  kubeconfig?: string | undefined;
}

export function loadKubeConfig(flags: ClusterFlags): KubeConfig {
  const loaded = load({ context: flags.context, ...(flags.kubeconfig !== undefined ? { file: flags.kubeconfig } : {}) });
  if (!loaded.ok) throw new Error(loaded.message);
  return loaded.kc;
}

/** The context's namespace, as kubectl would default it. */
export function contextNamespace(flags: ClusterFlags): string {
  const kc = loadKubeConfig(flags);
  return kc.getContextObject(flags.context ?? kc.getCurrentContext())?.namespace ?? 'default';
}

export async function connect(flags: ClusterFlags): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(loadKubeConfig(flags));
}
