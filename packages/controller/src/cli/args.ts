/**
 * Command-line parsing for `podlife`: pure, never throws; an error is a value naming the offending
 * command, argument or flag.
 *
 * Commands: `explain <pod>` (also `pod/<name>`, `pods/<name>`, `pod <name>`), `explain node <name>`
 * (also `node/<name>`, `nodes/<name>`), and `nodes`. A flag that only means something for pods
 * (-n, --watch, --width, --ascii) is refused on a node command rather than silently ignored.
 */
import { parseArgs } from 'node:util';

export type OutputFormat = 'text' | 'json';

interface CommonArgs {
  context?: string;
  output: OutputFormat;
}

export interface ExplainArgs extends CommonArgs {
  command: 'explain';
  pod: string;
  namespace?: string;
  watch: boolean;
  width?: number;
  ascii: boolean;
}

export interface ExplainNodeArgs extends CommonArgs {
  command: 'explain-node';
  node: string;
}

export interface NodesArgs extends CommonArgs {
  command: 'nodes';
}

export type ParsedArgs = ExplainArgs | ExplainNodeArgs | NodesArgs | { command: 'help' } | { command: 'error'; message: string };

export const usage = `Usage:
  podlife explain <pod> [-n namespace] [--context name] [--output text|json] [--watch]
  podlife explain node <name> [--context name] [--output text|json]
  podlife nodes [--context name] [--output text|json]

explain <pod>       where a pod is in its start (scheduled, sandbox and network, initialized,
                    containers ready, ready), its timeline, and in one sentence why it is stuck.
                    Also pod/<name> or pods/<name>.
explain node <name> which readiness gates (NodeReadinessRules and zero-config readiness.k8s.io/
                    taints) hold a node, each condition's state, and what the controller does next.
                    Also node/<name> or nodes/<name>.
nodes               every node with the gates holding it and its readiness taints.

Options:
  -n, --namespace <ns>   namespace of the pod (default: the context's, else "default")
      --context <name>   kubeconfig context (kubeconfig from KUBECONFIG or ~/.kube/config, as kubectl)
  -o, --output <fmt>     text (default) or json
  -w, --watch            explain <pod>: follow the pod live until it is ready or finished (Ctrl-C to stop)
      --width <cols>     explain <pod>: timeline width (default: the terminal's, else 80)
      --ascii            explain <pod>: ASCII glyphs only
  -h, --help             this text`;

type Target = { kind: 'pod' | 'node'; name: string } | { error: string };

/** What `explain` names: kubectl's `<type>/<name>` and `<type> <name>` forms, a bare name is a pod. */
function explainTarget(words: readonly string[]): Target {
  const [first, second, ...extra] = words;
  if (first === undefined) return { error: 'explain needs a pod or node: podlife explain <pod> or podlife explain node <name>' };
  const slash = /^(pods?|nodes?)\/(.*)$/.exec(first);
  if (slash) {
    const kind = slash[1]?.startsWith('node') ? 'node' : 'pod';
    if (second !== undefined) return { error: `unexpected argument "${second}" after ${first}` };
    if (!slash[2]) return { error: `explain ${first} needs a ${kind} name after the slash` };
    return { kind, name: slash[2] };
  }
  if (first === 'node' || first === 'nodes' || first === 'pod' || first === 'pods') {
    const kind = first.startsWith('node') ? 'node' : 'pod';
    if (second === undefined) {
      return { error: `explain ${first} needs a ${kind} name: podlife explain ${kind} <name> (a pod called "${first}" is pod/${first})` };
    }
    if (extra.length > 0) return { error: `unexpected argument "${extra[0]}" after ${first} ${second}` };
    return { kind, name: second };
  }
  if (second !== undefined) return { error: `unexpected argument "${second}" after pod ${first}` };
  return { kind: 'pod', name: first };
}

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        context: { type: 'string' },
        output: { type: 'string', short: 'o' },
        watch: { type: 'boolean', short: 'w' },
        width: { type: 'string' },
        ascii: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return { command: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return { command: 'help' };
  const [command, ...rest] = positionals;

  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') return { command: 'error', message: `--output "${output}": use text or json` };
  const common: CommonArgs = { output, ...(values.context !== undefined ? { context: values.context } : {}) };
  const podOnly = (): string | undefined => {
    const given = [
      values.namespace !== undefined && '-n/--namespace (nodes are cluster-scoped)',
      values.watch !== undefined && '--watch',
      values.width !== undefined && '--width',
      values.ascii !== undefined && '--ascii',
    ].filter((x): x is string => typeof x === 'string');
    return given.length > 0 ? `${given.join(', ')}: only for podlife explain <pod>` : undefined;
  };

  if (command === 'nodes') {
    if (rest.length > 0) return { command: 'error', message: `unexpected argument "${rest[0]}": podlife nodes lists every node and takes no name (use podlife explain node <name>)` };
    const misplaced = podOnly();
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'nodes', ...common };
  }
  if (command !== 'explain') return { command: 'error', message: `unknown command "${command}": use explain or nodes` };

  const target = explainTarget(rest);
  if ('error' in target) return { command: 'error', message: target.error };
  if (target.kind === 'node') {
    const misplaced = podOnly();
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'explain-node', node: target.name, ...common };
  }
  const args: ExplainArgs = { command: 'explain', pod: target.name, ...common, watch: values.watch ?? false, ascii: values.ascii ?? false };
  if (values.namespace !== undefined) args.namespace = values.namespace;
  if (values.width !== undefined) {
    const width = Number(values.width);
    if (!Number.isInteger(width) || width < 40) return { command: 'error', message: `--width "${values.width}": a whole number of columns, at least 40` };
    args.width = width;
  }
  return args;
}
