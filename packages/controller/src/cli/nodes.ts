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
 * - text fits the terminal (80 columns when unknown); `-o wide` adds columns and never wraps;
 * - text from the cluster is shown with control characters escaped (terminal.ts), JSON and YAML
 *   exact; a malformed node (a taint without a key, a condition without a type) is read as far as
 *   it can be (narrow.ts), and a node that still cannot be evaluated is a row that says so; a rule
 *   that cannot be resolved at all is left out, with a line on stderr saying why;
 * - lists are bounded (`listBounds`, kubeconfig.ts): a server that keeps sending continue tokens
 *   or oversized pages ends the command with an error naming the list.
 */
import type { V1Node } from '@kubernetes/client-node';
import { isNotFound, listPages, resourcePath } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { explainNode, renderNodeExplanation, resolveRules, rulePath } from '@podlife/node-readiness';
import type { EvaluateOptions, NodeExplanation, NodeReadinessRule } from '@podlife/node-readiness';
import type { ExplainNodeArgs, NodesArgs, OutputFormat } from './args.js';
import { connect, listBounds } from './kubeconfig.js';
import { narrowNode } from './narrow.js';
import { readinessPods } from './readiness-pods.js';
import { fitText, isData, renderData, renderTable, textWidth } from './output.js';
import { terminalSafe, terminalText } from './terminal.js';

/** Where text goes: the terminal's width when it has one. */
export interface Streams {
  out(text: string): void;
  err(text: string): void;
  columns?: number | undefined;
}

/** What the node commands read through; a KubeClient is one. */
export type ReadApi = Pick<KubeClient, 'get' | 'request'>;

/** The controller's default (NodeReadinessControllerOptions.zeroConfig): the CLI must agree with it. */
const evaluateOptions: EvaluateOptions = { zeroConfig: true };

export interface Rules {
  rules: NodeReadinessRule[];
  /** False when the API server does not serve NodeReadinessRules (the CRD is not installed). */
  installed: boolean;
  /** Rules left out because they cannot be read at all (a shape no CRD schema admits): why, each. */
  unreadable: string[];
}

/** Why `rule` cannot be resolved at all, or undefined when it can (an invalid rule is read, then rejected). */
function unreadable(rule: unknown): string | undefined {
  try {
    resolveRules([rule as NodeReadinessRule]);
    return undefined;
  } catch (err) {
    const name = (rule as { metadata?: { name?: unknown } } | null)?.metadata?.name;
    return `${typeof name === 'string' ? name : '(no name)'}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export async function fetchRules(api: ReadApi): Promise<Rules> {
  try {
    const listed = await listAll<unknown>(api, rulePath());
    const why = listed.map(unreadable);
    return { rules: listed.filter((_, i) => why[i] === undefined) as NodeReadinessRule[], installed: true, unreadable: why.filter((w) => w !== undefined) };
  } catch (err) {
    if (isNotFound(err)) return { rules: [], installed: false, unreadable: [] };
    throw new Error(`cannot list NodeReadinessRules: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Every item of a list, within `listBounds`. */
export async function listAll<T>(api: ReadApi, path: string): Promise<T[]> {
  const items: T[] = [];
  for await (const page of listPages<T>(api, path, listBounds)) items.push(...page);
  return items;
}

/** `podlife explain node` as text (control characters escaped) or data (exact). */
export function renderNodeText(e: NodeExplanation, output: OutputFormat, width: number): string {
  if (isData(output)) return renderData(explanationJson(e), output);
  const text = renderNodeExplanation(terminalSafe(e));
  return output === 'text' ? fitText(text, width) : text;
}

/** NodeExplanation as JSON: the rejected-rules Map becomes an object keyed by rule name. */
export function explanationJson(e: NodeExplanation): Omit<NodeExplanation, 'rejected'> & { rejected: Record<string, unknown> } {
  return { ...e, rejected: Object.fromEntries(e.rejected) };
}

function noteRules(rules: Rules, io: Streams): void {
  for (const why of rules.unreadable) io.err(`${terminalText(`podlife: NodeReadinessRule ${why}; left out`)}\n`);
  if (!rules.installed) {
    io.err('podlife: NodeReadinessRules are not installed in this cluster (no nodereadinessrules.readiness.podlife.dev CRD): showing zero-config readiness.k8s.io/ gates only\n');
  }
}

export async function runExplainNode(args: ExplainNodeArgs, io: Streams): Promise<number> {
  const client = await connect(args);
  try {
    let node: V1Node;
    try {
      node = narrowNode(await client.get<unknown>(resourcePath({ version: 'v1', resource: 'nodes', name: args.node })));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      io.err(`podlife: node ${args.node} not found (kubectl get nodes lists what exists)\n`);
      return 1;
    }
    const rules = await fetchRules(client);
    noteRules(rules, io);
    const pods = await readinessPods(client, rules.rules, args.node);
    const e = explainNode(node, rules.rules, Date.now(), { ...evaluateOptions, ...(pods ? { pods } : {}) });
    io.out(`${renderNodeText(e, args.output, textWidth(args.width, io.columns))}\n`);
    return 0;
  } finally {
    client.close();
  }
}

/** One node's cells: NAME, HELD BY, READINESS TAINTS, and with `wide` GATES, UNMANAGED TAINTS. */
function nodeRow(node: V1Node, rules: readonly NodeReadinessRule[], nowMs: number, wide: boolean, options: EvaluateOptions): string[] {
  try {
    const e = explainNode(node, rules, nowMs, options);
    const held = e.holding.map((g) => `${g.gate} (${g.state})`).join(', ') || '-';
    const taints = (node.spec?.taints ?? []).filter((t) => t.key.startsWith('readiness.k8s.io/')).map((t) => `${t.key}:${t.effect}`).join(', ') || '-';
    const row = [e.node, held, taints];
    if (wide) row.push(e.gates.map((g) => `${g.gate} (${g.source}, ${g.mode}, ${g.state})`).join(', ') || '-', e.unexplainedTaints.join(', ') || '-');
    return row;
  } catch (err) {
    const why = `cannot read this node: ${err instanceof Error ? err.message : String(err)}`;
    return [node.metadata?.name ?? '', why, '?', ...(wide ? ['?', '?'] : [])];
  }
}

/**
 * NAME, HELD BY, READINESS TAINTS; wide adds each gate's source and mode and the unexplained taints.
 * Nodes are read as `narrowNode` reads them, cells escaped for the terminal.
 */
export function nodesTable(nodes: readonly unknown[], rules: readonly NodeReadinessRule[], nowMs: number, wide: boolean, options: EvaluateOptions = evaluateOptions): string[][] {
  const rows = [wide ? ['NAME', 'HELD BY', 'READINESS TAINTS', 'GATES', 'UNMANAGED TAINTS'] : ['NAME', 'HELD BY', 'READINESS TAINTS']];
  const read = nodes.map(narrowNode).sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  for (const node of read) rows.push(nodeRow(node, rules, nowMs, wide, options).map(terminalText));
  return rows;
}

/** The stderr line for a rule not in force (the table has no room for it). */
export function rejectedRuleLine(name: string, r: { reason: string; message: string }): string {
  return terminalText(`podlife: rule ${name} is not in force (${r.reason}): ${r.message}`);
}

export async function runNodes(args: NodesArgs, io: Streams): Promise<number> {
  const client = await connect(args);
  try {
    const [nodes, rules] = await Promise.all([listAll<unknown>(client, resourcePath({ version: 'v1', resource: 'nodes' })), fetchRules(client)]);
    noteRules(rules, io);
    const nowMs = Date.now();
    const pods = await readinessPods(client, rules.rules);
    const options = { ...evaluateOptions, ...(pods ? { pods } : {}) };
    if (isData(args.output)) {
      const items = nodes.map((n) => explanationJson(explainNode(narrowNode(n), rules.rules, nowMs, options)));
      io.out(`${renderData({ items }, args.output)}\n`);
      return 0;
    }
    const wide = args.output === 'wide';
    io.out(`${renderTable(nodesTable(nodes, rules.rules, nowMs, wide, options), wide ? undefined : textWidth(args.width, io.columns))}\n`);
    // The table has no room for them, but a rule not in force explains a taint that never goes.
    for (const [name, r] of resolveRules(rules.rules).rejected) io.err(`${rejectedRuleLine(name, r)}\n`);
    return 0;
  } finally {
    client.close();
  }
}
