/**
 * Decoding an AdmissionReview for keystone's lifecycle mutation: only the members it reads are
 * made into objects, as a Go webhook decodes into a struct of the fields it needs. The pod of a
 * review is mostly what podlife never reads (environment, arguments, probes, resources, volumes,
 * managed fields), and `JSON.parse` spends its time on objects and property names, not bytes.
 *
 * Guarantees:
 * - the answer is `JSON.parse(body.toString('utf8'))` without the members LIFECYCLE_FIELDS leaves
 *   out; every other member is kept as `JSON.parse` gives it, and so is any member whose name holds
 *   an escape (`\u0065`), and duplicate names keep the last one, as `JSON.parse` does;
 * - a body `JSON.parse` refuses is refused with `JSON.parse`'s own error: every byte left out is
 *   checked against the JSON grammar, and a body that breaks it, or nests deeper than
 *   NESTING_MAX, is handed to `JSON.parse` whole;
 * - linear in the body's length; synchronous, with one buffer kept for the bytes kept.
 *
 * Only mutations marked here read pods decoded this way (`lifecycleMutator`, and `withPolicies`
 * over it); a test runs them on pods decoded both ways and compares the answers.
 */
import type { AdmissionOptions } from './admission.js';

/** A member kept whole. */
const ALL = null;

/** The members kept of an object (and of each object in an array): by name, what of the value is kept. */
interface Fields {
  readonly [name: string]: Fields | typeof ALL;
}

/** What a container gives the mutation: its name and image (policies), its restart rules and lifecycle (conversion). */
const CONTAINER: Fields = { name: ALL, image: ALL, restartPolicy: ALL, restartPolicyRules: ALL, lifecycle: ALL };

/**
 * The members of a review the lifecycle mutation reads (`readLifecycle`, the conversion and restart
 * plans, the candidate nodes, the managed label, lifecycle policies), and the request's own.
 */
export const LIFECYCLE_FIELDS: Fields = {
  apiVersion: ALL,
  kind: ALL,
  request: {
    uid: ALL,
    kind: ALL,
    operation: ALL,
    namespace: ALL,
    object: {
      metadata: { namespace: ALL, labels: ALL, annotations: ALL, ownerReferences: ALL },
      spec: {
        containers: CONTAINER,
        initContainers: CONTAINER,
        nodeName: ALL,
        nodeSelector: ALL,
        os: ALL,
        restartPolicy: ALL,
        shareProcessNamespace: ALL,
        hostPID: ALL,
      },
    },
  },
};

/** A mutation that reads no member LIFECYCLE_FIELDS leaves out. */
const READS_LIFECYCLE_FIELDS = new WeakSet<AdmissionOptions['mutate']>();

/** Marks `mutate` as reading only LIFECYCLE_FIELDS (keystone's own mutations only). */
export function readsLifecycleFields<M extends AdmissionOptions['mutate']>(mutate: M): M {
  READS_LIFECYCLE_FIELDS.add(mutate);
  return mutate;
}

/** True when `mutate` was marked by readsLifecycleFields. */
export function readsOnlyLifecycleFields(mutate: AdmissionOptions['mutate']): boolean {
  return READS_LIFECYCLE_FIELDS.has(mutate);
}

/** An object's kept members as bytes to compare names against, and what of each value is kept. */
interface Level {
  readonly names: readonly Uint8Array[];
  readonly kept: readonly (Level | undefined)[];
}

function levelOf(fields: Fields): Level {
  const names = Object.keys(fields);
  return { names: names.map((n) => Buffer.from(n, 'latin1')), kept: names.map((n) => (fields[n] === ALL ? undefined : levelOf(fields[n] as Fields))) };
}

const REVIEW_LEVEL = levelOf(LIFECYCLE_FIELDS);

/** Deeper than this the body is handed to JSON.parse whole (a pod's own nesting is about ten). */
export const NESTING_MAX = 64;

/** Where the scan stopped on something that is not JSON: JSON.parse decides, and names the error. */
const MALFORMED = -1;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The closing bytes of the containers a skip is inside (synchronous: one for all). */
const CLOSERS = new Uint8Array(NESTING_MAX + 1);

/** Bytes kept between reviews; a body larger than it gets a buffer of its own. */
const KEPT_BYTES = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * One pass over the body: values outside the kept members are checked and skipped, kept ones
 * copied to `out`. Each step takes the index it starts at and answers the one after what it read,
 * or MALFORMED. Recursion is bounded by NESTING_MAX.
 */
class Pruner {
  /** Bytes written to `out`. */
  o = 0;
  constructor(
    private readonly src: Buffer,
    readonly out: Buffer,
  ) {}

  ws(i: number): number {
    const src = this.src;
    const n = src.length;
    while (i < n) {
      const c = src[i] as number;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
    return i;
  }

  /** The value at `i`: kept (pruned by `level` when it is an object or an array of them) or skipped. */
  value(i: number, level: Level | undefined, keep: boolean, depth: number): number {
    if (depth > NESTING_MAX) return MALFORMED;
    i = this.ws(i);
    const c = this.src[i];
    if (keep && level !== undefined && c === OPEN_OBJECT) return this.object(i, level, depth);
    if (keep && level !== undefined && c === OPEN_ARRAY) return this.array(i, level, depth);
    const end = this.skip(i, depth);
    if (keep && end !== MALFORMED) this.copy(i, end);
    return end;
  }

  /**
   * Any value from `i`, checked and passed over in one loop: what is left out is most of a review,
   * so it costs one step per token, with no call per container (nesting in a kept stack).
   */
  private skip(i: number, depth: number): number {
    const src = this.src;
    let open = 0;
    for (;;) {
      // A value starts at `i`.
      const c = src[i];
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
        i = this.ws(i + 1);
        if (src[i] !== close) {
          if (depth + open >= NESTING_MAX) return MALFORMED;
          CLOSERS[open++] = close;
          if (close === CLOSE_OBJECT) i = this.name(i);
          if (i === MALFORMED) return MALFORMED;
          continue;
        }
        i++;
      } else if (c === QUOTE) i = this.string(i);
      else if (c === 0x74 /* t */) i = this.literal(i, TRUE);
      else if (c === 0x66 /* f */) i = this.literal(i, FALSE);
      else if (c === 0x6e /* n */) i = this.literal(i, NULL);
      else i = this.number(i);
      if (i === MALFORMED) return MALFORMED;
      // After a value: close what ends here, then the next element or member, if any.
      for (;;) {
        if (open === 0) return i;
        i = this.ws(i);
        const next = src[i++];
        if (next === CLOSERS[open - 1]) {
          open--;
          continue;
        }
        if (next !== COMMA) return MALFORMED;
        i = this.ws(i);
        if (CLOSERS[open - 1] === CLOSE_OBJECT) i = this.name(i);
        if (i === MALFORMED) return MALFORMED;
        break;
      }
    }
  }

  /** A member's name and colon from `i`: where its value starts, or MALFORMED. */
  private name(i: number): number {
    if (this.src[i] !== QUOTE) return MALFORMED;
    i = this.string(i);
    if (i === MALFORMED) return MALFORMED;
    i = this.ws(i);
    if (this.src[i] !== COLON) return MALFORMED;
    return this.ws(i + 1);
  }

  /** An object pruned by `level`: the members it names, and those whose name holds an escape. */
  private object(i: number, level: Level, depth: number): number {
    this.put(OPEN_OBJECT);
    const end = this.members(i, level, depth);
    if (end !== MALFORMED) this.put(CLOSE_OBJECT);
    return end;
  }

  /** An object's members from its `{` at `i`: those `level` keeps are written (without the braces). */
  private members(i: number, level: Level, depth: number): number {
    const src = this.src;
    let first = true;
    i = this.ws(i + 1);
    if (src[i] === CLOSE_OBJECT) return i + 1;
    for (;;) {
      i = this.ws(i);
      if (src[i] !== QUOTE) return MALFORMED;
      const name = i;
      i = this.string(i);
      if (i === MALFORMED) return MALFORMED;
      const escaped = this.escapes > 0;
      const k = escaped ? -1 : this.find(level, name + 1, i - 1);
      const keep = escaped || k >= 0;
      i = this.ws(i);
      if (src[i] !== COLON) return MALFORMED;
      i++;
      if (keep) {
        if (!first) this.put(COMMA);
        first = false;
        this.copy(name, i);
      }
      i = this.value(i, k >= 0 ? level.kept[k] : undefined, keep, depth + 1);
      if (i === MALFORMED) return MALFORMED;
      i = this.ws(i);
      const next = src[i++];
      if (next === CLOSE_OBJECT) return i;
      if (next !== COMMA) return MALFORMED;
    }
  }

  /** An array whose objects are pruned by `level`; every element is kept. */
  private array(i: number, level: Level, depth: number): number {
    const src = this.src;
    this.put(OPEN_ARRAY);
    i = this.ws(i + 1);
    if (src[i] === CLOSE_ARRAY) {
      this.put(CLOSE_ARRAY);
      return i + 1;
    }
    for (;;) {
      i = this.value(i, level, true, depth + 1);
      if (i === MALFORMED) return MALFORMED;
      i = this.ws(i);
      const next = src[i++];
      if (next === CLOSE_ARRAY) {
        this.put(CLOSE_ARRAY);
        return i;
      }
      if (next !== COMMA) return MALFORMED;
      this.put(COMMA);
    }
  }

  /** Escapes in the last string read. */
  private escapes = 0;

  /** A string from its quote at `i`. */
  private string(i: number): number {
    const src = this.src;
    const n = src.length;
    let escapes = 0;
    i++;
    while (i < n) {
      const c = src[i] as number;
      if (c === QUOTE) {
        this.escapes = escapes;
        return i + 1;
      }
      if (c < 0x20) return MALFORMED;
      if (c !== BACKSLASH) {
        i++;
        continue;
      }
      escapes++;
      const e = src[i + 1];
      if (e === 0x75 /* u */) {
        if (!isHex(src[i + 2]) || !isHex(src[i + 3]) || !isHex(src[i + 4]) || !isHex(src[i + 5])) return MALFORMED;
        i += 6;
      } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        i += 2;
      } else {
        return MALFORMED;
      }
    }
    return MALFORMED;
  }

  private number(i: number): number {
    const src = this.src;
    if (src[i] === 0x2d /* - */) i++;
    if (src[i] === 0x30 /* 0 */) i++;
    else if (isDigit(src[i])) while (isDigit(src[i])) i++;
    else return MALFORMED;
    if (src[i] === 0x2e /* . */) {
      if (!isDigit(src[++i])) return MALFORMED;
      while (isDigit(src[i])) i++;
    }
    if (src[i] === 0x65 /* e */ || src[i] === 0x45 /* E */) {
      i++;
      if (src[i] === 0x2b /* + */ || src[i] === 0x2d /* - */) i++;
      if (!isDigit(src[i])) return MALFORMED;
      while (isDigit(src[i])) i++;
    }
    return i;
  }

  private literal(i: number, word: Uint8Array): number {
    for (let k = 0; k < word.length; k++) if (this.src[i + k] !== word[k]) return MALFORMED;
    return i + word.length;
  }

  /** The index in `level` of the member named by the bytes [from, to), or -1. */
  private find(level: Level, from: number, to: number): number {
    const src = this.src;
    const length = to - from;
    outer: for (let k = 0; k < level.names.length; k++) {
      const name = level.names[k] as Uint8Array;
      if (name.length !== length) continue;
      for (let j = 0; j < length; j++) if (name[j] !== src[from + j]) continue outer;
      return k;
    }
    return -1;
  }

  private put(byte: number): void {
    this.out[this.o++] = byte;
  }

  private copy(from: number, to: number): void {
    if (to - from > 64) {
      this.o += this.src.copy(this.out, this.o, from, to);
      return;
    }
    const src = this.src;
    const out = this.out;
    let o = this.o;
    for (let k = from; k < to; k++) out[o++] = src[k] as number;
    this.o = o;
  }
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));
}

/**
 * The review in `body` with only LIFECYCLE_FIELDS decoded (see the guarantees above). Throws
 * JSON.parse's SyntaxError for a body that is not JSON.
 */
export function decodeLifecycleReview(body: Buffer): unknown {
  const pruner = new Pruner(body, body.length <= KEPT_BYTES.length ? KEPT_BYTES : Buffer.allocUnsafe(body.length));
  const end = pruner.value(0, REVIEW_LEVEL, true, 0);
  if (end !== MALFORMED && pruner.ws(end) === body.length) {
    try {
      return JSON.parse(pruner.out.toString('utf8', 0, pruner.o));
    } catch {
      // Were the scan to let through what JSON.parse refuses, the body's own parse names the error.
    }
  }
  return JSON.parse(body.toString('utf8'));
}
