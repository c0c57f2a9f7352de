/**
 * Command-line parsing for `podlife` (also installed as the kubectl plugin `kubectl-podlife`):
 * pure, never throws; an error is a value naming the offending command, argument or flag.
 *
 * Commands: `explain <pod>` (also `pod/<name>`, `pods/<name>`, `pod <name>`), `explain node <name>`
 * (also `node/<name>`, `nodes/<name>`), `explain --unlabelled` (also `--unlabeled`: the annotated
 * pods without the managed label), `nodes`, `pods` (the pods podlife manages), and
 * `completion bash|zsh`. The cluster flags are kubectl's (`--kubeconfig`, `--context`, `-n`, `-A`,
 * `-o json|yaml|wide`). A flag that means nothing for a command (-n on nodes, --watch on a list)
 * is refused rather than silently ignored. `--help` after a command is that command's help;
 * `--version` the package's version. A usage error carries the command it was for, so that the
 * message can name that command's help.
 *
 * Adding a command: its name in CommandName, its entry in COMMAND_HELP, its ParsedArgs member and
 * its branch in parseWords.
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

/** `migrate nrc`: node-readiness-controller rules into podlife's; a dry run unless `apply`. */
export interface MigrateArgs extends CommonArgs {
  command: 'migrate-nrc';
  apply: boolean;
}

/** The commands, in the order the usage lists them. A new command adds its entry to COMMAND_HELP. */
export type CommandName = 'explain' | 'nodes' | 'pods' | 'migrate' | 'completion';

export type ParsedArgs =
  | ExplainArgs
  | ExplainNodeArgs
  | ExplainUnlabelledArgs
  | NodesArgs
  | PodsArgs
  | MigrateArgs
  | { command: 'completion'; shell: Shell }
  /** `topic`: `podlife <command> --help` asks for that command's help alone. */
  | { command: 'help'; topic?: CommandName }
  | { command: 'version' }
  /** `topic`: the command the bad line was for, so the hint can name its help. */
  | { command: 'error'; message: string; topic?: CommandName };

/** One command's part of the help: its synopsis lines (after the program name), what it does, its flags. */
export interface CommandHelp {
  synopsis: readonly string[];
  /** Lines under the synopsis in the overall usage, each at most 56 columns. */
  about: readonly string[];
  /** Keys of FLAGS (and OPTION_HELP) it takes, in the order its help lists them. */
  flags: readonly string[];
}

const CLUSTER_FLAGS = ['context', 'kubeconfig', 'output', 'width'] as const;

/** Each command's help; the overall usage is every entry in turn. */
export const COMMAND_HELP: Record<CommandName, CommandHelp> = {
  explain: {
    synopsis: ['explain <pod> [-n namespace] [-o FORMAT] [--watch]', 'explain node <name> [-o FORMAT]', 'explain --unlabelled [-n namespace | -A] [-o FORMAT]'],
    about: [
      'explain <pod>        where a pod is in its start (scheduled, sandbox and',
      '                     network, initialized, containers ready, ready), its',
      '                     timeline, and in one sentence why it is stuck. Also',
      '                     pod/<name> or pods/<name>.',
      'explain node <name>  which readiness gates (NodeReadinessRules and zero-config',
      '                     readiness.k8s.io/ taints) hold a node, each condition\'s',
      '                     state, and what the controller does next.',
      'explain --unlabelled the pods with podlife lifecycle annotations but not the',
      '                     label podlife.dev/managed=true (a controller run with',
      '                     --managed-pods-only does not see them), and kubectl',
      '                     commands that label them. Also --unlabeled.',
    ],
    flags: ['namespace', 'all-namespaces', 'unlabelled', 'watch', 'ascii', ...CLUSTER_FLAGS],
  },
  nodes: {
    synopsis: ['nodes [-o FORMAT]'],
    about: ['nodes                every node with the gates holding it and its readiness', '                     taints.'],
    flags: [...CLUSTER_FLAGS],
  },
  pods: {
    synopsis: ['pods [-n namespace | -A] [-o FORMAT]'],
    about: ['pods                 the pods podlife manages: roles of their containers and', '                     where their lifecycle is.'],
    flags: ['namespace', 'all-namespaces', ...CLUSTER_FLAGS],
  },
  migrate: {
    synopsis: ['migrate nrc [--apply] [-o FORMAT]'],
    about: [
      'migrate nrc          node-readiness-controller rules into podlife\'s: prints',
      '                     what it would change; --apply changes it.',
    ],
    flags: ['apply', ...CLUSTER_FLAGS],
  },
  completion: {
    synopsis: ['completion bash|zsh'],
    about: ['completion <shell>   a completion script: source <(podlife completion bash)'],
    flags: [],
  },
};

export const COMMAND_NAMES = Object.keys(COMMAND_HELP) as CommandName[];

function isCommand(word: string | undefined): word is CommandName {
  return word !== undefined && Object.hasOwn(COMMAND_HELP, word);
}

/** Help lines per option, keyed like FLAGS. */
const OPTION_HELP: Record<string, readonly string[]> = {
  namespace: ['-n, --namespace <ns>   namespace (default: the context\'s, else "default")'],
  'all-namespaces': ['-A, --all-namespaces   pods, explain --unlabelled: every namespace'],
  unlabelled: ['    --unlabelled       explain: the annotated pods without the managed label'],
  context: ['    --context <name>   kubeconfig context'],
  kubeconfig: ['    --kubeconfig <f>   kubeconfig file (default: KUBECONFIG, ~/.kube/config)'],
  output: ['-o, --output FORMAT    text (default, fits the terminal), wide, json, yaml'],
  watch: ['-w, --watch            explain <pod>: follow the pod live until it is ready', '                       or finished (Ctrl-C to stop)'],
  width: ['    --width <cols>     text width, at least 40 (default: terminal\'s, or 80)'],
  ascii: ['    --ascii            explain <pod>: ASCII glyphs only'],
  apply: ['    --apply            migrate nrc: make the changes (default: dry run)'],
  help: ['-h, --help             this text; podlife <command> --help: that command\'s'],
  version: ['    --version          the version of podlife'],
};

const indent = (lines: readonly string[]): string => lines.map((l) => `  ${l}`).join('\n');

/** The usage text, naming the program as it was invoked (`podlife` or `kubectl podlife`). */
export function usageFor(prog: string): string {
  const commands = COMMAND_NAMES.map((c) => COMMAND_HELP[c]);
  const options = ['namespace', 'all-namespaces', 'context', 'kubeconfig', 'output', 'watch', 'width', 'ascii', 'help', 'version'];
  return `Usage:
${indent(commands.flatMap((c) => c.synopsis.map((s) => `${prog} ${s}`)))}

${commands.flatMap((c) => c.about).join('\n')}

Options:
${indent(options.flatMap((o) => OPTION_HELP[o] ?? []))}`;
}

/** One command's help: `podlife explain --help`. */
export function commandUsageFor(prog: string, command: CommandName): string {
  const help = COMMAND_HELP[command];
  const options = [...help.flags, 'help'];
  return `Usage:
${indent(help.synopsis.map((s) => `${prog} ${s}`))}

${help.about.join('\n')}

Options:
${indent(options.flatMap((o) => OPTION_HELP[o] ?? []))}`;
}

/** What a usage error prints: one line naming the problem, one naming where the help is. */
export function usageErrorFor(prog: string, error: { message: string; topic?: CommandName }): string {
  const help = error.topic !== undefined ? `${prog} ${error.topic} --help` : `${prog} --help`;
  return `${prog}: ${error.message}\nRun '${help}' for usage.`;
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
  apply: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  // The command is the first word that names one, even when a flag before it fails to parse.
  const topic = argv.find(isCommand);
  const parsed = parseWords(argv);
  if (parsed.command === 'error' && topic !== undefined) return { ...parsed, topic };
  return parsed;
}

function parseWords(argv: readonly string[]): ParsedArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: FLAGS });
  } catch (err) {
    return { command: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help) return isCommand(command) ? { command: 'help', topic: command } : { command: 'help' };
  if (values.version) return positionals.length === 0 ? { command: 'version' } : { command: 'error', message: '--version takes no command: podlife --version' };
  if (command === undefined) return { command: 'help' };

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

  if (command === 'migrate') {
    if (rest[0] !== 'nrc') return { command: 'error', message: `migrate ${rest[0] === undefined ? 'needs what to migrate from' : `"${rest[0]}": unknown`}: podlife migrate nrc` };
    if (rest.length > 1) return { command: 'error', message: `unexpected argument "${rest[1]}" after migrate nrc` };
    const misplaced = podOnly() ?? explainOnly();
    if (misplaced) return { command: 'error', message: misplaced };
    return { command: 'migrate-nrc', apply: values.apply ?? false, ...common };
  }
  if (values.apply !== undefined) return { command: 'error', message: '--apply: only for podlife migrate nrc' };
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
  if (command !== 'explain') return { command: 'error', message: `unknown command "${command}": use ${COMMAND_NAMES.slice(0, -1).join(', ')} or ${COMMAND_NAMES.at(-1)}` };

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
