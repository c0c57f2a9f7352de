/**
 * The bytes (and UTF-16 code units: the same values) that structure JSON text, for the scanners
 * that find where a value ends without parsing it (`page.ts`, `managed-fields.ts`); what is
 * between them is always left to `JSON.parse`. Internal to core.
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** JSON's white space: space, line feed, carriage return, tab. */
export const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
