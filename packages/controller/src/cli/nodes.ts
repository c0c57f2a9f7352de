/**
 * `podlife explain node <name>` and `podlife nodes`: fetch nodes and NodeReadinessRules, print
 * which readiness gates hold each node and why.
 *
 * Guarantees:
 * - the gates shown are the controller's: the same `evaluateNode`, with zero-config on as the
 *   controller has it by default;
 * - a cluster without the NodeReadinessRule CRD still gets an answer (zero-config gates only),
 *   with one line on stderr saying so; any other failure to read rules is an error, since an
 *   answer without the rules would be wrong;
 * - an unknown node is exit code 1 with a message naming it; output on stdout is only the
 *   explanation (text, JSON or YAML), notes and errors go to stderr;
 * - text fits the terminal (80 columns when unknown); `-o wide` adds columns and never wraps.
 */
import type { V1Node } from '@kubernetes/client-node';
import { isNotFound, resourcePath } from '@podlife/core';
import type { Query } from '@podlife/core';
import { explainNode, renderNodeExplanation, resolveRules, rulePath } from '@podlife/node-readiness';
import type { EvaluateOptions, NodeExplanation, NodeReadinessRule } from '@podlife/node-readiness';
import type { ExplainNodeArgs, NodesArgs } from './args.js';
import { connect } from './kubeconfig.js';
import { fitText, isData, renderData, renderTable, textWidth } from './output.js';

/** Where text goes: the terminal's width when it has one. */
export interface Streams {
  out(text: string): void;
  err(text: string): void;
  columns?: number | undefined;
}

/** What the node commands read through; a KubeClient is one. */
export interface ReadApi {
  get<T>(path: string, query?: Query): Promise<T>;
}

/** The controller's default (NodeReadinessControllerOptions.zeroConfig): the CLI must agree with it. */
const evaluateOptions: EvaluateOptions = { zeroConfig: true };
const pageSize = 500;

export interface Rules {
  rules: NodeReadinessRule[];
  /** False when the API server does not serve NodeReadinessRules (the CRD is not installed). */
  installed: boolean;
}

export async function fetchRules(api: ReadApi): Promise<Rules> {
  try {
    return { rules: await listAll<NodeReadinessRule>(api, rulePath()), installed: true };
  } catch (err) {
    if (isNotFound(err)) return { rules: [], installed: false };
    throw new Error(`cannot list NodeReadinessRules: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

async function listAll<T>(api: ReadApi, path: string): Promise<T[]> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const page = await api.get<{ items?: T[]; metadata?: { continue?: string } }>(path, { limit: pageSize, ...(token ? { continue: token } : {}) });
    items.push(...(page.items ?? []));
    token = page.metadata?.continue || undefined;
  } while (token);
  return items;
}

/** NodeExplanation as JSON: the rejected-rules Map becomes an object keyed by rule name. */
export function explanationJson(e: NodeExplanation): Omit<NodeExplanation, 'rejected'> & { rejected: Record<string, unknown> } {
  return { ...e, rejected: Object.fromEntries(e.rejected) };
}

function noteMissingCrd(rules: Rules, io: Streams): void {
  if (!rules.installed) {
    io.err('podlife: NodeReadinessRules are not installed in this cluster (no nodereadinessrules.readiness.podlife.dev CRD): showing zero-config readiness.k8s.io/ gates only\n');
  }
}

export async function runExplainNode(args: ExplainNodeArgs, io: Streams): Promise<number> {
  const client = await connect(args);
  try {
    let node: V1Node;
    try {
      node = await client.get<V1Node>(resourcePath({ version: 'v1', resource: 'nodes', name: args.node }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      io.err(`podlife: node ${args.node} not found (kubectl get nodes lists what exists)\n`);
      return 1;
    }
    const rules = await fetchRules(client);
    noteMissingCrd(rules, io);
    const e = explainNode(node, rules.rules, Date.now(), evaluateOptions);
    const text = isData(args.output) ? renderData(explanationJson(e), args.output) : renderNodeExplanation(e);
    io.out(`${args.output === 'text' ? fitText(text, textWidth(args.width, io.columns)) : text}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** NAME, HELD BY, READINESS TAINTS; wide adds each gate's source and mode and the unexplained taints. */
export function nodesTable(nodes: readonly V1Node[], rules: readonly NodeReadinessRule[], nowMs: number, wide: boolean): string[][] {
  const rows = [wide ? ['NAME', 'HELD BY', 'READINESS TAINTS', 'GATES', 'UNMANAGED TAINTS'] : ['NAME', 'HELD BY', 'READINESS TAINTS']];
  for (const node of [...nodes].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1))) {
    const e = explainNode(node, rules, nowMs, evaluateOptions);
    const held = e.holding.map((g) => `${g.gate} (${g.state})`).join(', ') || '-';
    const taints = (node.spec?.taints ?? []).filter((t) => t.key.startsWith('readiness.k8s.io/')).map((t) => `${t.key}:${t.effect}`).join(', ') || '-';
    const row = [e.node, held, taints];
    if (wide) row.push(e.gates.map((g) => `${g.gate} (${g.source}, ${g.mode}, ${g.state})`).join(', ') || '-', e.unexplainedTaints.join(', ') || '-');
    rows.push(row);
  }
  return rows;
}

export async function runNodes(args: NodesArgs, io: Streams): Promise<number> {
  const client = await connect(args);
  try {
    const [nodes, rules] = await Promise.all([listAll<V1Node>(client, resourcePath({ version: 'v1', resource: 'nodes' })), fetchRules(client)]);
    noteMissingCrd(rules, io);
    const nowMs = Date.now();
    if (isData(args.output)) {
      const items = nodes.map((n) => explanationJson(explainNode(n, rules.rules, nowMs, evaluateOptions)));
      io.out(`${renderData({ items }, args.output)}\n`);
      return 0;
    }
    const wide = args.output === 'wide';
    io.out(`${renderTable(nodesTable(nodes, rules.rules, nowMs, wide), wide ? undefined : textWidth(args.width, io.columns))}\n`);
    // The table has no room for them, but a rule not in force explains a taint that never goes.
    for (const [name, r] of resolveRules(rules.rules).rejected) io.err(`podlife: rule ${name} is not in force (${r.reason}): ${r.message}\n`);
    return 0;
  } finally {
    client.close();
  }
}
