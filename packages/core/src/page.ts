/**
 * `readPage`: one list answer (`{"kind":…,"metadata":…,"items":[…]}`) read from its bytes one item
 * at a time.
 *
 * Guarantees:
 * - each item is parsed alone as soon as its last byte arrives, and handed over before the next
 *   one is read: no string longer than one item and no object graph of more than one item exists
 *   at any time (a page of 100 pods as one string is ~1 MiB, which V8 keeps in its large-object
 *   space until a full collection; docs/adr/0281);
 * - the fields other than `items` are parsed as they come, so an item sees those read before it
 *   (an API server writes `kind`, `apiVersion` and `metadata` first), and are returned once the
 *   answer ends;
 * - an answer that is not one JSON object whose `items` is an array (or null, or absent), an item
 *   that is not JSON, and a stream that ends before the object does are errors saying what was
 *   found where.
 */

import { QUOTE, BACKSLASH, COMMA, COLON, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, isSpace } from './json-bytes.js';

/** The fields of a list answer other than `items`, as parsed. */
export type PageFields = Record<string, unknown>;

/**
 * Where the reader is in the answer: what the next byte that is not white space must be.
 * `value` is the value of the field named last; `item` an element of `items`.
 */
type Expecting = 'open' | 'firstKey' | 'key' | 'colon' | 'value' | 'afterValue' | 'firstItem' | 'item' | 'afterItem' | 'nothing';

/** What the value being captured is. */
type Capturing = 'key' | 'value' | 'item';

const EXPECTED: Record<Expecting, string> = {
  open: '"{"',
  firstKey: 'a field name or "}"',
  key: 'a field name',
  colon: '":"',
  value: 'a value',
  afterValue: '"," or "}"',
  firstItem: 'an item or "]"',
  item: 'an item',
  afterItem: '"," or "]" in items',
  nothing: 'nothing after the end of the object',
};

/**
 * Finds where one JSON value ends, across chunks, by brackets and quotes alone (what is inside is
 * left to `JSON.parse`): a string or bracketed value ends with its closing byte, a number, true,
 * false or null at the first delimiter after it.
 */
class ValueEnd {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;

  begin(first: number): void {
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.scalar = first !== QUOTE && first !== OPEN_BRACE && first !== OPEN_BRACKET;
  }

  /** The index just past the value's last byte in `bytes` from `from`, or -1 when it goes on past them. */
  find(bytes: Uint8Array, from: number): number {
    let { depth, inString } = this;
    const n = bytes.length;
    let i = from;
    // A backslash ended the last chunk: the byte it escapes opens this one.
    if (this.escaped) {
      this.escaped = false;
      i++;
    }
    for (; i < n; i++) {
      let b = bytes[i] as number;
      if (inString) {
        // Most bytes of a list are inside strings: this loop is the reader's hot path.
        while (b !== QUOTE && b !== BACKSLASH) {
          if (++i === n) return this.pause(depth, true);
          b = bytes[i] as number;
        }
        if (b === BACKSLASH) {
          if (++i === n) {
            this.escaped = true;
            return this.pause(depth, true);
          }
          continue;
        }
        inString = false;
        if (depth === 0) return i + 1;
      } else if (this.scalar) {
        if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || isSpace(b)) return i;
      } else if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
      else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (--depth === 0) return i + 1;
      }
    }
    return this.pause(depth, inString);
  }

  private pause(depth: number, inString: boolean): -1 {
    this.depth = depth;
    this.inString = inString;
    return -1;
  }
}

/** A list answer fed chunk by chunk; `onItem` gets each item as soon as it is whole. */
class PageReader {
  private expecting: Expecting = 'open';
  private capturing: Capturing | undefined;
  private readonly end = new ValueEnd();
  /** The bytes of the value being captured that came in earlier chunks. */
  private carried: Uint8Array[] = [];
  private key = '';
  /** Bytes read before the current chunk, for error messages. */
  private offset = 0;
  private items = 0;
  private readonly fields: PageFields = {};

  constructor(
    private readonly what: string,
    private readonly onItem: (item: unknown, fields: PageFields) => void,
    private readonly parseItem: (text: string) => unknown,
  ) {}

  push(bytes: Buffer): void {
    const n = bytes.length;
    for (let i = 0; i < n; ) {
      if (this.capturing) {
        const end = this.end.find(bytes, i);
        if (end < 0) {
          this.carried.push(i === 0 ? bytes : bytes.subarray(i));
          break;
        }
        this.captured(this.text(bytes, i, end));
        i = end;
        continue;
      }
      const b = bytes[i] as number;
      if (isSpace(b)) i++;
      else if (this.token(b, this.offset + i)) i++;
      // A value starts here; its first byte is left for `find`, which counts the bracket or quote it opens.
      else this.begin(b);
    }
    this.offset += n;
  }

  /** Checks that the answer is complete; returns its fields other than `items`. */
  finish(): PageFields {
    if (this.expecting !== 'nothing') {
      const inItems = this.capturing === 'item' || this.expecting === 'item' || this.expecting === 'firstItem' || this.expecting === 'afterItem';
      throw new Error(`${this.what}: the answer ended after ${this.offset} bytes, before its JSON object did${inItems ? ` (inside items, ${this.items} read)` : ''}`);
    }
    return this.fields;
  }

  /** Takes a one-byte token (a bracket, colon or comma); false when `b` starts a value instead. */
  private token(b: number, at: number): boolean {
    const fail = (): never => this.fail(b, at);
    let next: Expecting | undefined;
    switch (this.expecting) {
      case 'open':
        next = b === OPEN_BRACE ? 'firstKey' : fail();
        break;
      case 'firstKey':
        next = b === CLOSE_BRACE ? 'nothing' : b === QUOTE ? undefined : fail();
        break;
      case 'key':
        next = b === QUOTE ? undefined : fail();
        break;
      case 'colon':
        next = b === COLON ? 'value' : fail();
        break;
      case 'value':
        next = b === COMMA || b === CLOSE_BRACE ? fail() : this.key === 'items' && b === OPEN_BRACKET ? 'firstItem' : undefined;
        break;
      case 'afterValue':
        next = b === COMMA ? 'key' : b === CLOSE_BRACE ? 'nothing' : fail();
        break;
      case 'firstItem':
        next = b === CLOSE_BRACKET ? 'afterValue' : b === COMMA ? fail() : undefined;
        break;
      case 'item':
        next = b === COMMA || b === CLOSE_BRACKET ? fail() : undefined;
        break;
      case 'afterItem':
        next = b === COMMA ? 'item' : b === CLOSE_BRACKET ? 'afterValue' : fail();
        break;
      case 'nothing':
        next = fail();
        break;
    }
    if (next === undefined) return false;
    this.expecting = next;
    return true;
  }

  private begin(first: number): void {
    this.capturing = this.expecting === 'firstKey' || this.expecting === 'key' ? 'key' : this.expecting === 'value' ? 'value' : 'item';
    this.end.begin(first);
  }

  private text(bytes: Buffer, from: number, to: number): string {
    if (this.carried.length === 0) return bytes.toString('utf8', from, to);
    const whole = Buffer.concat([...this.carried, bytes.subarray(from, to)]);
    this.carried = [];
    return whole.toString('utf8');
  }

  private captured(text: string): void {
    const capturing = this.capturing;
    this.capturing = undefined;
    if (capturing === 'key') {
      this.key = this.parse(text, 'a field name') as string;
      this.expecting = 'colon';
    } else if (capturing === 'value') {
      const value = this.parse(text, `the value of "${this.key}"`);
      if (this.key !== 'items') this.fields[this.key] = value;
      else if (value !== null) throw new Error(`${this.what}: the answer's "items" is ${JSON.stringify(value)?.slice(0, 40)}, not an array`);
      this.expecting = 'afterValue';
    } else {
      const item = this.parse(text, `item ${this.items}`, this.parseItem);
      this.items++;
      this.expecting = 'afterItem';
      this.onItem(item, this.fields);
    }
  }

  private parse(text: string, what: string, parse: (text: string) => unknown = JSON.parse): unknown {
    try {
      return parse(text);
    } catch (err) {
      throw new Error(`${this.what}: ${what} in the answer is not JSON (${err instanceof Error ? err.message : String(err)}): ${text.slice(0, 120)}`);
    }
  }

  private fail(b: number, at: number): never {
    const found = b >= 0x20 && b < 0x7f ? JSON.stringify(String.fromCharCode(b)) : `byte 0x${b.toString(16).padStart(2, '0')}`;
    throw new Error(`${this.what}: the answer is not a JSON list: expected ${EXPECTED[this.expecting]} at byte ${at}, found ${found}`);
  }
}

/**
 * Reads a list answer from `chunks`, handing each item (parsed by `parseItem`, default
 * `JSON.parse`) to `onItem` with the fields read so far, before reading on; resolves with the
 * fields other than `items` once the answer is complete. `what` starts every error message (e.g.
 * "listing /api/v1/pods").
 */
export async function readPage(
  chunks: AsyncIterable<Buffer | string>,
  what: string,
  onItem: (item: unknown, fields: PageFields) => void,
  parseItem: (text: string) => unknown = JSON.parse,
): Promise<PageFields> {
  const reader = new PageReader(what, onItem, parseItem);
  for await (const chunk of chunks) reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return reader.finish();
}
