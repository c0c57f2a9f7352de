/**
 * `podlife explain --unlabelled [-n ns | -A]`: every pod with podlife lifecycle annotations but not
 * the label `podlife.dev/managed: "true"`, which a controller run with
 * --managed-pods-only does not see, and the kubectl commands that label them.
 *
 * Guarantees:
 * - read-only; the list is keystone's audit list (`listUnlabelledAnnotated`): metadata only, the
 *   API server filtering on the label, in pages;
 * - a report: exit 0 whether or not there are some; a failed list is an error naming where it
 *   listed;
 * - text names every pod, one `namespace/name` a line, never cut, control characters escaped
 *   (terminal.ts); then the count and kubectl commands bounded to `namesPerCommand` names each and
 *   `commands` in all, saying how many pods they leave out; each command fits the width as shell
 *   lines continued with a backslash, so it can be pasted as printed (`-o wide`: one line a
 *   command). Every word of a command is quoted for a POSIX shell, and a pod whose name or
 *   namespace kubectl would misread or the terminal cannot show as it is (no API server accepts
 *   one) is named in no command, with a line saying how many. JSON and YAML name every pod, exact;
 * - the list is bounded: at most `maxPages` pages (listPages), each answer at most the client's
 *   byte limit (kubeconfig.ts).
 */
import { resourcePath, shellQuote, type KubeClient } from '@podlife/core';
import { ManagedLabel, listUnlabelledAnnotated } from '@podlife/keystone';
import type { ExplainUnlabelledArgs, OutputFormat } from './args.js';
import { connect, contextNamespace, listBounds } from './kubeconfig.js';
import type { Streams } from './nodes.js';
import { fitText, isData, renderData, textWidth } from './output.js';
import { terminalText } from './terminal.js';

export interface UnlabelledPod {
  namespace: string;
  name: string;
}

/** What `explain --unlabelled` reports, as JSON and YAML carry it. */
export interface UnlabelledReport {
  /** The namespace listed; absent when every namespace was. */
  namespace?: string;
  /** The label these pods lack, `key=value`. */
  label: string;
  count: number;
  /** Sorted by namespace, then name. */
  items: UnlabelledPod[];
}

/** Where a list looked, for messages: `in namespace shop`, `in any namespace`. */
const where = (namespace: string | undefined): string => (namespace === undefined ? 'in any namespace' : `in namespace ${namespace}`);

/** Lists the annotated pods without the managed label in `namespace` (undefined: every namespace). */
export async function findUnlabelled(client: Pick<KubeClient, 'request'>, namespace: string | undefined, size = listBounds.pageSize, maxPages = listBounds.maxPages): Promise<UnlabelledReport> {
  const items: UnlabelledPod[] = [];
  const text = (s: unknown): string => (typeof s === 'string' ? s : '');
  try {
    for await (const { metadata } of listUnlabelledAnnotated(client, resourcePath({ version: 'v1', resource: 'pods', namespace }), size, maxPages)) {
      items.push({ namespace: text(metadata?.namespace), name: text(metadata?.name) });
    }
  } catch (err) {
    throw new Error(`cannot list the pods ${where(namespace)}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  items.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { ...(namespace !== undefined ? { namespace } : {}), label: ManagedLabel.selector, count: items.length, items };
}

/** How many names a label command carries, and how many commands are printed. */
export interface CommandBounds {
  namesPerCommand: number;
  commands: number;
}

const defaultBounds: CommandBounds = { namesPerCommand: 20, commands: 10 };

/**
 * A name that pastes as itself: the terminal shows it unchanged, and kubectl reads it as a name,
 * not as a flag (a leading `-`) or a label change (an `=`, or a trailing `-`), which quoting
 * cannot prevent. No API server accepts a name that is not.
 */
const pastable = (name: string): boolean => name !== '' && terminalText(name) === name && !name.startsWith('-') && !name.includes('=') && !name.endsWith('-');

/**
 * `kubectl label pod -n <ns> <names…> podlife.dev/managed=true`, as words (unquoted), per namespace;
 * `left`: the pods past the bounds; `unpastable`: the pods left out because their name or namespace
 * would not paste as itself.
 */
export function labelCommands(pods: readonly UnlabelledPod[], bounds: CommandBounds = defaultBounds): { commands: string[][]; left: number; unpastable: number } {
  const byNamespace = new Map<string, string[]>();
  let unpastable = 0;
  for (const p of pods) {
    if (!pastable(p.namespace) || !pastable(p.name)) {
      unpastable++;
      continue;
    }
    const names = byNamespace.get(p.namespace);
    if (names) names.push(p.name);
    else byNamespace.set(p.namespace, [p.name]);
  }
  const commands: string[][] = [];
  let named = 0;
  for (const [namespace, names] of byNamespace) {
    for (let i = 0; i < names.length && commands.length < bounds.commands; i += bounds.namesPerCommand) {
      const chunk = names.slice(i, i + bounds.namesPerCommand);
      commands.push(['kubectl', 'label', 'pod', '-n', namespace, ...chunk, ManagedLabel.selector]);
      named += chunk.length;
    }
  }
  return { commands, left: pods.length - unpastable - named, unpastable };
}

/** A command as shell lines of at most `width` columns, continued with ` \`; a word longer than a line stays whole. */
export function shellLines(words: readonly string[], width: number | undefined, indent = '  '): string[] {
  if (width === undefined) return [`${indent}${words.join(' ')}`];
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    const next = line === '' ? `${indent}${word}` : `${line} ${word}`;
    if (line !== '' && [...next].length + 2 > width) {
      lines.push(`${line} \\`);
      line = `${indent}    ${word}`;
    } else line = next;
  }
  lines.push(line);
  return lines;
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;
const labelled = `the label ${ManagedLabel.key}: "${ManagedLabel.value}"`;

/** The report as text (`namespace/name` lines, the count, the commands) or data. */
export function renderUnlabelled(report: UnlabelledReport, opts: { output: OutputFormat; width: number; bounds?: CommandBounds }): string {
  if (isData(opts.output)) return renderData(report, opts.output);
  const width = opts.output === 'wide' ? undefined : opts.width;
  const fit = (text: string): string => (width === undefined ? text : fitText(text, width));
  if (report.count === 0) return fit(`no pod ${where(report.namespace)} has podlife lifecycle annotations without ${labelled}`);
  const them = report.count === 1 ? 'it' : 'them';
  const { commands, left, unpastable } = labelCommands(report.items, opts.bounds);
  return [
    ...report.items.map((p) => terminalText(`${p.namespace}/${p.name}`)),
    fit(`${plural(report.count, 'pod has', 'pods have')} podlife lifecycle annotations but not ${labelled}; a controller run with --managed-pods-only does not see ${them}.`),
    ...(commands.length > 0 ? [`To label ${them}:`] : []),
    ...commands.flatMap((c) => shellLines(c.map(shellQuote), width)),
    ...(left > 0 ? [fit(`(${plural(left, 'more pod is', 'more pods are')} not in these commands: run them, then podlife explain --unlabelled again for the next)`)] : []),
    ...(unpastable > 0
      ? [fit(`(${plural(unpastable, 'pod is', 'pods are')} in no command: a name or namespace with control characters, or one kubectl would read as a flag or a label (no API server accepts one), would not paste as itself)`)]
      : []),
  ].join('\n');
}

/** The line `podlife pods` prints after its table when some of the pods listed lack the label. */
export function unlabelledFooter(count: number, scope: { allNamespaces: boolean; namespace?: string }): string {
  const flags = scope.allNamespaces ? ' -A' : scope.namespace !== undefined ? ` -n ${shellQuote(scope.namespace)}` : '';
  const them = count === 1 ? 'it' : 'them';
  return `podlife: ${plural(count, 'of these pods has', 'of these pods have')} lifecycle annotations but not ${labelled} (a controller run with --managed-pods-only does not see ${them}): podlife explain --unlabelled${flags} names ${them} and how to label ${them}`;
}

export async function runExplainUnlabelled(args: ExplainUnlabelledArgs, io: Streams): Promise<number> {
  const namespace = args.allNamespaces ? undefined : (args.namespace ?? contextNamespace(args));
  const client = await connect(args);
  try {
    const report = await findUnlabelled(client, namespace);
    io.out(`${renderUnlabelled(report, { output: args.output, width: textWidth(args.width, io.columns) })}\n`);
    return 0;
  } finally {
    client.close();
  }
}
