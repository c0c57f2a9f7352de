/**
 * Shell completion for `podlife` and `kubectl podlife`, the way cobra programs (kubectl among them)
 * do it: the shell asks the program, `podlife __complete <words…> <partial word>`, which prints one
 * candidate a line and a last line `:<directive>`. The same answers serve
 * - `source <(podlife completion bash)` and `source <(podlife completion zsh)`;
 * - kubectl (1.26+), which runs `kubectl_complete-podlife <words…> <partial word>` for its plugins.
 *
 * Guarantees: completing never fails the shell: names come from the cluster when it answers within
 * `lookupTimeoutMs`, and otherwise nothing is offered; candidates are filtered by the partial word.
 * A name from the cluster or the kubeconfig is offered only when it is one shell word as it is
 * (`isShellPlain`: no space, quote, glob, control character or line break), since the shell inserts
 * a candidate unquoted; the bash script splits the answer at line breaks only and never globs it.
 */
import { COMMAND_NAMES, FLAGS, OUTPUT_FORMATS, SHELLS, type Shell } from './args.js';
import { isShellPlain } from '@podlife/core';

/** Cobra's ShellCompDirectiveNoFileComp: never fall back to file names. */
export const NO_FILE_COMPLETION = 4;
export const COMMANDS: readonly string[] = COMMAND_NAMES;

/** What completion may look up in the cluster (each best effort). */
export interface CompletionLookups {
  pods(flags: LookupFlags): Promise<string[]>;
  nodes(flags: LookupFlags): Promise<string[]>;
  namespaces(flags: LookupFlags): Promise<string[]>;
  contexts(flags: LookupFlags): string[];
}

export interface LookupFlags {
  namespace?: string;
  context?: string;
  kubeconfig?: string;
}

const valueFlags = new Map<string, keyof typeof FLAGS>();
for (const [name, spec] of Object.entries(FLAGS) as [keyof typeof FLAGS, (typeof FLAGS)[keyof typeof FLAGS]][]) {
  if (spec.type !== 'string') continue;
  valueFlags.set(`--${name}`, name);
  if ('short' in spec) valueFlags.set(`-${spec.short}`, name);
}

/** The flags worth offering after a command (`explain --unlabelled` lists, so it takes -A and not --watch). */
function flagsFor(command: string | undefined, unlabelled: boolean): string[] {
  const cluster = ['--context', '--kubeconfig', '--output', '--width'];
  switch (command) {
    case 'explain':
      return unlabelled ? ['--namespace', '--all-namespaces', ...cluster] : ['--namespace', '--watch', '--ascii', '--unlabelled', ...cluster];
    case 'pods':
      return ['--namespace', '--all-namespaces', ...cluster];
    case 'nodes':
      return cluster;
    default:
      return ['--help'];
  }
}

/**
 * Candidates for the last word of `words` (the words after the program name; the last one is the
 * partial word, possibly empty).
 */
export async function complete(words: readonly string[], lookups: CompletionLookups): Promise<string[]> {
  const partial = words[words.length - 1] ?? '';
  const before = words.slice(0, -1);
  const flags: LookupFlags = {};
  const positionals: string[] = [];
  let pendingValue: keyof typeof FLAGS | undefined;
  let unlabelled = false;
  for (const w of before) {
    if (w === '=') continue; // bash splits --flag=value at the '='
    if (pendingValue) {
      if (pendingValue === 'namespace' || pendingValue === 'context' || pendingValue === 'kubeconfig') flags[pendingValue] = w;
      pendingValue = undefined;
    } else if (valueFlags.has(w)) pendingValue = valueFlags.get(w);
    else if (w.startsWith('--') && w.includes('=')) {
      const [name, value] = [w.slice(2, w.indexOf('=')), w.slice(w.indexOf('=') + 1)];
      if (name === 'namespace' || name === 'context' || name === 'kubeconfig') flags[name] = value;
    } else if (w === '--unlabelled' || w === '--unlabeled') unlabelled = true;
    else if (!w.startsWith('-')) positionals.push(w);
  }
  const matching = (xs: readonly string[]) => xs.filter((x) => typeof x === 'string' && isShellPlain(x) && x.startsWith(partial));
  if (pendingValue === 'output') return matching(OUTPUT_FORMATS);
  if (pendingValue === 'namespace') return matching(await lookups.namespaces(flags));
  if (pendingValue === 'context') return matching(lookups.contexts(flags));
  if (pendingValue !== undefined) return [];
  const [command, ...args] = positionals;
  if (partial.startsWith('-')) return matching(flagsFor(command, unlabelled));
  if (command === undefined) return matching(COMMANDS);
  if (command === 'completion') return args.length === 0 ? matching(SHELLS) : [];
  if (command === 'explain' && !unlabelled) {
    if (args.length === 0) return matching(['node', ...(await lookups.pods(flags))]);
    if (args.length === 1 && (args[0] === 'node' || args[0] === 'nodes')) return matching(await lookups.nodes(flags));
  }
  return [];
}

/** The cobra protocol's answer: candidates, then the directive. */
export function completionOutput(candidates: readonly string[]): string {
  return `${[...candidates, `:${NO_FILE_COMPLETION}`].join('\n')}\n`;
}

/** A script that makes the shell ask `podlife __complete` (for `podlife` and `kubectl-podlife`). */
export function completionScript(shell: Shell): string {
  if (shell === 'bash') {
    return `# podlife completion for bash: source <(podlife completion bash)
_podlife_complete() {
  local out line
  out=$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
  COMPREPLY=()
  while IFS= read -r line; do
    [[ $line == :* ]] || COMPREPLY+=("$line")
  done <<<"$out"
}
complete -F _podlife_complete podlife kubectl-podlife
`;
  }
  return `#compdef podlife kubectl-podlife
# podlife completion for zsh: source <(podlife completion zsh)  (after compinit)
_podlife_complete() {
  local -a candidates
  candidates=("\${(@f)$(\${words[1]} __complete "\${(@)words[2,CURRENT]}" 2>/dev/null | sed '/^:/d')}")
  compadd -- "\${candidates[@]}"
}
compdef _podlife_complete podlife kubectl-podlife
`;
}
