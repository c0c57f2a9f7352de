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
 *   `maxLength` (rarely shared: messages, container ids) are left as they are; a full table is
 *   emptied and refilled, so it never keeps alive a string no cached object uses for long.
 */
export interface StringTableOptions {
  /** Strings longer than this are not interned; default 64. */
  maxLength?: number;
  /** Entries before the table starts over; default 65,536. */
  maxEntries?: number;
}

export class StringTable {
  private readonly table = new Map<string, string>();
  private readonly maxLength: number;
  private readonly maxEntries: number;

  constructor(opts: StringTableOptions = {}) {
    this.maxLength = opts.maxLength ?? 64;
    this.maxEntries = opts.maxEntries ?? 65_536;
  }

  get size(): number {
    return this.table.size;
  }

  /** The table's copy of `s` (which becomes the copy, if it has none). */
  intern(s: string): string {
    if (s.length > this.maxLength) return s;
    const held = this.table.get(s);
    if (held !== undefined) return held;
    if (this.table.size >= this.maxEntries) this.table.clear();
    this.table.set(s, s);
    return s;
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
