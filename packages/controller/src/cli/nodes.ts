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
 *   explanation (text or JSON), notes and errors go to stderr.
 */
import type { V1Node } from '@kubernetes/client-node';
import { isNotFound, resourcePath } from '@podlife/core';
import type { Query } from '@podlife/core';
import { explainNode, renderNodeExplanation, renderNodesTable, resolveRules, rulePath } from '@podlife/node-readiness';
import type { EvaluateOptions, NodeExplanation, NodeReadinessRule } from '@podlife/node-readiness';
import type { ExplainNodeArgs, NodesArgs } from './args.js';
import { connect } from './kubeconfig.js';

export interface Streams {
  out(text: string): void;
  err(text: string): void;
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
  const client = await connect(args.context);
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
    io.out(`${args.output === 'json' ? JSON.stringify(explanationJson(e), null, 2) : renderNodeExplanation(e)}\n`);
    return 0;
  } finally {
    client.close();
  }
}

export async function runNodes(args: NodesArgs, io: Streams): Promise<number> {
  const client = await connect(args.context);
  try {
    const [nodes, rules] = await Promise.all([listAll<V1Node>(client, resourcePath({ version: 'v1', resource: 'nodes' })), fetchRules(client)]);
    noteMissingCrd(rules, io);
    const nowMs = Date.now();
    if (args.output === 'json') {
      const items = nodes.map((n) => explanationJson(explainNode(n, rules.rules, nowMs, evaluateOptions)));
      io.out(`${JSON.stringify({ items }, null, 2)}\n`);
      return 0;
    }
    io.out(`${renderNodesTable(nodes, rules.rules, nowMs, evaluateOptions)}\n`);
    // The table has no room for them, but a rule not in force explains a taint that never goes.
    for (const [name, r] of resolveRules(rules.rules).rejected) io.err(`podlife: rule ${name} is not in force (${r.reason}): ${r.message}\n`);
    return 0;
  } finally {
    client.close();
  }
}
