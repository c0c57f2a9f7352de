/**
 * An informer's copy of a namespace's ConfigMaps against what the API server holds: both as
 * name -> resourceVersion, and a wait until they are equal. Reads from the server are retried
 * across a restart or a pause, so a suite can compare right after a fault.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import { resourcePath, type Informer, type KubeClient } from '@podlife/core';
import { retry, waitFor } from './wait.js';

export const configMapsPath = (namespace: string, name?: string): string => resourcePath({ version: 'v1', resource: 'configmaps', namespace, name });

export interface StateOptions {
  /** How often a read of the server is tried (200 ms apart) before its error is thrown; 50 unless told. */
  attempts?: number;
  /** How long expectStoreMatchesServer waits; 30 s unless told. */
  timeoutMs?: number;
}

const versions = (items: V1ConfigMap[]): Map<string, string> => new Map(items.map((cm) => [cm.metadata?.name ?? '', cm.metadata?.resourceVersion ?? '']));

/** name -> resourceVersion of every ConfigMap in the namespace, as the server sees it. */
export async function serverState(client: KubeClient, namespace: string, opts: StateOptions = {}): Promise<Map<string, string>> {
  const list = await retry(() => client.get<{ items: V1ConfigMap[] }>(configMapsPath(namespace)), opts.attempts);
  return versions(list.items);
}

/** name -> resourceVersion of every ConfigMap in the informer's store. */
export function storeState(informer: Informer<V1ConfigMap>): Map<string, string> {
  return versions(informer.store.list());
}

function sameState(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

export async function expectStoreMatchesServer(client: KubeClient, namespace: string, informer: Informer<V1ConfigMap>, opts: StateOptions = {}): Promise<void> {
  await waitFor('the informer store to equal the server state', async () => sameState(storeState(informer), await serverState(client, namespace, opts)), { timeoutMs: opts.timeoutMs ?? 30_000 });
}
