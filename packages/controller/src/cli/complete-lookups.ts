/**
 * The names completion offers, read from the cluster the command line points at: pods in the
 * namespace, nodes, namespaces, and the kubeconfig's contexts.
 *
 * Guarantees: never throws and never hangs a shell: each lookup gives up after `timeoutMs` (or on
 * any error) with no names; at most one page of names is read, and at most `LIMIT` names kept
 * (completion.ts offers only those that are one shell word).
 */
import { resourcePath } from '@podlife/core';
import type { CompletionLookups, LookupFlags } from './completion.js';
import { connect, contextNamespace, loadKubeConfig } from './kubeconfig.js';

const LIMIT = 500;

async function names(flags: LookupFlags, path: (namespace: string) => string, timeoutMs: number): Promise<string[]> {
  let client: Awaited<ReturnType<typeof connect>> | undefined;
  const timeout = new Promise<string[]>((resolve) => setTimeout(() => resolve([]), timeoutMs).unref());
  const lookup = (async () => {
    client = await connect(flags);
    const list = await client.get<{ items?: { metadata?: { name?: string } }[] }>(path(flags.namespace ?? contextNamespace(flags)), { limit: LIMIT });
    const items = Array.isArray(list?.items) ? list.items.slice(0, LIMIT) : [];
    return items.map((i) => i?.metadata?.name).filter((n): n is string => typeof n === 'string' && n !== '');
  })().catch(() => []);
  try {
    return await Promise.race([lookup, timeout]);
  } finally {
    client?.close();
  }
}

export function clusterLookups(timeoutMs = 2000): CompletionLookups {
  return {
    pods: (f) => names(f, (ns) => resourcePath({ version: 'v1', resource: 'pods', namespace: ns }), timeoutMs),
    nodes: (f) => names(f, () => resourcePath({ version: 'v1', resource: 'nodes' }), timeoutMs),
    namespaces: (f) => names(f, () => resourcePath({ version: 'v1', resource: 'namespaces' }), timeoutMs),
    contexts: (f) => {
      try {
        return loadKubeConfig({ kubeconfig: f.kubeconfig }).getContexts().map((c) => c.name);
      } catch {
        return [];
      }
    },
  };
}
