/**
 * The LifecyclePolicy object (ADR 0268): its spec, the checks the CRD cannot make,
 * and the compiled form the webhook matches pods against.
 *
 * Guarantees:
 * - `compilePolicy` never throws: a spec it cannot use comes back as problems, each naming the
 *   field (`spec.containers[1].stop`) and what would be accepted, and such a policy is ignored;
 * - a compiled policy only names containers and stop specs of the annotation contract
 *   (`parseStopSpec`, presets, configured `exec:` names): never an image to run or a command;
 * - a namespace selector that selects every namespace, or any of the cluster's own
 *   (kube-system, kube-node-lease, kube-public), is refused;
 * - image globs are bounded (at most 255 characters of [a-z0-9._/:@-] and `*`), and matching one
 *   is linear in the image's length (no backtracking blow-up).
 */
import type { V1LabelSelector } from '@kubernetes/client-node';
import { InvalidAnnotationError, dns1123LabelProblem } from '@podlife/core';
import { COMPLETION_MODES, NATIVE_SIDECARS_MODES, ON_KEYSTONE_EXIT, parseStopSpec, type CompletionMode, type ContainerRole, type LifecycleOptions, type NativeSidecarsMode, type OnKeystoneExit } from '../annotations.js';
import { POLICY_FORBIDDEN_NAMESPACES } from './names.js';
import { SIDECAR_PRESETS, SIDECAR_PRESET_NAMES, WELL_KNOWN, expandPresets } from './presets.js';

/** One container match of a policy: by container name or by image repository glob. */
export interface ContainerMatchSpec {
  /** The match's own name, for records and `podlife explain` (a DNS label). */
  name: string;
  /** Matches the container of this name. */
  containerName?: string;
  /** Matches containers whose image repository (no tag, no digest) fits this glob. */
  imageRepository?: string;
  role: ContainerRole;
  /** Stop spec as `stop.podlife.dev/<container>` takes it; default signal:TERM. */
  stop?: string;
  /** May the webhook make this sidecar native; default true. */
  nativeConversion?: boolean;
}

/** `spec` of a LifecyclePolicy. */
export interface LifecyclePolicySpec {
  namespaceSelector: V1LabelSelector;
  podSelector?: V1LabelSelector;
  /** Only pods whose controlling owner is of one of these kinds (e.g. Job). */
  ownerKinds?: string[];
  /** Sidecar presets by name; `well-known` names every one. */
  presets?: string[];
  containers?: ContainerMatchSpec[];
  completion?: CompletionMode;
  onKeystoneExit?: OnKeystoneExit;
  /** Let the webhook make sidecars native (`podlife.dev/native-sidecars`). */
  nativeSidecars?: NativeSidecarsMode;
  /** The policy's keys replace the pod's own annotations instead of giving way to them. */
  enforce?: boolean;
}

/** A LifecyclePolicy object as the API server serves it (podlife.dev/v1alpha1, cluster-scoped). */
export interface LifecyclePolicy {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; uid?: string; generation?: number; resourceVersion?: string };
  spec?: LifecyclePolicySpec;
  status?: Record<string, unknown>;
}

/** A problem with a policy: the field and why. */
export interface PolicyProblem {
  readonly field: string;
  readonly message: string;
}

/** A container match ready to test containers against. */
export interface CompiledMatch {
  readonly name: string;
  readonly names: readonly string[];
  readonly images: readonly string[];
  readonly role: ContainerRole;
  /** The stop spec's annotation value. */
  readonly stop: string;
  readonly nativeConversion: boolean;
  readonly needs?: string;
}

/** A policy ready to apply. */
export interface CompiledPolicy {
  readonly name: string;
  readonly namespaceSelector: V1LabelSelector;
  readonly podSelector?: V1LabelSelector;
  readonly ownerKinds?: readonly string[];
  readonly matches: readonly CompiledMatch[];
  readonly completion?: CompletionMode;
  readonly onKeystoneExit?: OnKeystoneExit;
  readonly nativeSidecars?: NativeSidecarsMode;
  readonly enforce: boolean;
}

/** A compiled policy, or every problem found in it, each naming its field. */
export type PolicyCompilation = { readonly ok: true; readonly policy: CompiledPolicy } | { readonly ok: false; readonly problems: readonly PolicyProblem[] };

export const IMAGE_GLOB_MAX = 255;
const GLOB_CHARS = /^[a-z0-9._/:@*-]+$/;

/** Why `glob` is not an image repository glob, or undefined. */
export function imageGlobProblem(glob: unknown): string | undefined {
  if (typeof glob !== 'string' || glob.length === 0) return 'must be a non-empty image repository glob (e.g. "*/proxyv2")';
  if (glob.length > IMAGE_GLOB_MAX) return `must be at most ${IMAGE_GLOB_MAX} characters`;
  if (!GLOB_CHARS.test(glob)) return 'may only contain lowercase letters, digits, ".", "_", "/", ":", "@", "-" and "*"';
  if (glob.replaceAll('*', '').length === 0) return 'must name something besides "*": a glob that matches every image would make every container a sidecar';
  return undefined;
}

/** The repository of an image reference: without its digest and its tag. */
export function imageRepository(image: string): string {
  const at = image.indexOf('@');
  const named = at < 0 ? image : image.slice(0, at);
  const colon = named.lastIndexOf(':');
  return colon > named.lastIndexOf('/') ? named.slice(0, colon) : named;
}

/**
 * True when `text` fits `glob` (`*` any run of characters, possibly empty). Greedy with one
 * backtrack point, so the work is linear in the text for each star.
 */
export function globMatches(glob: string, text: string): boolean {
  let g = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (g < glob.length && glob[g] !== '*' && glob[g] === text[t]) {
      g++;
      t++;
    } else if (g < glob.length && glob[g] === '*') {
      star = g++;
      mark = t;
    } else if (star >= 0) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.length && glob[g] === '*') g++;
  return g === glob.length;
}

/** Why a namespace selector is refused (it selects every namespace, or one of the cluster's own), or undefined. */
export function namespaceSelectorProblem(selector: unknown): string | undefined {
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) return 'is required: a label selector naming the namespaces the policy covers';
  const s = selector as V1LabelSelector;
  const labels = s.matchLabels ?? {};
  const exprs = s.matchExpressions ?? [];
  const positive = Object.keys(labels).length > 0 || exprs.some((e) => e.operator === 'In' || (e.operator === 'Exists' && e.key !== NAME_LABEL));
  if (!positive) return 'must require a label (matchLabels, In, or Exists on a label other than kubernetes.io/metadata.name): this one selects every namespace, kube-system included';
  const named = [labels[NAME_LABEL], ...exprs.filter((e) => e.key === NAME_LABEL && e.operator === 'In').flatMap((e) => e.values ?? [])];
  const forbidden = named.find((n) => n !== undefined && POLICY_FORBIDDEN_NAMESPACES.includes(n));
  if (forbidden) return `must not select ${forbidden}: a policy never covers the cluster's own namespaces (${POLICY_FORBIDDEN_NAMESPACES.join(', ')})`;
  return undefined;
}

const NAME_LABEL = 'kubernetes.io/metadata.name';

/** Limits the CRD also enforces, so a policy from anywhere stays small. */
export const POLICY_LIMITS = { containers: 32, ownerKinds: 8, presets: SIDECAR_PRESET_NAMES.length + 1 } as const;

function enumProblem<T extends string>(value: unknown, allowed: readonly T[]): string | undefined {
  return value === undefined || (allowed as readonly unknown[]).includes(value) ? undefined : `must be one of ${allowed.join(', ')}`;
}

/** Checks a user's container match; answers it compiled, or records its problems. */
function compileMatch(m: ContainerMatchSpec, field: string, options: LifecycleOptions, problems: PolicyProblem[]): CompiledMatch | undefined {
  const before = problems.length;
  const add = (f: string, message: string) => void problems.push({ field: `${field}${f}`, message });
  if (typeof m !== 'object' || m === null) {
    add('', 'must be an object');
    return undefined;
  }
  const raw = m as unknown as Record<string, unknown>;
  for (const forbidden of ['image', 'command', 'args']) {
    if (raw[forbidden] !== undefined) add(`.${forbidden}`, `a policy never chooses ${forbidden === 'image' ? 'an image' : 'a command'}: match by imageRepository, stop with a preset or a configured exec: name`);
  }
  const nameProblem = typeof m.name === 'string' ? dns1123LabelProblem(m.name) : 'is required';
  if (nameProblem) add('.name', `${nameProblem} (the match's own name, a DNS label)`);
  const byName = m.containerName !== undefined;
  const byImage = m.imageRepository !== undefined;
  if (byName === byImage) add('', 'give exactly one of containerName and imageRepository');
  if (byName && (typeof m.containerName !== 'string' || dns1123LabelProblem(m.containerName) !== undefined)) add('.containerName', 'must be a container name (a DNS label)');
  const glob = byImage ? imageGlobProblem(m.imageRepository) : undefined;
  if (glob) add('.imageRepository', glob);
  if (m.role !== 'sidecar' && m.role !== 'keystone') add('.role', 'must be sidecar or keystone');
  const stop = m.stop ?? 'signal:TERM';
  try {
    parseStopSpec(String(stop), `${field}.stop`, options);
  } catch (err) {
    add('.stop', err instanceof InvalidAnnotationError ? err.reason : String(err));
  }
  if (m.nativeConversion !== undefined && typeof m.nativeConversion !== 'boolean') add('.nativeConversion', 'must be true or false');
  if (problems.length > before) return undefined;
  return {
    name: m.name,
    names: byName ? [m.containerName as string] : [],
    images: byImage ? [m.imageRepository as string] : [],
    role: m.role,
    stop: String(stop),
    nativeConversion: m.nativeConversion !== false,
  };
}

/**
 * Check a policy the way the CRD does and beyond (configured exec names, the namespaces a
 * selector names), and compile it. `options.execCommands` are the controller's named commands.
 */
export function compilePolicy(policy: LifecyclePolicy, options: LifecycleOptions = {}): PolicyCompilation {
  const problems: PolicyProblem[] = [];
  const add = (field: string, message: string) => void problems.push({ field, message });
  const name = policy?.metadata?.name;
  if (typeof name !== 'string' || name.length === 0) add('metadata.name', 'is required');
  const spec = policy?.spec;
  if (typeof spec !== 'object' || spec === null) return { ok: false, problems: [...problems, { field: 'spec', message: 'is required' }] };
  const ns = namespaceSelectorProblem(spec.namespaceSelector);
  if (ns) add('spec.namespaceSelector', ns);
  if (spec.podSelector !== undefined && (typeof spec.podSelector !== 'object' || spec.podSelector === null)) add('spec.podSelector', 'must be a label selector');
  if (spec.ownerKinds !== undefined && (!Array.isArray(spec.ownerKinds) || spec.ownerKinds.length > POLICY_LIMITS.ownerKinds || spec.ownerKinds.some((k) => typeof k !== 'string' || !/^[A-Z][A-Za-z0-9]{0,62}$/.test(k)))) {
    add('spec.ownerKinds', `must be at most ${POLICY_LIMITS.ownerKinds} kinds (e.g. Job)`);
  }
  const presets = spec.presets ?? [];
  if (!Array.isArray(presets)) add('spec.presets', 'must be a list');
  else presets.forEach((p, i) => {
    if (p !== WELL_KNOWN && !(SIDECAR_PRESET_NAMES as readonly string[]).includes(p)) add(`spec.presets[${i}]`, `unknown preset "${String(p).slice(0, 63)}": one of ${WELL_KNOWN}, ${SIDECAR_PRESET_NAMES.join(', ')}`);
  });
  const containers = spec.containers ?? [];
  const matches: CompiledMatch[] = [];
  if (!Array.isArray(containers) || containers.length > POLICY_LIMITS.containers) add('spec.containers', `must be a list of at most ${POLICY_LIMITS.containers} matches`);
  else containers.forEach((m, i) => {
    const compiled = compileMatch(m, `spec.containers[${i}]`, options, problems);
    if (compiled) matches.push(compiled);
  });
  if (Array.isArray(presets)) {
    for (const p of expandPresets(presets)) {
      const preset = SIDECAR_PRESETS[p];
      matches.push({ name: p, names: preset.names, images: preset.images, role: 'sidecar', stop: preset.stop, nativeConversion: true, ...(preset.needs ? { needs: preset.needs } : {}) });
    }
  }
  if (problems.length === 0 && matches.length === 0) add('spec', 'names no container: give presets or containers');
  for (const [field, allowed] of [['completion', COMPLETION_MODES], ['onKeystoneExit', ON_KEYSTONE_EXIT], ['nativeSidecars', NATIVE_SIDECARS_MODES]] as const) {
    const p = enumProblem((spec as unknown as Record<string, unknown>)[field], allowed);
    if (p) add(`spec.${field}`, p);
  }
  if (spec.enforce !== undefined && typeof spec.enforce !== 'boolean') add('spec.enforce', 'must be true or false');
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    policy: {
      name: name as string,
      namespaceSelector: spec.namespaceSelector,
      ...(spec.podSelector ? { podSelector: spec.podSelector } : {}),
      ...(spec.ownerKinds && spec.ownerKinds.length > 0 ? { ownerKinds: spec.ownerKinds } : {}),
      matches,
      ...(spec.completion ? { completion: spec.completion } : {}),
      ...(spec.onKeystoneExit ? { onKeystoneExit: spec.onKeystoneExit } : {}),
      ...(spec.nativeSidecars ? { nativeSidecars: spec.nativeSidecars } : {}),
      enforce: spec.enforce === true,
    },
  };
}

/** Policies in the order they apply: by name (ADR 0268). */
export function byPolicyName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
