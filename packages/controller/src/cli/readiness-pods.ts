/**
 * The pods that readiness rules' pod conditions read, fetched for `podlife explain node` and
 * `podlife nodes` so they judge those conditions as the controller does.
 *
 * Guarantees: only the namespaces the rules name are read, and for one node only its pods
 * (`spec.nodeName=<node>`); a DaemonSet that cannot be read (absent, or forbidden) is reported as
 * absent only on a 404, otherwise as unknown; no rule with a pod condition, no request.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, listPages, resourcePath } from '@podlife/core';
import { podList, resolveRules } from '@podlife/node-readiness';
import type { NodeReadinessRule, PodLookup } from '@podlife/node-readiness';
import { listBounds } from './kubeconfig.js';
import type { ReadApi } from './nodes.js';

/** Pods (of `node`, or of every node) and DaemonSets the rules' pod conditions name; undefined when none do. */
export async function readinessPods(api: ReadApi, rules: readonly NodeReadinessRule[], node?: string): Promise<PodLookup | undefined> {
  const sources = resolveRules(rules).active.flatMap((r) => r.conditions.flatMap((c) => (c.pod ? [c.pod] : [])));
  if (sources.length === 0) return undefined;
  const pods: V1Pod[] = [];
  for (const ns of new Set(sources.map((s) => s.namespace))) {
    const query = { fieldSelector: node ? `spec.nodeName=${node}` : 'spec.nodeName!=' };
    for await (const page of listPages<V1Pod>(api, resourcePath({ version: 'v1', resource: 'pods', namespace: ns }), { ...listBounds, query })) pods.push(...page);
  }
  const daemonSets = new Set<string>();
  let known = true;
  for (const s of sources) {
    if (s.daemonSet === undefined) continue;
    try {
      await api.get(resourcePath({ group: 'apps', version: 'v1', resource: 'daemonsets', namespace: s.namespace, name: s.daemonSet }));
      daemonSets.add(`${s.namespace}/${s.daemonSet}`);
    } catch (err) {
      if (!isNotFound(err)) known = false;
    }
  }
  return podList(pods, known ? daemonSets : undefined);
}
