/**
 * A patch's JSON text written straight into bytes, for the admission answer's base64.
 *
 * Guarantees:
 * - the bytes are those of `JSON.stringify(ops)` in UTF-8, key for key and escape for escape;
 * - what this writer does not handle itself (an op that is not a plain object, a value other than
 *   a string, a number, a boolean, null or an empty array, text outside ASCII, a patch longer than
 *   the buffer) is answered -1, and the caller uses `JSON.stringify`;
 * - no string is made: every admission that changes a pod comes here, and `JSON.stringify` of a few
 *   small objects costs several times this loop when the machine has not run it for a while.
 */
import type { JsonPatchOp } from '@podlife/core';

/** Bytes of the JSON escape for each control character, as JSON.stringify writes it. */
const CONTROL_ESCAPES: readonly string[] = Array.from({ length: 0x20 }, (_, c) => JSON.stringify(String.fromCharCode(c)).slice(1, -1));

/** Writes `JSON.stringify(ops)` into `out`; answers the bytes written, or -1 (see the guarantees above). */
export function writePatchJson(ops: readonly JsonPatchOp[], out: Uint8Array): number {
  let o = put(out, 0, 0x5b /* [ */);
  for (let i = 0; i < ops.length; i++) {
    if (i > 0) o = put(out, o, 0x2c /* , */);
    o = writeOp(ops[i], out, o);
    if (o < 0) return -1;
  }
  return put(out, o, 0x5d /* ] */);
}

const hasOwnProperty = Object.prototype.hasOwnProperty;

function writeOp(op: unknown, out: Uint8Array, o: number): number {
  if (typeof op !== 'object' || op === null || Object.getPrototypeOf(op) !== Object.prototype) return -1;
  // JSON.stringify would write what toJSON answers.
  if (typeof (op as { toJSON?: unknown }).toJSON === 'function') return -1;
  o = put(out, o, 0x7b /* { */);
  let first = true;
  for (const key in op) {
    if (!hasOwnProperty.call(op, key)) continue;
    const value: unknown = (op as Record<string, unknown>)[key];
    // JSON.stringify leaves out what has no JSON form; anything else but the simple values is its to write.
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    if (!first) o = put(out, o, 0x2c /* , */);
    first = false;
    o = writeString(key, out, o);
    o = put(out, o, 0x3a /* : */);
    o = writeValue(value, out, o);
    if (o < 0) return -1;
  }
  return put(out, o, 0x7d /* } */);
}

function writeValue(value: unknown, out: Uint8Array, o: number): number {
  if (typeof value === 'string') return writeString(value, out, o);
  if (typeof value === 'boolean' || value === null || (typeof value === 'number' && Number.isFinite(value) && Number.isInteger(value))) return writeAscii(String(value), out, o);
  if (Array.isArray(value) && value.length === 0 && Object.getPrototypeOf(value) === Array.prototype) return writeAscii('[]', out, o);
  return -1;
}

/** A string as JSON, quoted and escaped; -1 for text outside ASCII or past the buffer. */
function writeString(text: string, out: Uint8Array, o: number): number {
  if (o < 0 || o + text.length + 2 > out.length) return -1;
  out[o++] = 0x22;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return -1;
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
      out[o++] = c;
      continue;
    }
    const escape = c < 0x20 ? (CONTROL_ESCAPES[c] as string) : c === 0x22 ? '\\"' : '\\\\';
    if (o + escape.length + (text.length - i) + 1 > out.length) return -1;
    for (let k = 0; k < escape.length; k++) out[o++] = escape.charCodeAt(k);
  }
  out[o++] = 0x22;
  return o;
}

function writeAscii(text: string, out: Uint8Array, o: number): number {
  if (o < 0 || o + text.length > out.length) return -1;
  for (let i = 0; i < text.length; i++) out[o++] = text.charCodeAt(i);
  return o;
}

function put(out: Uint8Array, o: number, byte: number): number {
  if (o < 0 || o >= out.length) return -1;
  out[o] = byte;
  return o + 1;
}
