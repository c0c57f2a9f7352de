/**
 * Reading annotations and validating the names they carry.
 *
 * Guarantees:
 * - bad input never throws anything but an `InvalidAnnotationError`, whose message names the
 *   key, the offending value and what would be accepted — key and value clipped, so a hostile
 *   annotation never makes a long message;
 * - name validation matches the API server's (k8s.io/apimachinery/pkg/util/validation):
 *   a key this module accepts is one the server accepts, and the reverse;
 * - only own properties are read, so keys like `constructor` are never mistaken for values.
 */

export class InvalidAnnotationError extends Error {
  override readonly name = 'InvalidAnnotationError';
  constructor(
    readonly key: string,
    readonly value: string | undefined,
    readonly reason: string,
  ) {
    super(`annotation "${clipText(key, KEY_SHOWN)}"${value !== undefined ? ` = "${typeof value === 'string' ? clipText(value, VALUE_SHOWN) : typeof value}"` : ''}: ${reason}`);
  }
}

/** How much of a key and of a value an error message shows: bad input never makes a long message. */
const KEY_SHOWN = 128;
const VALUE_SHOWN = 128;

/** `text` cut to `max` characters, saying how many were left out. */
export function clipText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more characters)`;
}

const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const QUALIFIED_NAME_MAX = 63;
const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelRe = new RegExp(`^${DNS1123_LABEL}$`);
const dns1123SubdomainRe = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);
const qualifiedNameRe = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

// The server measures length in bytes (Go's len); the regexes admit only ASCII, so any
// non-ASCII name fails them regardless, and length in UTF-16 units is enough.
function problems(list: string[]): string | undefined {
  return list.length === 0 ? undefined : list.join('; ');
}

/** Why `name` is not an RFC 1123 label (container, namespace and command names), or undefined when it is one. */
export function dns1123LabelProblem(name: string): string | undefined {
  const found: string[] = [];
  if (name.length > DNS1123_LABEL_MAX) found.push(`must be no more than ${DNS1123_LABEL_MAX} characters`);
  if (!dns1123LabelRe.test(name)) {
    found.push(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', " +
        "and must start and end with an alphanumeric character (e.g. 'my-name' or '123-abc')",
    );
  }
  return problems(found);
}

function dns1123SubdomainProblems(name: string): string[] {
  const found: string[] = [];
  if (name.length > DNS1123_SUBDOMAIN_MAX) found.push(`must be no more than ${DNS1123_SUBDOMAIN_MAX} characters`);
  if (!dns1123SubdomainRe.test(name)) {
    found.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
        "and must start and end with an alphanumeric character (e.g. 'example.com')",
    );
  }
  return found;
}

const QUALIFIED_NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')";

/**
 * Why `name` is not a Kubernetes qualified name (label and annotation keys), or undefined
 * when it is one: an optional DNS-1123 subdomain prefix (<= 253) and '/', then a name part
 * of <= 63 characters.
 */
export function qualifiedNameProblem(name: string): string | undefined {
  const parts = name.split('/');
  const found: string[] = [];
  let namePart: string;
  if (parts.length === 1) {
    namePart = name;
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    namePart = parts[1] ?? '';
    if (prefix.length === 0) found.push('prefix part must be non-empty');
    else found.push(...dns1123SubdomainProblems(prefix).map((p) => `prefix part ${p}`));
  } else {
    return `a qualified name ${QUALIFIED_NAME_RULE}, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
  }
  if (namePart.length === 0) found.push('name part must be non-empty');
  else if (namePart.length > QUALIFIED_NAME_MAX) found.push(`name part must be no more than ${QUALIFIED_NAME_MAX} characters`);
  if (!qualifiedNameRe.test(namePart)) found.push(`name part ${QUALIFIED_NAME_RULE}`);
  return problems(found);
}

export function isQualifiedName(name: string): boolean {
  return qualifiedNameProblem(name) === undefined;
}

/**
 * Annotations whose key starts with `prefix`, keyed by the rest of the key:
 * `role.podlife.dev/` turns `role.podlife.dev/app: keystone` into `app -> {key, value}`.
 * The rest is returned as found (possibly empty); callers validate it and report `key`.
 */
export function annotationsWithPrefix(
  annotations: Record<string, string> | null | undefined,
  prefix: string,
): Map<string, { key: string; value: string }> {
  const found = new Map<string, { key: string; value: string }>();
  if (!annotations) return found;
  for (const [key, value] of Object.entries(annotations)) {
    if (key.startsWith(prefix)) found.set(key.slice(prefix.length), { key, value });
  }
  return found;
}

/** The value of `key` if it is one of `allowed`, `defaultValue` when absent; otherwise throws. */
export function parseEnumAnnotation<T extends string>(
  annotations: Record<string, string> | null | undefined,
  key: string,
  allowed: readonly T[],
  defaultValue: T,
): T {
  if (!annotations || !Object.hasOwn(annotations, key)) return defaultValue;
  const value = annotations[key];
  if (typeof value !== 'string') {
    throw new InvalidAnnotationError(key, undefined, `must be a string, one of ${quoteAll(allowed)}`);
  }
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new InvalidAnnotationError(key, value, `must be one of ${quoteAll(allowed)}`);
}

function quoteAll(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}
