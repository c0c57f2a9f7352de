/**
 * The keystone annotation contract (v1alpha1): roles, stop specs and pod-level options.
 *
 * Guarantees:
 * - a pod carrying none of the lifecycle keys is "not ours" and reading it allocates nothing;
 * - every problem becomes an `InvalidAnnotationError` naming the offending key — the first
 *   `REPORTED_PROBLEMS_MAX` are listed and the rest counted, nothing throws out of
 *   `readLifecycle` whatever the object holds (it may come straight from an AdmissionReview);
 * - work is linear in the number of annotations and containers, and messages are bounded:
 *   a hostile pod costs neither time nor memory out of proportion to its size;
 * - annotations never choose an image or a command line: `exec:<name>` only refers to a
 *   command the controller's configuration names, and http paths are limited to URL-safe
 *   characters, so no value can smuggle shell syntax or extra arguments;
 * - names of native sidecars (init containers with restartPolicy Always) are accepted in
 *   `sidecar` role and stop keys, so a pod converted at admission stays valid.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { InvalidAnnotationError, clipText, dns1123LabelProblem, parseEnumAnnotation } from '@podlife/core';

/** The annotation keys of the keystone contract (docs/annotations.md in the repository). */
export const Annotation = {
  RolePrefix: 'role.podlife.dev/',
  /** The KEP-2872 draft key: read, never written. */
  AliasPrefix: 'sidecars.alpha.kubernetes.io/',
  StopPrefix: 'stop.podlife.dev/',
  OnKeystoneExit: 'podlife.dev/on-keystone-exit',
  NativeSidecars: 'podlife.dev/native-sidecars',
  Completion: 'podlife.dev/completion',
  /**
   * Written by podlife's webhook only, one key per container it changed: what it made native
   * (`NativeRecord`), so that a later undo by another webhook can be told apart and reported.
   */
  NativePrefix: 'native.podlife.dev/',
} as const;

/**
 * What the webhook did to a container, as `native.podlife.dev/<container>` lists it
 * (comma-separated): made it a native sidecar, gave it its stop signal, gave it the
 * RestartAllContainers rule, or left a sidecar unconverted because its stop spec has no native form.
 */
export type NativeRecord = 'sidecar' | 'stop-signal' | 'restart-all-containers' | 'unconverted';
export const NATIVE_RECORDS: readonly NativeRecord[] = ['sidecar', 'stop-signal', 'restart-all-containers', 'unconverted'];

/** The records of `native.podlife.dev/<container>` (unknown entries are dropped: the key is only ever written by podlife). */
export function nativeRecords(annotations: Record<string, string> | null | undefined, container: string): NativeRecord[] {
  const value = annotations?.[Annotation.NativePrefix + container];
  if (typeof value !== 'string') return [];
  return value.split(',').map((s) => s.trim()).filter((s): s is NativeRecord => (NATIVE_RECORDS as readonly string[]).includes(s));
}

/**
 * The label that opts a pod into podlife's cache (ADR 0131): every helper that
 * writes lifecycle annotations, and the webhook, set it; a controller run with
 * `--managed-pods-only` lists and watches only pods that carry it.
 */
export const ManagedLabel = {
  key: 'podlife.dev/managed',
  value: 'true',
  selector: 'podlife.dev/managed=true',
} as const;

/** True when the pod carries `podlife.dev/managed: "true"`. */
export function hasManagedLabel(labels: Record<string, string> | null | undefined): boolean {
  return labels?.[ManagedLabel.key] === ManagedLabel.value;
}

/** The roles `role.podlife.dev/<container>` can give. */
export type ContainerRole = 'keystone' | 'sidecar';
export const CONTAINER_ROLES: readonly ContainerRole[] = ['keystone', 'sidecar'];

/**
 * `podlife.dev/on-keystone-exit`: what a keystone exit does. RestartPod restarts every container
 * in place where the nodes support it (a restart rule the webhook adds), else acts as TerminatePod.
 */
export type OnKeystoneExit = 'StopContainers' | 'TerminatePod' | 'RestartPod';
export const ON_KEYSTONE_EXIT: readonly OnKeystoneExit[] = ['StopContainers', 'TerminatePod', 'RestartPod'];
/** `podlife.dev/native-sidecars`: whether the webhook converts sidecars to native ones. */
export type NativeSidecarsMode = 'auto' | 'true' | 'false';
export const NATIVE_SIDECARS_MODES: readonly NativeSidecarsMode[] = ['auto', 'true', 'false'];
/** `podlife.dev/completion`: how a finished pod is ended. */
export type CompletionMode = 'containers' | 'phase';
export const COMPLETION_MODES: readonly CompletionMode[] = ['containers', 'phase'];

export const STOP_SIGNALS = ['TERM', 'INT', 'QUIT', 'HUP', 'USR1', 'USR2', 'KILL'] as const;
/** The signals `signal:<SIG>` accepts. */
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The stop presets `preset:<name>` names. */
export type PresetName = 'istio' | 'linkerd' | 'cloudsql-proxy' | 'envoy' | 'dapr';

/** Known quit endpoints, all POST on the pod's loopback. Sources and caveats: ADR 0050 (dapr: ADR 0270). */
export const STOP_PRESETS: Readonly<Record<PresetName, { readonly port: number; readonly path: string }>> = {
  istio: { port: 15020, path: '/quitquitquit' }, // pilot-agent status port
  linkerd: { port: 4191, path: '/shutdown' }, // proxy admin; needs config.linkerd.io/proxy-admin-shutdown: enabled
  'cloudsql-proxy': { port: 9091, path: '/quitquitquit' }, // v2 admin server; needs --quitquitquit
  envoy: { port: 9901, path: '/quitquitquit' }, // admin interface
  dapr: { port: 3500, path: '/v1.0/shutdown' }, // daprd's HTTP API; the same graceful path as SIGTERM
};

/** How a container is stopped: a signal to its PID 1, a POST on the loopback, or a named command. */
export type StopSpec =
  | { readonly kind: 'signal'; readonly signal: StopSignal }
  | { readonly kind: 'http'; readonly port: number; readonly path: string; readonly preset?: PresetName }
  | { readonly kind: 'exec'; readonly name: string };

export const DEFAULT_STOP: StopSpec = Object.freeze({ kind: 'signal', signal: 'TERM' });

/** Admin-only settings that validation depends on. */
export interface LifecycleOptions {
  /** How many keystones a pod may declare; default 1. */
  keystoneLimit?: number;
  /** Named commands for `exec:<name>`; when given, unknown names make the pod invalid. */
  execCommands?: Readonly<Record<string, readonly string[]>>;
}

/** One container as the contract reads it: its role and how it is stopped. */
export interface ContainerLifecycle {
  readonly name: string;
  /** 'main' for every container not marked sidecar (keystones are mains too). */
  readonly role: 'keystone' | 'sidecar' | 'main';
  readonly stop: StopSpec;
  /** Index in spec.containers. */
  readonly index: number;
}

/** The lifecycle of a valid pod: its containers, keystones and pod-level options. */
export interface PodLifecycle {
  /** spec.containers in spec order. */
  readonly containers: readonly ContainerLifecycle[];
  /** The keystones, in spec order (at most the keystone limit); any one finishing fires rule K. */
  readonly keystones: readonly ContainerLifecycle[];
  /** Annotated sidecars that are native (init containers with restartPolicy Always): left to the kubelet. */
  readonly nativeSidecars: readonly string[];
  readonly onKeystoneExit: OnKeystoneExit;
  readonly completion: CompletionMode;
  readonly nativeSidecarsMode: NativeSidecarsMode;
}

/** A pod's lifecycle annotations read: not ours, invalid (with problems), or valid. */
export type LifecycleReading =
  | { readonly kind: 'not-ours' }
  | {
      readonly kind: 'invalid';
      /** The first problems found (at most REPORTED_PROBLEMS_MAX). */
      readonly errors: readonly InvalidAnnotationError[];
      /** Problems found beyond those listed. */
      readonly omitted: number;
    }
  | { readonly kind: 'valid'; readonly lifecycle: PodLifecycle };

const NOT_OURS: LifecycleReading = Object.freeze({ kind: 'not-ours' });

/** True when any key of the keystone contract is present (the webhook-only key does not count). */
export function hasLifecycleAnnotations(annotations: Record<string, string> | null | undefined): boolean {
  if (!annotations) return false;
  for (const key in annotations) {
    if (isLifecycleKey(key)) return true;
  }
  return false;
}

/**
 * `key.startsWith(prefix)`, the same answer several times cheaper in V8, which does not inline
 * `startsWith` (every annotation key of every pod comes here). Linear in the key's length.
 */
function hasPrefix(key: string, prefix: string): boolean {
  return key.indexOf(prefix) === 0;
}

function isLifecycleKey(key: string): boolean {
  // Cheap first-character gate: the hot path sees many foreign annotations.
  const c = key.charCodeAt(0);
  if (c === 114 /* r */) return hasPrefix(key, Annotation.RolePrefix);
  if (c === 115 /* s */) return hasPrefix(key, Annotation.StopPrefix) || hasPrefix(key, Annotation.AliasPrefix);
  if (c === 112 /* p */) return key === Annotation.OnKeystoneExit || key === Annotation.Completion;
  return false;
}

/** The specs `signal:` and `preset:` name, built once and shared: a StopSpec is never modified. */
const SIGNAL_SPECS: ReadonlyMap<string, StopSpec> = new Map(STOP_SIGNALS.map((signal) => [signal, Object.freeze({ kind: 'signal', signal })]));
const PRESET_SPECS: ReadonlyMap<string, StopSpec> = new Map(
  (Object.keys(STOP_PRESETS) as PresetName[]).map((preset) => [preset, Object.freeze({ kind: 'http', ...STOP_PRESETS[preset], preset })]),
);

/** Every `signal:` and `preset:` spec by its whole value: the common stop specs, looked up without being taken apart. */
const NAMED_SPECS: ReadonlyMap<string, StopSpec> = new Map([
  ...[...SIGNAL_SPECS].map(([signal, spec]) => [`signal:${signal}`, spec] as const),
  ...[...PRESET_SPECS].map(([preset, spec]) => [`preset:${preset}`, spec] as const),
]);

/** Parse a stop spec (`signal:TERM`, `preset:istio`, `http:8080/quit`, `exec:drain`); throws naming `key`. */
export function parseStopSpec(value: string, key: string, options: LifecycleOptions = {}): StopSpec {
  const named = NAMED_SPECS.get(value);
  if (named) return named;
  const colon = value.indexOf(':');
  const kind = colon < 0 ? value : value.slice(0, colon);
  const arg = colon < 0 ? '' : value.slice(colon + 1);
  switch (kind) {
    case 'signal': {
      const spec = SIGNAL_SPECS.get(arg);
      if (spec) return spec;
      throw new InvalidAnnotationError(key, value, `signal must be one of ${STOP_SIGNALS.join(', ')} (e.g. "signal:TERM")`);
    }
    case 'preset': {
      const spec = PRESET_SPECS.get(arg);
      if (spec) return spec;
      throw new InvalidAnnotationError(key, value, `preset must be one of ${Object.keys(STOP_PRESETS).join(', ')}`);
    }
    case 'http': {
      const slash = arg.indexOf('/');
      const portText = slash < 0 ? arg : arg.slice(0, slash);
      const path = slash < 0 ? '/' : arg.slice(slash);
      const port = Number(portText);
      if (portText.length === 0 || portText.length > 5 || !isDigits(portText) || port < 1 || port > 65535) {
        throw new InvalidAnnotationError(key, value, 'http stop spec is http:<port><path> with a port 1-65535 (e.g. "http:15020/quitquitquit")');
      }
      if (!isSafePath(path)) {
        throw new InvalidAnnotationError(key, value, "http path may only contain letters, digits and - . _ ~ / % ? = & + , : @ (at most 256 characters)");
      }
      return { kind: 'http', port, path };
    }
    case 'exec': {
      if (dns1123LabelProblem(arg) !== undefined) {
        throw new InvalidAnnotationError(key, value, 'exec stop spec is exec:<name>, a command named in the controller configuration (lowercase letters, digits, "-")');
      }
      if (options.execCommands && !Object.hasOwn(options.execCommands, arg)) {
        const known = Object.keys(options.execCommands);
        throw new InvalidAnnotationError(key, value, `no command "${arg}" in the controller configuration${known.length ? ` (configured: ${known.join(', ')})` : ' (none configured)'}`);
      }
      return { kind: 'exec', name: arg };
    }
    default:
      throw new InvalidAnnotationError(key, value, 'stop spec must be signal:<SIG>, preset:<name>, http:<port><path> or exec:<name>');
  }
}

/** The annotation value for a stop spec (inverse of parseStopSpec). */
export function formatStopSpec(spec: StopSpec): string {
  switch (spec.kind) {
    case 'signal':
      return `signal:${spec.signal}`;
    case 'http':
      return spec.preset ? `preset:${spec.preset}` : `http:${spec.port}${spec.path}`;
    case 'exec':
      return `exec:${spec.name}`;
  }
}

function isDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

const PATH_PUNCT = new Set('-._~/%?=&+,:@');
function isSafePath(path: string): boolean {
  if (path.length === 0 || path.length > 256 || path.charCodeAt(0) !== 47) return false;
  for (const ch of path) {
    const c = ch.charCodeAt(0);
    const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (!alnum && !PATH_PUNCT.has(ch)) return false;
  }
  return true;
}

function isNativeSidecar(c: V1Container): boolean {
  return c.restartPolicy === 'Always';
}

/** At most this many problems are listed; the rest are counted (`omitted`). */
export const REPORTED_PROBLEMS_MAX = 10;
/** Container names quoted in one message (`have: a, b, c and 12 more`). */
const NAMES_SHOWN = 5;
/** Characters of the names quoted in one message, separators included; the first name (clipped) is shown whatever its length. */
const NAMES_CHARS = 100;
/** Below this many containers a scan beats building an index. */
const SCAN_MAX = 8;

/** Collects problems: the first few as errors, the rest only counted. */
class Problems {
  readonly errors: InvalidAnnotationError[] = [];
  omitted = 0;
  get count(): number {
    return this.errors.length + this.omitted;
  }
  add(key: string, value: string | undefined, reason: () => string): void {
    if (this.errors.length < REPORTED_PROBLEMS_MAX) this.errors.push(new InvalidAnnotationError(key, value, reason()));
    else this.omitted++;
  }
  push(error: InvalidAnnotationError): void {
    if (this.errors.length < REPORTED_PROBLEMS_MAX) this.errors.push(error);
    else this.omitted++;
  }
  /** An enumerated pod-level option (core's `parseEnumAnnotation`); `fallback` when it is bad, the problem recorded. */
  option<T extends string>(annotations: Record<string, string>, key: string, allowed: readonly T[], fallback: T): T {
    try {
      return parseEnumAnnotation(annotations, key, allowed, fallback);
    } catch (err) {
      this.push(err instanceof InvalidAnnotationError ? err : new InvalidAnnotationError(key, undefined, String(err)));
      return fallback;
    }
  }
}

/** A container's name as the API server would have it; anything malformed names nothing. */
function nameOf(c: unknown): string {
  const name = typeof c === 'object' && c !== null ? (c as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : '';
}

/** The names of a container list as the API server would have them. */
function namesOf(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  const out = new Array<string>(list.length);
  for (let i = 0; i < list.length; i++) out[i] = nameOf(list[i]);
  return out;
}

const NO_NAMES: ReadonlySet<string> = new Set();

function nativeNamesOf(list: unknown): ReadonlySet<string> {
  if (!Array.isArray(list) || list.length === 0) return NO_NAMES;
  const out = new Set<string>();
  for (const c of list as unknown[]) {
    if (typeof c === 'object' && c !== null && isNativeSidecar(c as V1Container) && typeof (c as V1Container).name === 'string') out.add((c as V1Container).name);
  }
  return out;
}

/**
 * Up to NAMES_SHOWN names, each clipped, and no more of them than fit in NAMES_CHARS after the
 * first: with the clipped key, value and name around it, the message stays under 600 characters.
 */
function describeNames(names: readonly string[]): string {
  if (names.length === 0) return 'none';
  let shown = clipText(names[0] as string, 63);
  let count = 1;
  for (; count < Math.min(names.length, NAMES_SHOWN); count++) {
    const next = clipText(names[count] as string, 63);
    if (shown.length + 2 + next.length > NAMES_CHARS) break;
    shown += `, ${next}`;
  }
  return count < names.length ? `${shown} and ${names.length - count} more` : shown;
}

/** The parts of a pod spec the contract reads, whatever the object holds. */
interface SpecView {
  readonly containers?: unknown;
  readonly initContainers?: unknown;
  readonly shareProcessNamespace?: unknown;
  readonly hostPID?: unknown;
}

/** The pod's annotations when they are a mapping (an AdmissionReview may hold anything). */
function annotationsOf(pod: V1Pod): Record<string, unknown> | undefined {
  const annotations = (pod as { metadata?: { annotations?: unknown } } | null | undefined)?.metadata?.annotations;
  if (typeof annotations !== 'object' || annotations === null || Array.isArray(annotations)) return undefined;
  return annotations as Record<string, unknown>;
}

function specOf(pod: V1Pod): SpecView {
  const spec = (pod as { spec?: unknown }).spec;
  return typeof spec === 'object' && spec !== null ? (spec as SpecView) : {};
}

/** Which prefix of the per-container keys `key` carries, if any (the same first-character gate as isLifecycleKey). */
function containerKeyPrefix(key: string): string | undefined {
  const c = key.charCodeAt(0);
  if (c === 114 /* r */) return hasPrefix(key, Annotation.RolePrefix) ? Annotation.RolePrefix : undefined;
  if (c !== 115 /* s */) return undefined;
  if (hasPrefix(key, Annotation.StopPrefix)) return Annotation.StopPrefix;
  if (hasPrefix(key, Annotation.AliasPrefix)) return Annotation.AliasPrefix;
  return undefined;
}

/** A per-container key names a native sidecar (an init container with restartPolicy Always). */
const NATIVE = -1;

/** A container as the keys read so far describe it; a valid reading hands it out as its ContainerLifecycle. */
interface ContainerDraft {
  readonly name: string;
  role: ContainerLifecycle['role'];
  /** DEFAULT_STOP until a stop key sets one: parseStopSpec never answers DEFAULT_STOP itself. */
  stop: StopSpec;
  readonly index: number;
}

/** spec.containers as drafts: every one a main container stopped by the default, until a key says otherwise. */
function draftsOf(list: unknown): ContainerDraft[] {
  if (!Array.isArray(list)) return [];
  const out = new Array<ContainerDraft>(list.length);
  for (let i = 0; i < list.length; i++) out[i] = { name: nameOf(list[i]), role: 'main', stop: DEFAULT_STOP, index: i };
  return out;
}

/**
 * What the per-container keys say, as one draft per container of spec.containers (native
 * sidecars apart), and the lookup of the container a key names.
 */
class ContainerKeys {
  readonly containers: ContainerDraft[];
  /** Created with the first one: most pods have none. */
  nativeSidecars: Set<string> | undefined;
  /** A pod-level key (`podlife.dev/on-keystone-exit`, ...) is among the pod's own keys. */
  podLevelKeys = false;
  /**
   * False only when no key is a record of podlife's webhook (`native.podlife.dev/<container>`);
   * an inherited key sets it too, for the NativeMechanisms check reads those as well.
   */
  mayHoldNativeRecords = false;
  /**
   * The alias keys (`sidecars.alpha.kubernetes.io/<name>`) that set a role, by container index,
   * for messages; any other role was set by `role.podlife.dev/<name>`. Created with the first.
   */
  private aliasRoleKeys: Map<number, string> | undefined;
  /** Name -> first index, built once for long lists only: below SCAN_MAX a scan is cheaper. */
  private byName: Map<string, number> | undefined;
  private readonly nativeNames: ReadonlySet<string>;
  private readonly initContainers: unknown;
  private initIndex: Set<string> | undefined;

  constructor(spec: SpecView) {
    this.containers = draftsOf(spec.containers);
    this.initContainers = spec.initContainers;
    this.nativeNames = nativeNamesOf(spec.initContainers);
  }

  /** The index in spec.containers of the container `name`, NATIVE, or undefined with the problem recorded. */
  find(key: string, value: string, name: string, problems: Problems): number | undefined {
    if (name.length === 0) {
      problems.add(key, value, () => 'names no container: the key must end with a container name');
      return undefined;
    }
    const i = this.indexOf(name);
    if (i >= 0) return i;
    if (this.nativeNames.has(name)) return NATIVE;
    this.initIndex ??= new Set(namesOf(this.initContainers));
    const isInit = this.initIndex.has(name);
    problems.add(key, value, () =>
      isInit
        ? `"${clipText(name, 63)}" is an init container; only spec.containers (and native sidecars) take part in the keystone lifecycle`
        : `no container "${clipText(name, 63)}" in spec.containers (have: ${describeNames(this.containers.map((c) => c.name))})`,
    );
    return undefined;
  }

  private indexOf(name: string): number {
    const containers = this.containers;
    if (containers.length <= SCAN_MAX) {
      for (let i = 0; i < containers.length; i++) if ((containers[i] as ContainerDraft).name === name) return i;
      return -1;
    }
    if (!this.byName) {
      this.byName = new Map();
      for (let i = containers.length - 1; i >= 0; i--) this.byName.set((containers[i] as ContainerDraft).name, i);
    }
    return this.byName.get(name) ?? -1;
  }

  readStop(key: string, value: string, i: number, options: LifecycleOptions, problems: Problems): void {
    try {
      const stop = parseStopSpec(value, key, options);
      if (i !== NATIVE) (this.containers[i] as ContainerDraft).stop = stop;
    } catch (err) {
      problems.push(err instanceof InvalidAnnotationError ? err : new InvalidAnnotationError(key, value, 'malformed stop spec'));
    }
  }

  readRole(key: string, prefix: string, value: string, name: string, i: number, problems: Problems): void {
    if (value !== 'keystone' && value !== 'sidecar') {
      problems.add(key, value, () => 'role must be "keystone" or "sidecar"');
    } else if (i === NATIVE) {
      if (value === 'sidecar') (this.nativeSidecars ??= new Set()).add(name);
      else problems.add(key, value, () => `"${clipText(name, 63)}" is a native sidecar (an init container with restartPolicy Always) and cannot be the keystone`);
    } else {
      const c = this.containers[i] as ContainerDraft;
      const previous = c.role;
      if (previous === value) return;
      if (previous !== 'main') {
        problems.add(key, value, () => `conflicts with "${clipText(this.roleKey(i) ?? '', 128)}" = "${previous}": a container has one role`);
        return;
      }
      c.role = value;
      if (prefix === Annotation.AliasPrefix) (this.aliasRoleKeys ??= new Map()).set(i, key);
    }
  }

  /** The key that set the role of container `i`, if one did. */
  roleKey(i: number): string | undefined {
    const c = this.containers[i];
    if (c === undefined || c.role === 'main') return undefined;
    return this.aliasRoleKeys?.get(i) ?? Annotation.RolePrefix + c.name;
  }
}

/**
 * In a for-in loop V8 answers `hasOwnProperty.call(object, key)` from the loop's own key cache;
 * `Object.hasOwn`, the same test, it calls every time (about twice the cost of the whole loop).
 */
const hasOwnProperty = Object.prototype.hasOwnProperty;

/**
 * Step 1: every role and stop key, checked against the containers it names; and whether any
 * pod-level key is among them (most pods set none: step 2 is then not needed).
 */
function readContainerKeys(annotations: Record<string, unknown>, spec: SpecView, options: LifecycleOptions, problems: Problems): ContainerKeys {
  const keys = new ContainerKeys(spec);
  for (const key in annotations) {
    if (!hasOwnProperty.call(annotations, key)) {
      keys.mayHoldNativeRecords = true;
      continue;
    }
    const prefix = containerKeyPrefix(key);
    if (prefix === undefined) {
      if (isPodLevelKey(key)) keys.podLevelKeys = true;
      else if (isNativeRecordKey(key)) keys.mayHoldNativeRecords = true;
      continue;
    }
    const value = annotations[key];
    if (typeof value !== 'string') {
      problems.add(key, undefined, () => `the value must be a string, not ${value === null ? 'null' : typeof value}`);
      continue;
    }
    const name = key.slice(prefix.length);
    const i = keys.find(key, value, name, problems);
    if (i === undefined) continue;
    if (prefix === Annotation.StopPrefix) keys.readStop(key, value, i, options, problems);
    else keys.readRole(key, prefix, value, name, i, problems);
  }
  return keys;
}

type PodOptions = Pick<PodLifecycle, 'onKeystoneExit' | 'completion' | 'nativeSidecarsMode'>;

const DEFAULT_POD_OPTIONS: PodOptions = Object.freeze({ onKeystoneExit: 'StopContainers', completion: 'containers', nativeSidecarsMode: 'auto' });

function isNativeRecordKey(key: string): boolean {
  return key.charCodeAt(0) === 110 /* n */ && hasPrefix(key, Annotation.NativePrefix);
}

function isPodLevelKey(key: string): boolean {
  return key.charCodeAt(0) === 112 /* p */ && (key === Annotation.OnKeystoneExit || key === Annotation.Completion || key === Annotation.NativeSidecars);
}

/** Step 2: the pod-level options. */
function readPodOptions(annotations: Record<string, unknown>, problems: Problems): PodOptions {
  const map = annotations as Record<string, string>;
  return {
    onKeystoneExit: problems.option(map, Annotation.OnKeystoneExit, ON_KEYSTONE_EXIT, DEFAULT_POD_OPTIONS.onKeystoneExit),
    completion: problems.option(map, Annotation.Completion, COMPLETION_MODES, DEFAULT_POD_OPTIONS.completion),
    nativeSidecarsMode: problems.option(map, Annotation.NativeSidecars, NATIVE_SIDECARS_MODES, DEFAULT_POD_OPTIONS.nativeSidecarsMode),
  };
}

/** Step 3: at most `limit` keystones and at least one main container; answers how many keystones. */
function checkRoles(keys: ContainerKeys, limit: number, problems: Problems): number {
  let keystones = 0;
  let mains = 0;
  for (const c of keys.containers) {
    if (c.role === 'keystone') {
      keystones++;
      if (keystones > limit) {
        problems.add(keys.roleKey(c.index) ?? '', 'keystone', () => `more keystones than allowed: at most ${limit} per pod (the controller's keystone limit)`);
      }
    }
    if (c.role !== 'sidecar') mains++;
  }
  if (keys.containers.length > 0 && mains === 0) {
    // Every container is a sidecar: the first one's key set a role.
    const firstKey = keys.roleKey(0) ?? Annotation.RolePrefix;
    problems.add(firstKey, 'sidecar', () => 'every container is marked sidecar: a pod needs at least one main container');
  }
  return keystones;
}

/** Why PID 1, as a container sees it, is not the container's own process; undefined when it is. */
type ForeignPid1 = 'hostPID' | 'shareProcessNamespace';

/**
 * `hostPID` first: it puts every container in the node's PID namespace whatever
 * `shareProcessNamespace` says (the API server refuses the two together, but a pod read here may
 * come from anywhere).
 */
function foreignPid1(spec: SpecView): ForeignPid1 | undefined {
  if (spec.hostPID === true) return 'hostPID';
  if (spec.shareProcessNamespace === true) return 'shareProcessNamespace';
  return undefined;
}

const FOREIGN_PID1_REASONS: Readonly<Record<ForeignPid1, string>> = {
  hostPID: "with hostPID, PID 1 is the node's own init (e.g. systemd), so signal stops are refused: use preset:, http: or exec: for this container",
  shareProcessNamespace: "with shareProcessNamespace, PID 1 is the pod's pause process, so signal stops are refused: use preset:, http: or exec: for this container",
};

/**
 * Step 4, when PID 1 is not the container's own process: with a shared PID namespace it is the
 * pod's pause process, and a signal sent "to PID 1" would take down the sandbox; with hostPID it
 * is the node's init, which a signal reboots or re-executes. Every container a rule may stop
 * needs a stop that is not a signal.
 */
function checkForeignPid1Stops(keys: ContainerKeys, hasKeystone: boolean, why: ForeignPid1, problems: Problems): void {
  for (const c of keys.containers) {
    const stoppable = hasKeystone ? c.role !== 'keystone' : c.role === 'sidecar';
    if (stoppable && c.stop.kind === 'signal') {
      problems.add(Annotation.StopPrefix + c.name, c.stop === DEFAULT_STOP ? undefined : formatStopSpec(c.stop), () => FOREIGN_PID1_REASONS[why]);
    }
  }
}

const NO_NATIVE_SIDECARS: readonly string[] = Object.freeze([]);

/** Step 5: the reading of a pod found valid. */
function lifecycleOf(keys: ContainerKeys, options: PodOptions): PodLifecycle {
  const keystones: ContainerLifecycle[] = [];
  for (const c of keys.containers) if (c.role === 'keystone') keystones.push(c);
  return {
    containers: keys.containers,
    keystones,
    nativeSidecars: keys.nativeSidecars === undefined ? NO_NATIVE_SIDECARS : [...keys.nativeSidecars],
    onKeystoneExit: options.onKeystoneExit,
    completion: options.completion,
    nativeSidecarsMode: options.nativeSidecarsMode,
  };
}

/**
 * Read and validate a pod's lifecycle annotations against its spec. Never throws, whatever the
 * object holds. Work is linear in the number of annotations and containers; an invalid reading
 * lists at most `REPORTED_PROBLEMS_MAX` problems, each with a bounded message, and counts the rest.
 */
export function readLifecycle(pod: V1Pod, options: LifecycleOptions = {}): LifecycleReading {
  return readLifecycleNoting(pod, options, undefined);
}

/** What the walk of readLifecycle saw besides the contract's keys. */
export interface KeysSeen {
  /** False only when the pod's annotations hold no record of podlife's webhook (set only for a pod that is ours). */
  mayHoldNativeRecords: boolean;
}

/**
 * readLifecycle, also saying in `seen` whether the pod may hold a record of podlife's webhook: the
 * walk that reads the contract's keys notes it, so evaluatePod skips its NativeMechanisms check on
 * nearly every pod without a walk of its own (ADR 0256).
 */
export function readLifecycleNoting(pod: V1Pod, options: LifecycleOptions, seen: KeysSeen | undefined): LifecycleReading {
  const annotations = annotationsOf(pod);
  if (!annotations || !hasLifecycleAnnotations(annotations as Record<string, string>)) return NOT_OURS;
  const spec = specOf(pod);
  const problems = new Problems();
  const keys = readContainerKeys(annotations, spec, options, problems);
  if (seen !== undefined) seen.mayHoldNativeRecords = keys.mayHoldNativeRecords;
  const podOptions = keys.podLevelKeys ? readPodOptions(annotations, problems) : DEFAULT_POD_OPTIONS;
  const keystones = checkRoles(keys, options.keystoneLimit ?? 1, problems);
  const foreign = foreignPid1(spec);
  if (foreign !== undefined) checkForeignPid1Stops(keys, keystones > 0, foreign, problems);
  if (problems.count > 0) return { kind: 'invalid', errors: problems.errors, omitted: problems.omitted };
  return { kind: 'valid', lifecycle: lifecycleOf(keys, podOptions) };
}
