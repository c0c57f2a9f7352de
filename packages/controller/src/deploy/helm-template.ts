/**
 * A small writer of Helm templates from manifest trees: the chart's templates are the objects the
 * plain manifests are made of, with a few places marked to come from values.
 *
 * Guarantees:
 * - plain scalars are written as YAML would write them, with every `{{` escaped, so nothing in a
 *   manifest is ever read as a template action by accident;
 * - markers say what is templated: `expr` (inline action text), `block` (a value as YAML),
 *   `literal` (a string value as a block scalar), `when` (a map entry, array item or document kept
 *   only if a condition holds), `each` (one array item or document per element of a list);
 * - a multi-line plain string, or a marker where it cannot be written, is an error, not a broken chart.
 */
import { stringify } from 'yaml';

export class Expr {
  constructor(readonly text: string) {}
}
export class Block {
  constructor(readonly value: string) {}
}
export class Literal {
  constructor(readonly value: string) {}
}
export class When {
  constructor(
    readonly cond: string,
    readonly node: TemplateNode,
    /** For a map entry: the value when the condition does not hold (else the entry is left out). */
    readonly otherwise?: TemplateNode,
  ) {}
}
export class Each {
  constructor(
    readonly over: string,
    readonly as: string,
    readonly item: TemplateNode,
  ) {}
}

export type TemplateNode = string | number | boolean | null | Expr | Block | Literal | When | Each | TemplateNode[] | { [key: string]: TemplateNode };

/** A template file's parts: documents (each after its own `---`), conditional or repeated groups, raw lines. */
export type TemplateDoc = { doc: TemplateNode } | { raw: string } | { when: string; docs: TemplateDoc[] } | { each: string; as: string; docs: TemplateDoc[] };

export const expr = (text: string): Expr => new Expr(text);
export const block = (value: string): Block => new Block(value);
export const literal = (value: string): Literal => new Literal(value);
export const when = (cond: string, node: TemplateNode, otherwise?: TemplateNode): When => new When(cond, node, otherwise);
export const each = (over: string, as: string, item: TemplateNode): Each => new Each(over, as, item);

const escapeActions = (text: string): string => text.replaceAll('{{', '{{ "{{" }}');

function scalar(v: string | number | boolean | null): string {
  if (typeof v === 'string' && v.includes('\n')) throw new Error(`multi-line string needs literal(): ${JSON.stringify(v.slice(0, 40))}`);
  return escapeActions(stringify(v, { lineWidth: 0 }).trimEnd());
}

function isMap(n: TemplateNode): n is { [key: string]: TemplateNode } {
  return typeof n === 'object' && n !== null && !Array.isArray(n) && !(n instanceof Expr || n instanceof Block || n instanceof Literal || n instanceof When || n instanceof Each);
}

function entry(key: string, v: TemplateNode, indent: number): string[] {
  const pad = ' '.repeat(indent);
  const k = scalar(key);
  if (v instanceof Expr) return [`${pad}${k}: ${v.text}`];
  if (v instanceof Block) return [`${pad}${k}:`, `{{- toYaml ${v.value} | nindent ${indent + 2} }}`];
  if (v instanceof Literal) return [`${pad}${k}: |`, `{{- ${v.value} | trimSuffix "\\n" | nindent ${indent + 2} }}`];
  if (v instanceof When || v instanceof Each) throw new Error(`${key}: when/each inside an entry value`);
  if (Array.isArray(v)) return v.length === 0 ? [`${pad}${k}: []`] : [`${pad}${k}:`, ...seq(v, indent + 2)];
  if (isMap(v)) return Object.keys(v).length === 0 ? [`${pad}${k}: {}`] : [`${pad}${k}:`, ...map(v, indent + 2)];
  return [`${pad}${k}: ${scalar(v)}`];
}

function map(m: { [key: string]: TemplateNode }, indent: number): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(m)) {
    if (v instanceof When) {
      const otherwise = v.otherwise === undefined ? [] : ['{{- else }}', ...entry(k, v.otherwise, indent)];
      out.push(`{{- if ${v.cond} }}`, ...entry(k, v.node, indent), ...otherwise, '{{- end }}');
    }
    else out.push(...entry(k, v, indent));
  }
  return out;
}

function item(v: TemplateNode, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (v instanceof When) {
    if (v.otherwise !== undefined) throw new Error('when with otherwise as an array item');
    return [`{{- if ${v.cond} }}`, ...item(v.node, indent), '{{- end }}'];
  }
  if (v instanceof Each) return [`{{- range ${v.as} := ${v.over} }}`, ...item(v.item, indent), '{{- end }}'];
  if (v instanceof Expr) return [`${pad}- ${v.text}`];
  if (isMap(v)) {
    const lines = map(v, indent + 2);
    const first = lines[0];
    if (first === undefined || !first.startsWith(`${pad}  `) || first.startsWith(`${pad}   `)) throw new Error('an array item map must start with a plain entry');
    return [`${pad}- ${first.slice(indent + 2)}`, ...lines.slice(1)];
  }
  if (v instanceof Block || v instanceof Literal || Array.isArray(v)) throw new Error('block, literal or nested array as an array item');
  return [`${pad}- ${scalar(v)}`];
}

function seq(a: TemplateNode[], indent: number): string[] {
  return a.flatMap((v) => item(v, indent));
}

function docs(parts: TemplateDoc[]): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if ('raw' in p) out.push(p.raw);
    else if ('doc' in p) {
      if (!isMap(p.doc)) throw new Error('a document must be a map');
      out.push('---', ...map(p.doc, 0));
    } else if ('when' in p) out.push(`{{- if ${p.when} }}`, ...docs(p.docs), '{{- end }}');
    else out.push(`{{- range ${p.as} := ${p.each} }}`, ...docs(p.docs), '{{- end }}');
  }
  return out;
}

/** The text of one template file. */
export function renderTemplate(header: string, parts: TemplateDoc[]): string {
  return `${header}${docs(parts).join('\n')}\n`;
}

/**
 * Replaces placeholder strings by template actions: every string holding one of `subs`' keys
 * becomes an `expr` with each key replaced by its action (the result is written unquoted, so
 * placeholders stand only where the rendered text needs no quoting, as names do).
 */
export function substitute(node: TemplateNode, subs: Readonly<Record<string, string>>): TemplateNode {
  if (typeof node === 'string') {
    const keys = Object.keys(subs).filter((k) => node.includes(k));
    if (keys.length === 0) return node;
    return expr(keys.reduce((text, k) => text.replaceAll(k, subs[k]!), escapeActions(node)));
  }
  if (Array.isArray(node)) return node.map((n) => substitute(n, subs));
  if (node instanceof When) return when(node.cond, substitute(node.node, subs), node.otherwise === undefined ? undefined : substitute(node.otherwise, subs));
  if (node instanceof Each) return each(node.over, node.as, substitute(node.item, subs));
  if (isMap(node)) return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, substitute(v, subs)]));
  return node;
}
