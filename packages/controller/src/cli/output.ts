/**
 * How the CLI prints: text that fits the terminal, tables, and data as JSON or YAML.
 *
 * Guarantees:
 * - `fitText(text, width)` returns lines of at most `width` columns (counted in code points),
 *   wrapping at spaces with the line's own indentation plus two; a word longer than the line is
 *   cut, never lost; lines that already fit are unchanged;
 * - `renderTable(rows, width)` keeps every row on one line when it fits, and otherwise wraps the
 *   widest cells within their column; with no width (`-o wide`) rows are never wrapped;
 * - JSON and YAML carry the same data.
 */
import { stringify } from 'yaml';
import type { OutputFormat } from './args.js';

export const DEFAULT_WIDTH = 80;

const length = (s: string): number => [...s].length;

/** The width text output fits in: --width, else the terminal's, else 80. */
export function textWidth(given: number | undefined, columns: number | undefined): number {
  return given ?? (columns !== undefined && columns >= 40 ? columns : DEFAULT_WIDTH);
}

/** One line wrapped to `width`, continuation lines indented under it. */
function wrapLine(line: string, width: number, hang = 2): string[] {
  if (length(line) <= width) return [line];
  const indent = /^\s*/.exec(line)?.[0] ?? '';
  const next = `${indent}${' '.repeat(hang)}`.slice(0, Math.max(0, width - 20));
  const out: string[] = [];
  let current = indent;
  let room = width - length(indent);
  for (const word of line.slice(indent.length).split(/ +/)) {
    let w = word;
    const sep = current.trim() === '' ? '' : ' ';
    if (length(w) + length(sep) <= room) {
      current += sep + w;
      room -= length(sep) + length(w);
      continue;
    }
    if (current.trim() !== '') out.push(current);
    current = next;
    room = width - length(next);
    while (length(w) > room) {
      const chars = [...w];
      out.push(current + chars.slice(0, room).join(''));
      w = chars.slice(room).join('');
      current = next;
      room = width - length(next);
    }
    current += w;
    room -= length(w);
  }
  if (current.trim() !== '') out.push(current);
  return out;
}

export function fitText(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line.trimEnd(), width))
    .join('\n');
}

/**
 * A table with two spaces between columns. Given a width, cells wrap within their column (the
 * widest column gives way first, no column narrower than its header); without one, one line a row.
 */
export function renderTable(rows: readonly (readonly string[])[], width?: number): string {
  const columns = Math.max(...rows.map((r) => r.length));
  const natural = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((r) => length(r[i] ?? ''))));
  const widths = [...natural];
  const gap = 2;
  const total = () => widths.reduce((a, b) => a + b, 0) + gap * (columns - 1);
  if (width !== undefined) {
    const floor = (i: number) => Math.max(length(rows[0]?.[i] ?? ''), 6);
    while (total() > width) {
      let widest = -1;
      for (let i = 0; i < columns; i++) if (widths[i]! > floor(i) && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
      if (widest < 0) break;
      widths[widest]! -= 1;
    }
  }
  const lines: string[] = [];
  for (const row of rows) {
    const cells = Array.from({ length: columns }, (_, i) => (width === undefined ? [row[i] ?? ''] : wrapCell(row[i] ?? '', widths[i]!)));
    const height = Math.max(...cells.map((c) => c.length));
    for (let l = 0; l < height; l++) {
      const parts = cells.map((c, i) => (i === columns - 1 ? (c[l] ?? '') : (c[l] ?? '').padEnd(widths[i]! + (width === undefined ? natural[i]! - widths[i]! : 0))));
      lines.push(parts.join(' '.repeat(gap)).trimEnd());
    }
  }
  return lines.join('\n');
}

/** A cell's text in lines of at most `width`, broken after ", " or spaces where possible. */
function wrapCell(text: string, width: number): string[] {
  return wrapLine(text, width, 0);
}

/** Data in a machine format. */
export function renderData(value: unknown, output: Extract<OutputFormat, 'json' | 'yaml'>, compact = false): string {
  return output === 'yaml' ? stringify(value, { lineWidth: 0 }).trimEnd() : JSON.stringify(value, null, compact ? undefined : 2);
}

export const isData = (o: OutputFormat): o is 'json' | 'yaml' => o === 'json' || o === 'yaml';
