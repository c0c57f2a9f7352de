/**
 * The kubeconfig the way kubectl finds it (`--kubeconfig`, KUBECONFIG, ~/.kube/config, in-cluster),
 * with `--context` checked up front: an unknown context is an error naming it and the contexts
 * that exist, not a later "no current cluster". Loading is `options/kubeconfig.ts`: no kubeconfig
 * is "no kubeconfig found (looked at …)", and a malformed one never prints its contents.
 *
 * The client reads as if the API server were hostile (ADR 0260): one answer is at most
 * `maxResponseBytes`, and a list at most `listBounds.maxPages` pages of `listBounds.pageSize`
 * items; past either, the command ends with an error naming the request.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '@podlife/core';
import { loadKubeConfig as load } from '../options/kubeconfig.js';

/** The most bytes of one answer the CLI reads: ~500 pods of 250 KiB each. */
export const maxResponseBytes = 128 * 1024 * 1024;

/** Lists: pages of 500, at most 500 of them (250,000 items, past the 150,000 pods Kubernetes is tested with). */
export const listBounds: { readonly pageSize: number; readonly maxPages: number } = { pageSize: 500, maxPages: 500 };

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
  return KubeClient.fromKubeConfig(loadKubeConfig(flags), { maxResponseBytes });
}
