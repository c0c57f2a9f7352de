/**
 * A pod timeline drawn for a terminal: one horizontal bar per stage on a shared time axis, like a
 * Gantt chart.
 *
 * Guarantees: pure (a string out, no terminal queries); every line fits `width` columns; a stage
 * that took no time still gets a one-column mark, so no reached stage is invisible; a stage the
 * pod is waiting in is drawn with a distinct glyph up to `nowMs`; never throws on a timeline
 * without times.
 */
import { formatDuration } from './duration.js';
import type { PodTimeline, TimelineEntry } from './timeline.js';

/** Width and glyphs of a rendered timeline. */
export interface RenderOptions {
  /** Total columns, at least 40. Default 80. */
  width?: number;
  /** Plain ASCII glyphs for terminals without Unicode. */
  ascii?: boolean;
}

const glyphs = {
  unicode: { done: '█', waiting: '░', pending: '·', tick: '┼', axis: '─' },
  ascii: { done: '#', waiting: '~', pending: '.', tick: '+', axis: '-' },
};

const labelWidth = 20;
const durationWidth = 8;

/** The timeline as lines of text (joined with '\n', no trailing newline). */
export function renderTimeline(timeline: PodTimeline, opts: RenderOptions = {}): string {
  const width = Math.max(40, opts.width ?? 80);
  const g = opts.ascii ? glyphs.ascii : glyphs.unicode;
  const barWidth = width - labelWidth - durationWidth - 3;
  const entries = [...timeline.stages, ...timeline.pulls];
  const timed = entries.filter((e) => e.startMs !== undefined);
  const origin = timeline.createdMs ?? Math.min(...timed.map((e) => e.startMs ?? Infinity));
  const end = Math.max(origin, ...timed.map((e) => e.endMs ?? e.startMs ?? origin));
  const span = end - origin;
  const col = (ms: number): number => (span <= 0 ? 0 : Math.min(barWidth - 1, Math.floor(((ms - origin) / span) * barWidth)));

  const lines: string[] = [];
  const axisRight = formatDuration(span);
  lines.push(`${pad('stage', labelWidth)} ${padLeft('took', durationWidth)}  0${padLeft(axisRight, barWidth - 1)}`);
  lines.push(`${' '.repeat(labelWidth)} ${' '.repeat(durationWidth)}  ${g.tick}${g.axis.repeat(Math.max(0, barWidth - 2))}${g.tick}`);
  const ordered = orderForDisplay(timeline);
  for (const e of ordered) {
    lines.push(`${pad(labelFor(e), labelWidth)} ${padLeft(durationFor(e), durationWidth)}  ${bar(e, col, barWidth, g)}`.trimEnd());
  }
  return lines.join('\n');
}

/** Reached stages and pulls interleaved by start time; waiting and unreached stages last. */
function orderForDisplay(t: PodTimeline): TimelineEntry[] {
  const reached = t.stages.filter((s) => s.state === 'reached');
  const rest = t.stages.filter((s) => s.state !== 'reached');
  const timed = [...reached, ...t.pulls].map((e, i) => ({ e, i }));
  timed.sort((a, b) => (a.e.endMs ?? a.e.startMs ?? 0) - (b.e.endMs ?? b.e.startMs ?? 0) || a.i - b.i);
  return [...timed.map((x) => x.e), ...rest];
}

function labelFor(e: TimelineEntry): string {
  const suffix = e.source === 'inferred' ? ' *' : '';
  return `${e.kind === 'pull' ? '  ' : ''}${e.label}${suffix}`;
}

function durationFor(e: TimelineEntry): string {
  if (e.state === 'not-reached') return '-';
  if (e.durationMs === undefined) return e.state === 'waiting' ? '...' : '?';
  return e.state === 'waiting' ? `${formatDuration(e.durationMs)}+` : formatDuration(e.durationMs);
}

function bar(e: TimelineEntry, col: (ms: number) => number, barWidth: number, g: (typeof glyphs)['unicode']): string {
  if (e.state === 'not-reached' || e.startMs === undefined) return g.pending.repeat(Math.min(3, barWidth));
  const from = col(e.startMs);
  const to = Math.max(from, col(e.endMs ?? e.startMs));
  const glyph = e.state === 'waiting' ? g.waiting : g.done;
  return `${' '.repeat(from)}${glyph.repeat(to - from + 1)}`;
}

function pad(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n);
}

function padLeft(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) : s.padStart(n);
}
