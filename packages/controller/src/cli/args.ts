/** Command-line parsing for `podlife`: pure, errors are values naming the offending flag. */
import { parseArgs } from 'node:util';

export interface ExplainArgs {
  command: 'explain';
  pod: string;
  namespace?: string;
  context?: string;
  output: 'text' | 'json';
  watch: boolean;
  width?: number;
  ascii: boolean;
}

export type ParsedArgs = ExplainArgs | { command: 'help' } | { command: 'error'; message: string };

export const usage = `Usage: podlife explain <pod> [-n namespace] [--context name] [--output text|json] [--watch]

Explains where a pod is in its start (scheduled, sandbox and network, initialized, containers
ready, ready), draws the timeline, and says in one sentence why it is stuck.

Options:
  -n, --namespace <ns>   namespace of the pod (default: the context's, else "default")
      --context <name>   kubeconfig context (kubeconfig from KUBECONFIG or ~/.kube/config, as kubectl)
  -o, --output <fmt>     text (default) or json
  -w, --watch            follow the pod live until it is ready or finished (Ctrl-C to stop)
      --width <cols>     timeline width (default: the terminal's, else 80)
      --ascii            ASCII glyphs only
  -h, --help             this text`;

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
  const [command, pod, ...extra] = positionals;
  if (command !== 'explain') return { command: 'error', message: `unknown command "${command}": the only command is "explain"` };
  if (!pod) return { command: 'error', message: 'explain needs a pod name: podlife explain <pod>' };
  if (extra.length > 0) return { command: 'error', message: `unexpected argument "${extra[0]}"` };
  // kubectl accepts pod/<name> and pods/<name>.
  const name = pod.replace(/^pods?\//, '');
  const output = values.output ?? 'text';
  if (output !== 'text' && output !== 'json') return { command: 'error', message: `--output "${output}": use text or json` };
  const args: ExplainArgs = { command: 'explain', pod: name, output, watch: values.watch ?? false, ascii: values.ascii ?? false };
  if (values.namespace !== undefined) args.namespace = values.namespace;
  if (values.context !== undefined) args.context = values.context;
  if (values.width !== undefined) {
    const width = Number(values.width);
    if (!Number.isInteger(width) || width < 40) return { command: 'error', message: `--width "${values.width}": a whole number of columns, at least 40` };
    args.width = width;
  }
  return args;
}
