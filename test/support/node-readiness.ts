/**
 * What the node-readiness suites share, simulated nodes and real ones alike: the rule CRD
 * installed and listable, node conditions written the way a node agent writes them, and the
 * first moment a watched object satisfies a predicate.
 *
 * Guarantees:
 * - `installRuleCrd` resolves only once rules can be listed (the CRD is Established and discovery
 *   has caught up), and tolerates a CRD another suite installed; so does `installNrcStandInCrd`;
 * - `setNodeConditions` is a strategic-merge patch of nodes/status: conditions merge by type, so
 *   the kubelet's own conditions and ours coexist, as they do with any node agent;
 * - `firstSeen` reports the client's clock when the watch delivered the first version for which
 *   the predicate holds (the current version counts), so latencies are not rounded to a poll
 *   interval or to the API's one-second timestamps; `opened` says when changes from then on
 *   cannot be missed.
 */
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import { ApiError, ContentType, lines, resourcePath } from '@podlife/core';
import type { KubeClient, KubeObject } from '@podlife/core';
import { NrcGroup, NrcResource, NrcVersion, nodeReadinessRuleCrd, rulePath } from '@podlife/node-readiness';
import { waitFor } from './wait.js';

export const nodePath = (name?: string, sub?: string): string =>
  resourcePath({ version: 'v1', resource: 'nodes', ...(name ? { name } : {}), ...(sub ? { subresource: sub } : {}) });

export async function installRuleCrd(client: KubeClient): Promise<void> {
  const crds = resourcePath({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  try {
    await client.create(crds, nodeReadinessRuleCrd);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
  await waitFor('NodeReadinessRule CRD established', async () => {
    const crd = await client.get<{ status?: { conditions?: V1NodeCondition[] } }>(`${crds}/${nodeReadinessRuleCrd.metadata.name}`);
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  // Discovery of a new CRD lags its Established condition by a moment.
  await waitFor('rules listable', async () => client.get(rulePath()).then(() => true, () => false));
}

/**
 * A stand-in for node-readiness-controller's CRD: its group, names and status subresource; spec
 * and status keep whatever they are given, as a newer NRC's schema keeps a field podlife does not
 * know. Installed once rules of it can be listed.
 */
export async function installNrcStandInCrd(client: KubeClient): Promise<void> {
  const crds = resourcePath({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  const kept = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${NrcResource}.${NrcGroup}` },
    spec: {
      group: NrcGroup,
      scope: 'Cluster',
      names: { plural: NrcResource, singular: 'nodereadinessrule', kind: 'NodeReadinessRule', listKind: 'NodeReadinessRuleList' },
      versions: [{ name: NrcVersion, served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', properties: { spec: kept, status: kept } } } }],
    },
  };
  try {
    await client.create(crds, crd);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  }
  const rules = resourcePath({ group: NrcGroup, version: NrcVersion, resource: NrcResource });
  await waitFor('NRC rules listable', async () => client.get(rules).then(() => true, () => false));
}

/** A node condition as an agent reports it; both times default to now. */
export function nodeCondition(type: string, status: string, opts: { reason?: string; heartbeatMs?: number; transitionMs?: number } = {}): V1NodeCondition {
  const now = Date.now();
  const heartbeat = new Date(opts.heartbeatMs ?? now).toISOString();
  const transition = new Date(opts.transitionMs ?? now).toISOString();
  return {
    type,
    status,
    lastHeartbeatTime: heartbeat as unknown as Date,
    lastTransitionTime: transition as unknown as Date,
    reason: opts.reason ?? 'Test',
  };
}

export async function setNodeConditions(client: KubeClient, name: string, conditions: V1NodeCondition[]): Promise<void> {
  await client.patch(nodePath(name, 'status'), { status: { conditions } }, ContentType.StrategicMergePatch);
}

export const getNode = (client: KubeClient, name: string): Promise<V1Node> => client.get<V1Node>(nodePath(name));
export const hasTaint = (n: V1Node, key: string): boolean => (n.spec?.taints ?? []).some((t) => t.key === key);
export const conditionOf = (n: V1Node, type: string): V1NodeCondition | undefined => n.status?.conditions?.find((c) => c.type === type);

export interface Sighting<T> {
  /** Client clock (Date.now()) when the version arrived. */
  atMs: number;
  object: T;
}

export interface Watching<T> {
  /** Resolves once the watch has delivered the object's current version: later changes are seen. */
  opened: Promise<void>;
  /** The first version for which the predicate held. */
  seen: Promise<Sighting<T>>;
}

/**
 * Watches the object `name` in the collection `path` until `predicate` holds for a version the
 * API server sends. Start it and await `opened` before the change it waits for.
 */
export function firstSeen<T extends KubeObject>(
  client: KubeClient,
  path: string,
  name: string,
  predicate: (obj: T) => boolean,
  opts: { timeoutMs?: number; what?: string } = {},
): Watching<T> {
  const abort = new AbortController();
  const timeoutMs = opts.timeoutMs ?? 60_000;
  let last: T | undefined;
  let markOpened: () => void = () => {};
  const opened = new Promise<void>((resolve) => (markOpened = resolve));
  const seen = (async (): Promise<Sighting<T>> => {
    let resourceVersion: string | undefined;
    while (!abort.signal.aborted) {
      try {
        const res = await client.stream({
          path,
          signal: abort.signal,
          query: { watch: 1, fieldSelector: `metadata.name=${name}`, allowWatchBookmarks: true, ...(resourceVersion ? { resourceVersion } : {}) },
        });
        for await (const line of lines(res)) {
          const atMs = Date.now();
          const event = JSON.parse(line) as { type: string; object: T };
          if (event.type === 'ERROR') {
            resourceVersion = undefined;
            break;
          }
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK' || event.type === 'DELETED') continue;
          last = event.object;
          markOpened();
          if (predicate(event.object)) {
            res.destroy();
            return { atMs, object: event.object };
          }
        }
      } catch {
        if (abort.signal.aborted) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? `${path}/${name}`}; last version seen: ${JSON.stringify((last as { status?: unknown } | undefined)?.status ?? last)}`);
  })();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const done = seen.finally(() => {
    clearTimeout(timer);
    abort.abort();
  });
  // A watch that ends before the object showed up must fail the wait on `opened` too.
  return { opened: Promise.race([opened, done.then(() => undefined)]), seen: done };
}
