/**
 * Command-line parsing for `podlife` (also installed as the kubectl plugin `kubectl-podlife`):
 * pure, never throws; an error is a value naming the offending command, argument or flag.
 *
 * Commands: `explain <pod>` (also `pod/<name>`, `pods/<name>`, `pod <name>`), `explain node <name>`
 * (also `node/<name>`, `nodes/<name>`), `explain --unlabelled` (also `--unlabeled`: the annotated
 * pods without the managed label), `nodes`, `pods` (the pods podlife manages), and
 * `completion bash|zsh`. The cluster flags are kubectl's (`--kubeconfig`, `--context`, `-n`, `-A`,
 * `-o json|yaml|wide`). A flag that means nothing for a command (-n on nodes, --watch on a list)
 * is refused rather than silently ignored.
 */
import { parseArgs } from 'node:util';

/** text: fits the terminal (80 columns when unknown); wide: text with every column, unfitted. */
export type OutputFormat = 'text' | 'wide' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'wide', 'json', 'yaml'];
export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

interface CommonArgs {
  context?: string;
  kubeconfig?: string;
  output: OutputFormat;
  /** Columns text output fits in (default: the terminal's, else 80). */
  width?: number;
}

export interface ExplainArgs extends CommonArgs {
  command: 'explain';
  pod: string;
  namespace?: string;
  watch: boolean;
  ascii: boolean;
}

export interface ExplainNodeArgs extends CommonArgs {
  command: 'explain-node';
  node: string;
}

/** `explain --unlabelled`: every annotated pod without the managed label, in a namespace or all. */
export interface ExplainUnlabelledArgs extends CommonArgs {
  command: 'explain-unlabelled';
  namespace?: string;
  allNamespaces: boolean;
}

export interface NodesArgs extends CommonArgs {
  command: 'nodes';
}

export interface PodsArgs extends CommonArgs {
  command: 'pods';
  namespace?: string;
  allNamespaces: boolean;
}

export type ParsedArgs =
  | ExplainArgs
  | ExplainNodeArgs
  | ExplainUnlabelledArgs
  | NodesArgs
  | PodsArgs
  | { command: 'completion'; shell: Shell }
  | { command: 'help' }
  | { command: 'error'; message: string };

/** The usage text, naming the program as it was invoked (`podlife` or `kubectl podlife`). */
export function usageFor(prog: string): string {
  return `Usage:
  ${prog} explain <pod> [-n namespace] [-o FORMAT] [--watch]
  ${prog} explain node <name> [-o FORMAT]
  ${prog} explain --unlabelled [-n namespace | -A] [-o FORMAT]
  ${prog} nodes [-o FORMAT]
  ${prog} pods [-n namespace | -A] [-o FORMAT]
  ${prog} completion bash|zsh

explain <pod>        where a pod is in its start (scheduled, sandbox and
                     network, initialized, containers ready, ready), its
                     timeline, and in one sentence why it is stuck. Also
                     pod/<name> or pods/<name>.
explain node <name>  which readiness gates (NodeReadinessRules and zero-config
                     readiness.k8s.io/ taints) hold a node, each condition's
                     state, and what the controller does next.
explain --unlabelled the pods with podlife lifecycle annotations but not the
                     label podlife.dev/managed=true (a controller run with
                     --managed-pods-only does not see them), and kubectl
                     commands that label them. Also --unlabeled.
nodes                every node with the gates holding it and its readiness
                     taints.
pods                 the pods podlife manages: roles of their containers and
                     where their lifecycle is.
completion <shell>   a completion script: source <(podlife completion bash)

Options:
  -n, --namespace <ns>   namespace (default: the context's, else "default")
  -A, --all-namespaces   pods, explain --unlabelled: every namespace
      --context <name>   kubeconfig context
      --kubeconfig <f>   kubeconfig file (default: KUBECONFIG, ~/.kube/config)
  -o, --output FORMAT    text (default, fits the terminal), wide, json, yaml
  -w, --watch            explain <pod>: follow the pod live until it is ready
                         or finished (Ctrl-C to stop)
      --width <cols>     text width, at least 40 (default: terminal's, or 80)
      --ascii            explain <pod>: ASCII glyphs only
  -h, --help             this text`;
}

export const usage = usageFor('podlife');

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

/** The options `parseArgs` knows; completion reads them too. */
export const FLAGS = {
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  context: { type: 'string' },
  kubeconfig: { type: 'string' },
  output: { type: 'string', short: 'o' },
  watch: { type: 'boolean', short: 'w' },
  unlabelled: { type: 'boolean' },
  unlabeled: { type: 'boolean' },
  width: { type: 'string' },
  ascii: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: FLAGS });
  } catch (err) {
    return { command: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return { command: 'help' };
  const [command, ...rest] = positionals;

  if (command === 'completion') {
    const [shell, extra] = rest;
    if (shell === undefined) return { command: 'error', message: `completion needs a shell: ${SHELLS.join(' or ')}` };
    if (!(SHELLS as readonly string[]).includes(shell)) return { command: 'error', message: `completion "${shell}": use ${SHELLS.join(' or ')}` };
    if (extra !== undefined) return { command: 'error', message: `unexpected argument "${extra}" after completion ${shell}` };
    return { command: 'completion', shell: shell as Shell };
  }

  let width: number | undefined;
  if (values.width !== undefined) {
    width = Number(values.width);
    if (!Number.isInteger(width) || width < 40) return { command: 'error', message: `--width "${values.width}": a whole number of columns, at least 40` };
  }
  const output = values.output ?? 'text';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(output)) return { command: 'error', message: `--output "${output}": use ${OUTPUT_FORMATS.join(', ')}` };
  const common: CommonArgs = {
    output: output as OutputFormat,
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(width !== undefined ? { width } : {}),
  };
  const refuse = (given: Record<string, boolean>, what: string): string | undefined => {
    const names = Object.entries(given).filter(([, g]) => g).map(([n]) => n);
    return names.length > 0 ? `${names.join(', ')}: ${what}` : undefined;
  };
  const unlabelled = values.unlabelled !== undefined || values.unlabeled !== undefined;
  const unlabelledFlag = values.unlabelled !== undefined ? '--unlabelled' : '--unlabeled';
  const explainOnly = (): string | undefined =>
    refuse({ [unlabelledFlag]: unlabelled }, `only for podlife explain: podlife explain ${unlabelledFlag} [-n namespace | -A] lists those pods`);
  const scope = { allNamespaces: values['all-namespaces'] ?? false, ...(values.namespace !== undefined ? { namespace: values.namespace } : {}) };
  const bothScopes = values.namespace !== undefined && values['all-namespaces'] ? '-n/--namespace and -A/--all-namespaces: choose one' : undefined;
  const podOnly = (): string | undefined =>
    refuse(
      {
        '-n/--namespace (nodes are cluster-scoped)': values.namespace !== undefined,
        '-A/--all-namespaces': values['all-namespaces'] !== undefined,
        '--watch': values.watch !== undefined,
        '--ascii': values.ascii !== undefined,
      },
      'only for podlife explain <pod> (and -n, -A for podlife pods and explain --unlabelled)',
    );

  if (command === 'nodes') {
    if (rest.length > 0) return { command: 'error', message: `unexpected argument "${rest[0]}": podlife nodes lists every node and takes no name (use podlife explain node <name>)` };
    const misplaced = podOnly() ?? explainOnly();
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'nodes', ...common };
  }
  if (command === 'pods') {
    if (rest.length > 0) return { command: 'error', message: `unexpected argument "${rest[0]}": podlife pods lists pods and takes no name (use podlife explain <pod>)` };
    const misplaced = refuse({ '--watch': values.watch !== undefined, '--ascii': values.ascii !== undefined }, 'only for podlife explain <pod>') ?? explainOnly() ?? bothScopes;
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'pods', ...common, ...scope };
  }
  if (command !== 'explain') return { command: 'error', message: `unknown command "${command}": use explain, nodes, pods or completion` };

  if (unlabelled) {
    if (rest.length > 0) return { command: 'error', message: `unexpected argument "${rest[0]}": explain ${unlabelledFlag} lists every such pod and takes no name (podlife explain <pod> explains one)` };
    const misplaced =
      refuse({ '--watch': values.watch !== undefined, '--ascii': values.ascii !== undefined }, `not with ${unlabelledFlag}, which reports once (podlife explain <pod> --watch follows one pod)`) ?? bothScopes;
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'explain-unlabelled', ...common, ...scope };
  }

  const target = explainTarget(rest);
  if ('error' in target) return { command: 'error', message: target.error };
  if (target.kind === 'node') {
    const misplaced = podOnly();
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'explain-node', node: target.name, ...common };
  }
  if (values['all-namespaces']) return { command: 'error', message: '-A/--all-namespaces: explain takes one pod; give its namespace with -n (podlife pods -A lists them)' };
  const args: ExplainArgs = { command: 'explain', pod: target.name, ...common, watch: values.watch ?? false, ascii: values.ascii ?? false };
  if (values.namespace !== undefined) args.namespace = values.namespace;
  return args;
}
