/**
 * `parseDeferringManagedFields`: `JSON.parse` of an object (or a watch event) whose
 * `metadata.managedFields` is parsed only when something reads it.
 *
 * Guarantees:
 * - the result is deep-equal to `JSON.parse(text)`: `metadata.managedFields` is an enumerable
 *   accessor whose first read parses it (once; a write replaces it, a delete removes it); only its
 *   place among metadata's keys differs (last);
 * - a cache that never reads `managedFields` (a transform that drops it, as most do) never parses
 *   it: every field name of its own that `JSON.parse` meets (`k:{"uid":…}`, `k:{"ip":…}`) costs an
 *   internalized string and a hidden class in V8's old space, garbage only a full collection frees
 *   (docs/adr/0282);
 * - text it cannot find its way through (not an object, no metadata, a key with escapes) is parsed
 *   whole, as `JSON.parse` would, errors included.
 */

import { QUOTE, BACKSLASH, COMMA, COLON, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, isSpace } from './json-bytes.js';

/** Where `managedFields` sits: in an object's metadata, or in a watch event's object's. */
export type ManagedFieldsAt = 'object' | 'event';

const PATHS: Record<ManagedFieldsAt, readonly string[]> = {
  object: ['metadata', 'managedFields'],
  event: ['object', 'metadata', 'managedFields'],
};

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** The index just past the JSON value that starts at `i` (found by brackets and quotes; `JSON.parse` validates). */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
      if (depth === 0) return i + 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth <= 0) return depth === 0 ? i + 1 : i;
    } else if (depth === 0 && (c === COMMA || isSpace(c))) return i;
  }
  return i;
}

/** The member `name` of the object whose `{` is at `open`: where its key and value start, where its value ends. */
function member(text: string, open: number, name: string): { key: number; value: number; end: number } | undefined {
  if (text.charCodeAt(open) !== OPEN_BRACE) return undefined;
  for (let i = skipSpace(text, open + 1); i < text.length; ) {
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = valueEnd(text, i);
    const key = text.slice(i + 1, keyEnd - 1);
    let at = skipSpace(text, keyEnd);
    if (text.charCodeAt(at) !== COLON) return undefined;
    at = skipSpace(text, at + 1);
    const end = valueEnd(text, at);
    if (key === name) return { key: i, value: at, end };
    if (key.includes('\\')) return undefined;
    const next = skipSpace(text, end);
    if (text.charCodeAt(next) !== COMMA) return undefined;
    i = skipSpace(text, next + 1);
  }
  return undefined;
}

/** Where a deferred `managedFields` is held: its text until read, then its value (boxed). */
const HELD = Symbol('managedFields');

/** A `managedFields` value once parsed or written. */
class Value {
  constructor(readonly value: unknown) {}
}

type Holder = Record<string, unknown> & { [HELD]?: string | Value };

/** Keeps what a read parsed or a write set; a frozen object keeps nothing (and parses on each read). */
function hold(target: Holder, value: unknown): void {
  if (!Object.isFrozen(target)) target[HELD] = new Value(value);
}

// One getter and one setter for every object: V8 then shares one hidden class among all the
// objects that carry them. A closure per object gave each its own, in the old space.
function getManagedFields(this: Holder): unknown {
  const held = this[HELD];
  if (held instanceof Value) return held.value;
  let value: unknown;
  try {
    value = JSON.parse(held ?? 'null');
  } catch (err) {
    throw new Error(`metadata.managedFields of ${String(this.namespace ?? '')}/${String(this.name ?? '')} is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  hold(this, value);
  return value;
}

function setManagedFields(this: Holder, value: unknown): void {
  hold(this, value);
}

/** Makes `metadata.managedFields` read as `JSON.parse(raw)`, parsed on first read. */
function defer(metadata: Holder, raw: string): void {
  Object.defineProperty(metadata, 'managedFields', { enumerable: true, configurable: true, get: getManagedFields, set: setManagedFields });
  Object.defineProperty(metadata, HELD, { value: raw, writable: true, enumerable: false, configurable: true });
}

/** `JSON.parse(text)`, with `metadata.managedFields` (of the object, or of the event's object) parsed when first read. */
export function parseDeferringManagedFields(text: string, at: ManagedFieldsAt): unknown {
  const path = PATHS[at];
  let found: { key: number; value: number; end: number } | undefined;
  let open = skipSpace(text, 0);
  for (const name of path) {
    found = member(text, open, name);
    if (!found) return JSON.parse(text);
    open = found.value;
  }
  const { key, value, end } = found as { key: number; value: number; end: number };
  if (text.charCodeAt(value) !== OPEN_BRACKET) return JSON.parse(text);
  // Cut the member and one comma beside it: the one after it, or else the one before it.
  let from = key;
  let to = skipSpace(text, end);
  if (text.charCodeAt(to) === COMMA) to++;
  else {
    const before = text.slice(0, key).trimEnd();
    if (!before.endsWith(',')) return JSON.parse(text);
    from = before.length - 1;
  }
  const parsed = JSON.parse(text.slice(0, from) + text.slice(to)) as Record<string, unknown>;
  let metadata: unknown = parsed;
  for (const name of path.slice(0, -1)) metadata = (metadata as Record<string, unknown> | undefined)?.[name];
  // A second managedFields (the last one counts in JSON.parse) or no metadata object after all.
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata) || Object.hasOwn(metadata, 'managedFields')) return JSON.parse(text);
  defer(metadata as Holder, text.slice(value, end));
  return parsed;
}
