/**
 * The three patch types of the Kubernetes API, applied as the API server applies them, for the
 * fake API server.
 *
 * Guarantees: the input object is never changed (a patched copy is returned); a JSON patch
 * (RFC 6902) applies all of its ops or none, and a failed `test` or a path that does not exist
 * throws PatchError (the server answers 422); a merge patch follows RFC 7386 (null removes);
 * a strategic merge patch merges like one, except the lists Kubernetes merges by key: conditions
 * by `type`, containers, volumes, ports and env by `name`, taints by `key` (`$patch: delete`
 * in an element removes it).
 */
import type { JsonPatchOp } from '../patch.js';

/** A patch that cannot apply (a failed `test`, a missing path): the server answers 422. */
export class PatchError extends Error {
  override readonly name = 'PatchError';
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new PatchError(`JSON pointer "${pointer}" must start with "/"`);
  return pointer.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function parentOf(doc: Json, path: string): { parent: JsonObject | Json[]; last: string } {
  const parts = tokens(path);
  const last = parts.pop();
  if (last === undefined) throw new PatchError('an op on the whole document is not supported');
  let at: Json = doc;
  for (const t of parts) {
    const next: Json | undefined = Array.isArray(at) ? at[Number(t)] : isObject(at) ? at[t] : undefined;
    if (next === undefined || next === null || typeof next !== 'object') throw new PatchError(`path ${path}: "${t}" does not exist`);
    at = next;
  }
  if (typeof at !== 'object' || at === null) throw new PatchError(`path ${path}: parent is not an object or array`);
  return { parent: at, last };
}

function get(doc: Json, path: string): Json | undefined {
  let at: Json | undefined = doc;
  for (const t of tokens(path)) at = Array.isArray(at) ? at[Number(t)] : isObject(at) ? at[t] : undefined;
  return at;
}

function index(arr: Json[], token: string, forAdd: boolean): number {
  if (forAdd && token === '-') return arr.length;
  const i = Number(token);
  if (!/^\d+$/.test(token) || i > arr.length || (!forAdd && i === arr.length)) throw new PatchError(`array index "${token}" is out of range`);
  return i;
}

function add(doc: Json, path: string, value: Json): void {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, last, true), 0, value);
  else parent[last] = value;
}

function remove(doc: Json, path: string): Json {
  const { parent, last } = parentOf(doc, path);
  if (Array.isArray(parent)) return parent.splice(index(parent, last, false), 1)[0] as Json;
  if (!Object.hasOwn(parent, last)) throw new PatchError(`path ${path} does not exist`);
  const old = parent[last] as Json;
  delete parent[last];
  return old;
}

/** RFC 6902: all ops or none, on a copy. */
export function applyJsonPatch<T>(obj: T, ops: readonly JsonPatchOp[]): T {
  if (!Array.isArray(ops)) throw new PatchError('a JSON patch is an array of operations');
  const doc = structuredClone(obj) as Json;
  for (const op of ops) {
    const value = structuredClone(op.value) as Json;
    switch (op.op) {
      case 'add':
        add(doc, op.path, value);
        break;
      case 'remove':
        remove(doc, op.path);
        break;
      case 'replace':
        remove(doc, op.path);
        add(doc, op.path, value);
        break;
      case 'test':
        if (JSON.stringify(get(doc, op.path)) !== JSON.stringify(value)) throw new PatchError(`test of ${op.path} failed`);
        break;
      case 'move':
      case 'copy': {
        const from = get(doc, op.from ?? '');
        if (from === undefined) throw new PatchError(`from ${op.from} does not exist`);
        if (op.op === 'move') remove(doc, op.from ?? '');
        add(doc, op.path, structuredClone(from));
        break;
      }
      default:
        throw new PatchError(`unknown op ${JSON.stringify((op as { op: unknown }).op)}`);
    }
  }
  return doc as T;
}

/** RFC 7386 (null removes a member), on a copy. */
export function applyMergePatch<T>(obj: T, patch: unknown): T {
  return merge(structuredClone(obj) as Json, patch as Json, false) as T;
}

/** Kubernetes' strategic merge: a merge patch whose keyed lists merge by key (see the header), on a copy. */
export function applyStrategicMergePatch<T>(obj: T, patch: unknown): T {
  return merge(structuredClone(obj) as Json, patch as Json, true) as T;
}

/** Lists Kubernetes merges by a key under strategic merge, by field name. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  conditions: 'type',
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  ports: 'containerPort',
  env: 'name',
  taints: 'key',
  readinessGates: 'conditionType',
};

function merge(target: Json, patch: Json, strategic: boolean, field = ''): Json {
  if (!isObject(patch)) {
    const key = strategic ? MERGE_KEYS[field] : undefined;
    if (key && Array.isArray(patch) && Array.isArray(target)) return mergeList(target, patch, key);
    return structuredClone(patch);
  }
  const out: JsonObject = isObject(target) ? target : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k] ?? null, v, strategic, k);
  }
  return out;
}

function mergeList(target: Json[], patch: Json[], key: string): Json[] {
  const out = [...target];
  for (const item of patch) {
    if (!isObject(item)) throw new PatchError(`a strategic merge list element must be an object with "${key}"`);
    const at = out.findIndex((x) => isObject(x) && x[key] === item[key]);
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) out[at] = merge(out[at] as Json, item, true);
    else out.push(merge({}, item, true));
  }
  return out;
}
