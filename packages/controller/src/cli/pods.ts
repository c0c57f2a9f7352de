/**
 * `podlife pods [-n ns | -A]`: the pods podlife manages — those with lifecycle annotations or the
 * `podlife.dev/managed` label — with their containers' roles and where their lifecycle stands,
 * read from the conditions the controller writes.
 *
 * Guarantees: read-only; pages through the list within `listBounds` (kubeconfig.ts), never one
 * unbounded response; the state shown is the controller's own record (conditions), never
 * re-decided here; text fits the terminal and `-o wide` adds the stop specs, the node and the
 * managed label; text from the cluster is shown with control characters escaped (terminal.ts),
 * JSON and YAML exact; a pod that cannot be read is a row that says why, never a crash. When some of the pods listed have
 * lifecycle annotations but not the managed label, one line on stderr after the table says how many
 * and points at `podlife explain --unlabelled`.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { listPages, resourcePath } from '@podlife/core';
import { ConditionType, ManagedLabel, formatStopSpec, hasLifecycleAnnotations, hasManagedLabel, isUnlabelledAnnotated, readLifecycle } from '@podlife/keystone';
import type { PodsArgs } from './args.js';
import { connect, contextNamespace, listBounds } from './kubeconfig.js';
import type { Streams } from './nodes.js';
import { fitText, isData, renderData, renderTable, textWidth } from './output.js';
import { terminalText } from './terminal.js';
import { unlabelledFooter } from './unlabelled.js';

export interface PodRow {
  namespace: string;
  name: string;
  /** e.g. `app=keystone proxy=sidecar`; `invalid` when the annotations are. */
  roles: string;
  /** The controller's record: Invalid, Stopping, SidecarsStopped, KeystoneFinished, else the phase. */
  lifecycle: string;
  /** Why, from the condition's message when there is one. */
  message: string;
  stops: string;
  node: string;
  managedLabel: boolean;
  age: string;
}

function condition(pod: V1Pod, type: string) {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** The pod's lifecycle as the controller recorded it; a pod that cannot be read is `Unreadable`, with why. */
export function podRow(pod: V1Pod, nowMs: number): PodRow {
  try {
    return readRow(pod, nowMs);
  } catch (err) {
    const text = (v: unknown, otherwise: string): string => (typeof v === 'string' ? v : otherwise);
    const message = `cannot read this pod: ${err instanceof Error ? err.message : String(err)}`;
    return { namespace: text(pod?.metadata?.namespace, ''), name: text(pod?.metadata?.name, ''), roles: '?', lifecycle: 'Unreadable', message, stops: '?', node: '?', managedLabel: false, age: '?' };
  }
}

function readRow(pod: V1Pod, nowMs: number): PodRow {
  const reading = readLifecycle(pod);
  const valid = condition(pod, ConditionType.LifecycleValid);
  const stopped = condition(pod, ConditionType.SidecarsStopped);
  const keystone = condition(pod, ConditionType.KeystoneFinished);
  let lifecycle = pod.status?.phase ?? 'Unknown';
  let message = '';
  if (reading.kind === 'invalid' || valid?.status === 'False') {
    lifecycle = 'Invalid';
    message = valid?.message ?? (reading.kind === 'invalid' ? reading.errors.map((e) => e.message).join('; ') : '');
  } else if (stopped?.status === 'True') {
    lifecycle = 'SidecarsStopped';
    message = stopped.message ?? '';
  } else if (stopped?.status === 'False') {
    lifecycle = 'Stopping';
    message = stopped.message ?? '';
  } else if (keystone?.status === 'True') {
    lifecycle = 'KeystoneFinished';
    message = keystone.message ?? '';
  }
  const containers = reading.kind === 'valid' ? reading.lifecycle.containers.filter((c) => c.role !== 'main') : [];
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    roles: reading.kind === 'invalid' ? 'invalid' : containers.map((c) => `${c.name}=${c.role}`).join(' ') || '-',
    lifecycle,
    message,
    stops: containers.filter((c) => c.role === 'sidecar').map((c) => `${c.name}=${formatStopSpec(c.stop)}`).join(' ') || '-',
    node: pod.spec?.nodeName ?? '-',
    managedLabel: hasManagedLabel(pod.metadata?.labels),
    age: age(pod.metadata?.creationTimestamp, nowMs),
  };
}

/** kubectl's short age: 45s, 12m, 5h, 3d. */
export function age(created: Date | string | undefined, nowMs: number): string {
  if (created === undefined) return '-';
  const s = Math.max(0, Math.floor((nowMs - new Date(created).getTime()) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** The table's cells, escaped for the terminal. */
export function podsTable(rows: readonly PodRow[], opts: { allNamespaces: boolean; wide: boolean }): string[][] {
  const header = [...(opts.allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'ROLES', 'LIFECYCLE', 'AGE', ...(opts.wide ? ['NODE', 'STOP', 'MANAGED', 'MESSAGE'] : [])];
  return [
    header,
    ...rows.map((r) =>
      [
        ...(opts.allNamespaces ? [r.namespace] : []),
        r.name,
        r.roles,
        r.lifecycle,
        r.age,
        ...(opts.wide ? [r.node, r.stops, r.managedLabel ? 'yes' : 'no', r.message || '-'] : []),
      ].map(terminalText),
    ),
  ];
}

/** Pods that are podlife's: annotated, or labelled managed. */
export function isPodlifePod(pod: V1Pod): boolean {
  const metadata = pod?.metadata;
  return hasLifecycleAnnotations(metadata?.annotations) || hasManagedLabel(metadata?.labels);
}

const sortKey = (p: V1Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;

export async function runPods(args: PodsArgs, io: Streams): Promise<number> {
  const namespace = args.allNamespaces ? undefined : (args.namespace ?? contextNamespace(args));
  const client = await connect(args);
  try {
    const pods: V1Pod[] = [];
    for await (const page of listPages<V1Pod>(client, resourcePath({ version: 'v1', resource: 'pods', namespace }), listBounds)) pods.push(...page.filter(isPodlifePod));
    pods.sort((a, b) => sortKey(a).localeCompare(sortKey(b)));
    const nowMs = Date.now();
    const rows = pods.map((p) => podRow(p, nowMs));
    if (isData(args.output)) {
      io.out(`${renderData({ items: rows }, args.output)}\n`);
      return 0;
    }
    if (rows.length === 0) {
      io.err(`podlife: no pods with podlife annotations or the label ${ManagedLabel.key} ${namespace ? `in namespace ${namespace}` : 'in any namespace'}\n`);
      return 0;
    }
    const wide = args.output === 'wide';
    const width = wide ? undefined : textWidth(args.width, io.columns);
    io.out(`${renderTable(podsTable(rows, { allNamespaces: args.allNamespaces, wide }), width)}\n`);
    const unlabelled = pods.filter((p) => isUnlabelledAnnotated(p?.metadata)).length;
    if (unlabelled > 0) {
      const footer = unlabelledFooter(unlabelled, args);
      io.err(`${width === undefined ? footer : fitText(footer, width)}\n`);
    }
    return 0;
  } finally {
    client.close();
  }
}
