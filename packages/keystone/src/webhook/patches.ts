/**
 * RFC 6902 builders for injector webhooks: mark a container's role, set its
 * stop spec, convert sidecars to native sidecars.
 *
 * Guarantees:
 * - pure: ops are computed from the pod as given and never mutate it;
 * - annotation keys are JSON-pointer escaped (`role.podlife.dev/app` -> `role.podlife.dev~1app`)
 *   and `/metadata/annotations` is created when absent, with all of one builder's keys in one op;
 * - builders compose: ops from several builders, each built from the same incoming pod, make
 *   one patch through `composeOps`, which keeps the first creation of the annotations, the
 *   labels and the container list and turns each later one into adds of its members, so no op
 *   overwrites what an earlier one wrote. The admission handler composes what a mutator returns;
 * - every builder that writes lifecycle annotations also sets the label `podlife.dev/managed:
 *   "true"` (`managedLabelOps`), so a controller that watches only labelled pods sees the pod;
 * - only the primary key is written, never the KEP-2872 alias;
 * - `injectContainerOps` adds a container and marks it in one patch: the marks are checked
 *   against the pod as the patch leaves it, and labels the patch sets (managed, and the webhook
 *   opt-in when asked) share one op when the pod has none, so no op overwrites another;
 * - native conversion moves `sidecar` containers to the front of `initContainers`, in spec
 *   order, with `restartPolicy: Always`, by `move` ops (the patch never restates a container),
 *   each only with a native form of its stop spec
 *   (native-stop.ts; the others stay and the plan says why); `auto` converts only when every node that may run the pod
 *   (node-features.ts) runs a kubelet >= 1.29; invalid lifecycle annotations are never "fixed" by
 *   a conversion;
 * - RestartPod gets its restart rule (`RestartAllContainers` on any exit, restart-in-place.ts) on
 *   every keystone only when every node that may run the pod declares the feature, and never on a
 *   keystone that sets its own restartPolicy or rules; otherwise the plan says why, and the
 *   controller deletes the pod instead (TerminatePod).
 */
import type { V1Container, V1Node, V1Pod } from '@kubernetes/client-node';
import { InvalidAnnotationError, jsonPointer, type JsonPatchOp } from '@podlife/core';
import {
  Annotation,
  CONTAINER_ROLES,
  ManagedLabel,
  hasManagedLabel,
  formatStopSpec,
  parseStopSpec,
  readLifecycle,
  type ContainerLifecycle,
  type ContainerRole,
  type LifecycleOptions,
  type LifecycleReading,
  type StopSpec,
} from '../annotations.js';
import { nodesSupportNativeSidecars } from '../kubelet-version.js';
import { RESTART_ALL_CONTAINERS_FEATURE, candidateNodes, nodesLacking } from '../node-features.js';
import { restartAllRule, restartInPlaceRule } from '../restart-in-place.js';
import { nativeStop } from './native-stop.js';

// What every builder here returns: re-exported so an injector can name it with keystone alone.
/** core's JSON patch operation, the type every builder here returns. */
export type { JsonPatchOp };

/**
 * Ops setting several annotations at once (one op creating the map when the pod has none), and
 * the managed label with them.
 */
export function lifecycleAnnotationOps(pod: V1Pod, entries: Readonly<Record<string, string>>): JsonPatchOp[] {
  const keys = Object.keys(entries);
  if (keys.length === 0) return [];
  const annotations: JsonPatchOp[] = !pod.metadata?.annotations
    ? [{ op: 'add', path: '/metadata/annotations', value: { ...entries } }]
    : keys.map((key) => ({ op: 'add', path: jsonPointer('metadata', 'annotations', key), value: entries[key] }));
  return [...annotations, ...managedLabelOps(pod)];
}

/** The maps and the list a builder creates whole when the pod has none. */
const CREATED_WHOLE = new Set(['/metadata/annotations', '/metadata/labels', '/spec/containers']);
/** The longest of them: a longer path (most are: a member's) is none, without hashing it. */
const CREATED_WHOLE_MAX = Math.max(...[...CREATED_WHOLE].map((p) => p.length));

/**
 * One patch from several builders' ops, each built from the same incoming pod: the first op that
 * creates `/metadata/annotations`, `/metadata/labels` or `/spec/containers` stays, and a later one
 * becomes an add per member (per container, appended), so no builder's op overwrites what an
 * earlier one wrote. Other ops pass unchanged, in order.
 */
export function composeOps(...patches: readonly (readonly JsonPatchOp[])[]): JsonPatchOp[] {
  return [...composed(patches.flat())];
}

/** `composeOps` of one list: the list itself when no op needs rewriting (no copy per review). */
export function composed(ops: readonly JsonPatchOp[]): readonly JsonPatchOp[] {
  let created: Set<string> | undefined;
  let out: JsonPatchOp[] | undefined;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as JsonPatchOp;
    const whole = op.op === 'add' && op.path.length <= CREATED_WHOLE_MAX && CREATED_WHOLE.has(op.path);
    if (whole && created?.has(op.path)) {
      out ??= ops.slice(0, i);
      out.push(...membersOf(op));
      continue;
    }
    if (whole) (created ??= new Set()).add(op.path);
    out?.push(op);
  }
  return out ?? ops;
}

/** A creation of a map or list, as adds of its members to the one already created. */
function membersOf(op: JsonPatchOp): JsonPatchOp[] {
  const value: unknown = op.value;
  if (Array.isArray(value)) return value.map((v: unknown) => ({ op: 'add', path: `${op.path}/-`, value: v }));
  if (!isPlainObject(value)) return [op];
  return Object.entries(value).map(([key, v]) => ({ op: 'add', path: op.path + jsonPointer(key), value: v }));
}

/** Where the managed label sits in a pod that has labels. */
const MANAGED_LABEL_PATH = jsonPointer('metadata', 'labels', ManagedLabel.key);

/** Ops setting `podlife.dev/managed: "true"` (creating `/metadata/labels` when absent); none when already set. */
export function managedLabelOps(pod: V1Pod): JsonPatchOp[] {
  // Every admission asks this: one op, without the general labelOps' intermediate lists.
  const labels = pod.metadata?.labels;
  if (hasManagedLabel(labels)) return [];
  if (!labels) return [{ op: 'add', path: '/metadata/labels', value: { [ManagedLabel.key]: ManagedLabel.value } }];
  return [{ op: 'add', path: MANAGED_LABEL_PATH, value: ManagedLabel.value }];
}

/** The label that sends a pod to podlife's own webhook (its objectSelector), and its value. */
export const WEBHOOK_OPT_IN_LABEL = 'podlife.dev/admission';
/** The value of WEBHOOK_OPT_IN_LABEL that opts a pod into the webhook. */
export const WEBHOOK_OPT_IN_VALUE = 'enabled';

/**
 * Ops setting `podlife.dev/admission: enabled`, so that podlife's webhook (later in the same
 * admission) may convert the pod's sidecars to native ones; none when already set. On a pod
 * without labels, combine it with other label ops through `injectContainerOps`'s `webhookOptIn`.
 */
export function webhookOptInOps(pod: V1Pod): JsonPatchOp[] {
  return labelOps(pod, { [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE });
}

/** Ops setting labels the pod does not already carry with that value; one op when it has no labels. */
function labelOps(pod: V1Pod, labels: Readonly<Record<string, string>>): JsonPatchOp[] {
  const current = pod.metadata?.labels;
  const missing = Object.keys(labels).filter((k) => current?.[k] !== labels[k]);
  if (missing.length === 0) return [];
  if (!current) return [{ op: 'add', path: '/metadata/labels', value: Object.fromEntries(missing.map((k) => [k, labels[k]])) }];
  return missing.map((k) => ({ op: 'add', path: jsonPointer('metadata', 'labels', k), value: labels[k] }));
}

function requireContainer(pod: V1Pod, container: string, key: string, value: string): void {
  if (!pod.spec?.containers?.some((c) => c.name === container)) {
    throw new InvalidAnnotationError(key, value, `no container "${container}" in spec.containers`);
  }
}

export function roleKey(container: string): string {
  return Annotation.RolePrefix + container;
}
export function stopKey(container: string): string {
  return Annotation.StopPrefix + container;
}

/** Mark `container` keystone or sidecar; throws InvalidAnnotationError when the pod has no such container. */
export function markRoleOps(pod: V1Pod, container: string, role: ContainerRole): JsonPatchOp[] {
  requireContainer(pod, container, roleKey(container), role);
  return lifecycleAnnotationOps(pod, { [roleKey(container)]: role });
}

/** Set how `container` is stopped; a string is validated as the annotation would be. */
export function setStopSpecOps(pod: V1Pod, container: string, spec: StopSpec | string, options: LifecycleOptions = {}): JsonPatchOp[] {
  const key = stopKey(container);
  const value = typeof spec === 'string' ? formatStopSpec(parseStopSpec(spec, key, options)) : formatStopSpec(spec);
  requireContainer(pod, container, key, value);
  return lifecycleAnnotationOps(pod, { [key]: value });
}

/**
 * Mark `container` with a role and, optionally, how it is stopped, both keys in one set of ops.
 * With other builders' ops for the same pod: `composeOps(injectContainerOps(pod, …),
 * markContainerOps(pod, …))` (the admission handler composes a mutator's ops itself).
 */
export function markContainerOps(
  pod: V1Pod,
  container: string,
  mark: { role: ContainerRole; stop?: StopSpec | string },
  options: LifecycleOptions = {},
): JsonPatchOp[] {
  return lifecycleAnnotationOps(pod, markEntries(pod, container, mark, options));
}

function markEntries(pod: V1Pod, container: string, mark: { role: ContainerRole; stop?: StopSpec | string }, options: LifecycleOptions): Record<string, string> {
  if (!CONTAINER_ROLES.includes(mark.role)) throw new InvalidAnnotationError(roleKey(container), String(mark.role), `role must be one of ${CONTAINER_ROLES.join(', ')}`);
  requireContainer(pod, container, roleKey(container), mark.role);
  const entries: Record<string, string> = { [roleKey(container)]: mark.role };
  if (mark.stop !== undefined) {
    const key = stopKey(container);
    entries[key] = typeof mark.stop === 'string' ? formatStopSpec(parseStopSpec(mark.stop, key, options)) : formatStopSpec(mark.stop);
  }
  return entries;
}

/** Validation settings for `injectContainerOps`, and whether to opt the pod into the webhook. */
export interface InjectContainerOptions extends LifecycleOptions {
  /** Also set `podlife.dev/admission: enabled` (see webhookOptInOps). Default false. */
  webhookOptIn?: boolean;
}

/**
 * Ops that add `container` to `spec.containers` and mark it (role, and stop spec when given), for
 * an injector whose own patch brings the container: `markContainerOps` on the incoming pod
 * throws, because the container is not there yet. Throws (before any op is built) when the
 * container has no valid name, when the pod already has a container of that name, or when the
 * stop spec is invalid.
 */
export function injectContainerOps(
  pod: V1Pod,
  container: V1Container,
  mark: { role: ContainerRole; stop?: StopSpec | string },
  options: InjectContainerOptions = {},
): JsonPatchOp[] {
  const name = container?.name;
  if (typeof name !== 'string' || !DNS_LABEL.test(name)) {
    throw new Error(`injectContainerOps: container name ${JSON.stringify(name)} is not a DNS label (lower case letters, digits and '-', at most 63)`);
  }
  const spec = pod.spec;
  const clash = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].some((c) => c.name === name);
  if (clash) throw new Error(`injectContainerOps: the pod already has a container named "${name}"`);
  const after: V1Pod = { ...pod, spec: { ...spec, containers: [...(spec?.containers ?? []), container] } };
  const entries = markEntries(after, name, mark, options);
  const annotations: JsonPatchOp[] = !pod.metadata?.annotations
    ? [{ op: 'add', path: '/metadata/annotations', value: entries }]
    : Object.keys(entries).map((key) => ({ op: 'add', path: jsonPointer('metadata', 'annotations', key), value: entries[key] }));
  const labels: Record<string, string> = { [ManagedLabel.key]: ManagedLabel.value };
  if (options.webhookOptIn) labels[WEBHOOK_OPT_IN_LABEL] = WEBHOOK_OPT_IN_VALUE;
  const add: JsonPatchOp = spec?.containers ? { op: 'add', path: '/spec/containers/-', value: container } : { op: 'add', path: '/spec/containers', value: [container] };
  return [add, ...annotations, ...labelOps(pod, labels)];
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Validation settings and the nodes `auto` conversion checks. */
export interface NativeSidecarOptions extends LifecycleOptions {
  /** The cluster's nodes, for `auto` (no nodes means no conversion). */
  nodes?: readonly V1Node[];
  /**
   * The cluster runs ContainerStopSignals (API servers and kubelets, alpha through 1.37) with
   * runtimes that honour it: signal stop specs other than TERM become `lifecycle.stopSignal`.
   * Default false: such sidecars are not converted.
   */
  stopSignals?: boolean;
}

export interface NativeSidecarPlan {
  readonly ops: JsonPatchOp[];
  /** Containers moved to initContainers. */
  readonly converted: readonly string[];
  /** Converted containers given `lifecycle.stopSignal` (their stop spec's signal). */
  readonly stopSignals?: readonly string[];
  /** Sidecars left in spec.containers because their stop spec has no native form here, and why. */
  readonly kept?: readonly { readonly container: string; readonly why: string }[];
  /** Why nothing was converted, when nothing was. */
  readonly why?: string;
}

export function planNativeSidecars(pod: V1Pod, options: NativeSidecarOptions = {}): NativeSidecarPlan {
  return nativeSidecarPlanOf(pod, readLifecycle(pod, options), options);
}

/** `planNativeSidecars` for a pod whose annotations were already read (`reading` is `readLifecycle(pod, options)`). */
export function nativeSidecarPlanOf(pod: V1Pod, reading: LifecycleReading, options: NativeSidecarOptions): NativeSidecarPlan {
  if (reading.kind === 'not-ours') return { ops: [], converted: [], why: 'no lifecycle annotations' };
  if (reading.kind === 'invalid') return { ops: [], converted: [], why: 'invalid lifecycle annotations' };
  const { lifecycle } = reading;
  const sidecars = sidecarCount(lifecycle.containers);
  if (sidecars === 0) return { ops: [], converted: [], why: 'no sidecars in spec.containers' };
  if (lifecycle.nativeSidecarsMode === 'false') return { ops: [], converted: [], why: `${Annotation.NativeSidecars} is "false"` };
  if (lifecycle.nativeSidecarsMode === 'auto' && !nodesSupportNativeSidecars(candidateNodes(pod, options.nodes ?? []))) {
    return { ops: [], converted: [], why: 'not every node that may run the pod runs a kubelet >= 1.29' };
  }

  // A conversion never drops a stop spec: each sidecar moves only with a native form of it.
  // One pass, in spec order: what moves, and what stays and why. Every admission of a pod with
  // sidecars comes here: lists are made at their size, and the rarer ones only when needed.
  const os = pod.spec?.os?.name;
  const stopOptions = os ? { stopSignals: options.stopSignals === true, os } : options.stopSignals === true ? SIGNALS_ON : SIGNALS_OFF;
  const moving = new Array<ContainerLifecycle>(sidecars);
  const converted = new Array<string>(sidecars);
  /** Per moved container, in spec order: the stop signal it is given, when any is. */
  let signals: (string | undefined)[] | undefined;
  let signalled: string[] | undefined;
  let kept: { container: string; why: string }[] | undefined;
  let n = 0;
  for (const s of lifecycle.containers) {
    if (s.role !== 'sidecar') continue;
    const native = nativeStop(s.stop, stopOptions);
    if (!native.ok) {
      (kept ??= []).push({ container: s.name, why: native.why });
      continue;
    }
    if (native.stopSignal) {
      (signals ??= new Array<string | undefined>(sidecars))[n] = native.stopSignal;
      (signalled ??= []).push(s.name);
    }
    moving[n] = s;
    converted[n++] = s.name;
  }
  if (n === 0) return { ops: [], converted: [], kept: kept ?? [], why: 'no sidecar\'s stop spec has a native form here' };
  moving.length = n;
  converted.length = n;

  // The API server moves each container itself: the patch never restates one (its size does not
  // grow with the sidecar's spec, docs/adr/0251). Moved from the back, each to the front of
  // initContainers: every index is still the spec's own when its op applies, and the sidecars end
  // up first, in spec order. Then each gets what makes it native, at its new index.
  const ops: JsonPatchOp[] = [];
  const inits = pod.spec?.initContainers;
  if (!Array.isArray(inits) || inits.length === 0) ops.push({ op: 'add', path: '/spec/initContainers', value: [] });
  for (let i = n - 1; i >= 0; i--) ops.push({ op: 'move', from: containerPath((moving[i] as ContainerLifecycle).index), path: '/spec/initContainers/0' });
  const containers = pod.spec?.containers ?? [];
  for (let k = 0; k < n; k++) {
    ops.push({ op: 'add', path: initRestartPolicyPath(k), value: 'Always' });
    const stopSignal = signals?.[k];
    if (stopSignal === undefined) continue;
    const lifecycle = (containers[(moving[k] as ContainerLifecycle).index] as V1Container | undefined)?.lifecycle;
    ops.push(
      isPlainObject(lifecycle)
        ? { op: 'add', path: jsonPointer('spec', 'initContainers', k, 'lifecycle', 'stopSignal'), value: stopSignal }
        : { op: 'add', path: jsonPointer('spec', 'initContainers', k, 'lifecycle'), value: { stopSignal } },
    );
  }
  // The API server accepts a stop signal only on a pod that names its OS.
  if (signalled && !os) ops.push({ op: 'add', path: pod.spec?.os ? '/spec/os/name' : '/spec/os', value: pod.spec?.os ? 'linux' : { name: 'linux' } });
  const plan: { ops: JsonPatchOp[]; converted: string[]; stopSignals?: string[]; kept?: typeof kept } = { ops, converted };
  if (signalled) plan.stopSignals = signalled;
  if (kept) plan.kept = kept;
  return plan;
}

/** The stop options of a pod that does not name its OS, one per setting. */
const SIGNALS_ON = Object.freeze({ stopSignals: true });
const SIGNALS_OFF = Object.freeze({ stopSignals: false });

function sidecarCount(containers: readonly ContainerLifecycle[]): number {
  let count = 0;
  for (const c of containers) if (c.role === 'sidecar') count++;
  return count;
}

/** Pointers by index, made once: every conversion writes them, and indices are small. */
const POINTERS_KEPT = 64;
const CONTAINER_PATHS: string[] = [];
const INIT_RESTART_POLICY_PATHS: string[] = [];

function containerPath(i: number): string {
  if (i >= POINTERS_KEPT) return jsonPointer('spec', 'containers', i);
  return (CONTAINER_PATHS[i] ??= jsonPointer('spec', 'containers', i));
}

function initRestartPolicyPath(k: number): string {
  if (k >= POINTERS_KEPT) return jsonPointer('spec', 'initContainers', k, 'restartPolicy');
  return (INIT_RESTART_POLICY_PATHS[k] ??= jsonPointer('spec', 'initContainers', k, 'restartPolicy'));
}

function isPlainObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Just the ops of `planNativeSidecars`. */
export function nativeSidecarOps(pod: V1Pod, options: NativeSidecarOptions = {}): JsonPatchOp[] {
  return planNativeSidecars(pod, options).ops;
}

/** The restart rules RestartPod adds, or why it adds none. */
export interface RestartInPlacePlan {
  readonly ops: JsonPatchOp[];
  /** Keystones that got the rule. */
  readonly keystones: readonly string[];
  /** Why no rule was added, when RestartPod was asked for and none was. */
  readonly why?: string;
}

/**
 * `on-keystone-exit: RestartPod`: ops giving every keystone `restartPolicy` (the pod's, which the
 * API server requires next to rules) and the rule that restarts all containers on any exit, when
 * every node that may run the pod declares RestartAllContainersOnContainerExits. Ops address
 * `spec.containers` by the pod's own indices: apply them before any op that moves containers.
 */
export function planRestartInPlace(pod: V1Pod, options: NativeSidecarOptions = {}): RestartInPlacePlan {
  return restartInPlacePlanOf(pod, readLifecycle(pod, options), options);
}

/** `planRestartInPlace` for a pod whose annotations were already read (`reading` is `readLifecycle(pod, options)`). */
export function restartInPlacePlanOf(pod: V1Pod, reading: LifecycleReading, options: NativeSidecarOptions): RestartInPlacePlan {
  if (reading.kind !== 'valid' || reading.lifecycle.onKeystoneExit !== 'RestartPod') return { ops: [], keystones: [] };
  const { keystones } = reading.lifecycle;
  if (keystones.length === 0) return { ops: [], keystones: [], why: 'RestartPod without a keystone does nothing' };
  const containers = pod.spec?.containers ?? [];
  const needing: ContainerLifecycle[] = [];
  for (const k of keystones) {
    const c = containers[k.index];
    if (restartAllRule(c)) continue; // already there (ours on a second pass, or the author's)
    if (c?.restartPolicy !== undefined || c?.restartPolicyRules !== undefined) {
      return { ops: [], keystones: [], why: `keystone ${k.name} sets its own restartPolicy or restartPolicyRules; podlife leaves it as it is, and a keystone exit deletes the pod instead (TerminatePod)` };
    }
    needing.push(k);
  }
  if (needing.length === 0) return { ops: [], keystones: [] };
  const lacking = nodesLacking(pod, options.nodes ?? [], RESTART_ALL_CONTAINERS_FEATURE);
  if (lacking !== undefined) {
    const which = lacking.length === 0 ? 'no node may run the pod' : `node${lacking.length === 1 ? '' : 's'} ${lacking.slice(0, 5).join(', ')}${lacking.length > 5 ? ` and ${lacking.length - 5} more` : ''} may run the pod and do${lacking.length === 1 ? 'es' : ''} not declare it`;
    return { ops: [], keystones: [], why: `RestartPod needs every node that may run the pod to declare ${RESTART_ALL_CONTAINERS_FEATURE}: ${which}; a keystone exit deletes the pod instead (TerminatePod)` };
  }
  const policy = pod.spec?.restartPolicy ?? 'Always';
  const ops: JsonPatchOp[] = [];
  for (const k of needing) {
    ops.push({ op: 'add', path: jsonPointer('spec', 'containers', k.index, 'restartPolicy'), value: policy });
    ops.push({ op: 'add', path: jsonPointer('spec', 'containers', k.index, 'restartPolicyRules'), value: [restartInPlaceRule()] });
  }
  return { ops, keystones: needing.map((k) => k.name) };
}

/** `/metadata/annotations/native.podlife.dev~1`: the record keys' path, but for the container's name. */
const NATIVE_RECORD_PATH = jsonPointer('metadata', 'annotations', Annotation.NativePrefix);

/**
 * The op writing `native.podlife.dev/<container>` (what the webhook made native; `value`: the
 * comma-separated NativeRecords); the pod's annotations exist (it has lifecycle annotations).
 */
export function nativeRecordOp(container: string, value: string): JsonPatchOp {
  // Escaping works token by token: the key's pointer is the prefix's followed by the name's. A
  // container's name is a DNS label, with nothing to escape, unless the pod is malformed.
  const escaped = container.indexOf('~') < 0 && container.indexOf('/') < 0 ? container : jsonPointer(container).slice(1);
  return { op: 'add', path: NATIVE_RECORD_PATH + escaped, value };
}
