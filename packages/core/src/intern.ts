/**
 * Interning for cached objects: equal strings in the objects one cache holds share one copy.
 *
 * A JSON parser gives every string of every object its own copy, so a cache of 150k pods holds
 * 150k copies of "ContainersReady", of each owner's name, of each timestamp shared by a pod's
 * conditions. Interning replaces each string value (object values and array elements, at any
 * depth) with the copy the table already holds.
 *
 * Guarantees:
 * - the object is changed in place and stays deep-equal to what it was: only which copy of an
 *   equal string a property points at changes. Call it only on objects nobody else holds yet
 *   (the informer's freshly parsed, freshly transformed objects); a frozen object is skipped;
 * - bounded: the table holds at most `maxEntries` strings, and strings longer than
 *   `maxLength` (rarely shared: messages, container ids) are left as they are;
 * - it makes no garbage once grown: a fixed number of slots, each holding the last string whose
 *   hash chose it, so a string nobody shares (a uid, a name) takes a slot until another string
 *   lands there, and is never kept alive for long. A hash map emptied when full would rebuild its
 *   tables over and over, each a large object only a full collection frees, while a cache fills
 *   (docs/adr/0276).
 */
export interface StringTableOptions {
  /** Strings longer than this are not interned; default 64. */
  maxLength?: number;
  /** Slots at most (rounded down to a power of two); default 65,536. */
  maxEntries?: number;
}

/** Slots a table starts with; it doubles (keeping what it held) while more than a quarter are taken, up to `maxEntries`: a string whose slot is taken replaces what is there, so a fuller table would keep ever less. */
const INITIAL_SLOTS = 1024;

/** FNV-1a over the UTF-16 code units, then mixed so that the low bits a slot is chosen by depend on every character. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class StringTable {
  private slots: (string | undefined)[];
  private taken = 0;
  private readonly maxLength: number;
  private readonly maxSlots: number;

  constructor(opts: StringTableOptions = {}) {
    this.maxLength = opts.maxLength ?? 64;
    const max = Math.max(1, opts.maxEntries ?? 65_536);
    this.maxSlots = 2 ** Math.floor(Math.log2(max));
    this.slots = new Array<string | undefined>(Math.min(INITIAL_SLOTS, this.maxSlots)).fill(undefined);
  }

  /** Strings held. */
  get size(): number {
    return this.taken;
  }

  /** The table's copy of `s` (which becomes the copy, in place of whatever its slot held, if it has none). */
  intern(s: string): string {
    if (s.length > this.maxLength) return s;
    const i = hash(s) & (this.slots.length - 1);
    const held = this.slots[i];
    if (held === s) return held;
    if (held === undefined) {
      this.taken++;
      if (this.taken * 4 > this.slots.length && this.slots.length < this.maxSlots) return this.grow(s);
    }
    this.slots[i] = s;
    return s;
  }

  /** Twice the slots, refilled with what the old ones held, then `s` added. */
  private grow(s: string): string {
    const old = this.slots;
    this.slots = new Array<string | undefined>(old.length * 2).fill(undefined);
    this.taken = 0;
    for (const held of old) if (held !== undefined) this.intern(held);
    return this.intern(s);
  }

  /** Interns every string value in `value`, in place, and returns `value`. */
  internDeep<T>(value: T): T {
    if (typeof value === 'object' && value !== null) this.internObject(value as object);
    return value;
  }

  private internObject(obj: object): void {
    // Frozen (a caller's fixture, a shared constant): left as it is rather than failing.
    if (Object.isFrozen(obj)) return;
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        const v: unknown = obj[i];
        if (typeof v === 'string') obj[i] = this.intern(v);
        else if (typeof v === 'object' && v !== null) this.internObject(v);
      }
      return;
    }
    const record = obj as Record<string, unknown>;
    for (const key in record) {
      const v = record[key];
      if (typeof v === 'string') record[key] = this.intern(v);
      else if (typeof v === 'object' && v !== null) this.internObject(v);
    }
  }
}
