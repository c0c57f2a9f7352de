/**
 * Text from the cluster made safe to print on a terminal: what a pod author, a node or an API
 * server wrote (names, annotation values, termination and condition messages, Events) never
 * reaches the terminal as a control sequence (ADR 0260).
 *
 * Guarantees: `terminalText` returns a string with no C0 control (U+0000-U+001F), no DEL, no C1
 * control (U+0080-U+009F) and no bidirectional formatting character (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069):
 * - line breaks and tabs (TAB, LF, VT, FF, CR, U+2028, U+2029) become one space: cluster text never
 *   chooses where the CLI's lines break or its columns start;
 * - every other one is shown escaped, as Go's `%q` shows it (`\x1b`, `\u009b`, `\u202e`), so the
 *   evidence stays readable and nothing acts on the terminal.
 * `terminalSafe` does the same to every string (and key) of a value made of plain objects, arrays
 * and Maps, and leaves numbers, booleans and Dates alone. JSON and YAML output never go through it.
 */

const spaces = /[\t\n\v\f\r\u2028\u2029]/g;
const controls = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

function escape(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One string as the terminal may show it (see above). */
export function terminalText(text: string): string {
  return text.replace(spaces, ' ').replace(controls, escape);
}

/** A copy of `value` with every string in it made `terminalText`. */
export function terminalSafe<T>(value: T): T {
  return safe(value) as T;
}

function safe(value: unknown): unknown {
  if (typeof value === 'string') return terminalText(value);
  if (Array.isArray(value)) return value.map(safe);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [safe(k), safe(v)]));
  if (value !== null && typeof value === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(value))) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [terminalText(k), safe(v)]));
  }
  return value;
}
