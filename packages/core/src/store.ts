/**
 * The informer's cache: objects keyed by "namespace/name" (or "name" when cluster-scoped).
 *
 * Guarantees: readers only ever see whole objects (the store replaces, never mutates, an entry);
 * `replace` reports exactly which keys appeared, changed (by resourceVersion) or vanished, so a
 * relist can be turned into the events a watch would have delivered.
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';

/** What podlife needs of any Kubernetes object: its type and metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: V1ObjectMeta;
}

/** "namespace/name" for namespaced objects, "name" for cluster-scoped ones (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Splits a key made by `objectKey` back into its parts. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** What `replace` found: keys that appeared, changed or vanished. */
export interface StoreDiff<T> {
  added: T[];
  updated: { old: T; obj: T }[];
  deleted: T[];
}

/** The objects of one collection by key; entries are replaced, never mutated. */
export class Store<T extends KubeObject> {
  private items = new Map<string, T>();

  /** A store holding `objects`; handy for reconciler tests that need no informer. */
  static of<T extends KubeObject>(objects: Iterable<T>): Store<T> {
    const store = new Store<T>();
    for (const obj of objects) store.set(obj);
    return store;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Stores `obj` under its key and returns the object it replaced. */
  set(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    this.items.set(key, obj);
    return old;
  }

  /** Removes the entry with `key` and returns it. */
  remove(key: string): T | undefined {
    const old = this.items.get(key);
    this.items.delete(key);
    return old;
  }

  /** Makes the store hold exactly `objects`; an entry counts as updated when its resourceVersion differs. */
  replace(objects: Iterable<T>): StoreDiff<T> {
    const diff: StoreDiff<T> = { added: [], updated: [], deleted: [] };
    // The first list of a cache: everything is new and nothing can vanish, so no set of the keys
    // seen (as large as the list) is built only to be dropped.
    if (this.items.size === 0) {
      for (const obj of objects) {
        const old = this.set(obj);
        if (old === undefined) diff.added.push(obj);
        else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) diff.updated.push({ old, obj });
      }
      return diff;
    }
    const seen = new Set<string>();
    for (const obj of objects) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.items.get(key);
      this.items.set(key, obj);
      if (old === undefined) diff.added.push(obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) diff.updated.push({ old, obj });
    }
    for (const [key, old] of this.items) {
      if (!seen.has(key)) {
        this.items.delete(key);
        diff.deleted.push(old);
      }
    }
    return diff;
  }
}

/**
 * Makes an empty store hold `items` (each under its `objectKey`), taking the map over so that a
 * first list is not copied into a second table; false, with nothing done, when the store holds
 * anything. Internal to core: the informer's first sync.
 */
export function adoptInto<T extends KubeObject>(store: Store<T>, items: Map<string, T>): boolean {
  if (store.size !== 0) return false;
  store['items'] = items;
  return true;
}
