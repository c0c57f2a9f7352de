/**
 * RFC 6902 builders for injector webhooks (DESIGN 3.6): mark a container's role, set its
 * stop spec, convert sidecars to native sidecars.
 *
 * Guarantees:
 * - pure: ops are computed from the pod as given and never mutate it;
 * - annotation keys are JSON-pointer escaped (`role.podlife.dev/app` -> `role.podlife.dev~1app`)
 *   and `/metadata/annotations` is created when absent — with all keys in one op, so several
 *   marks in one patch never overwrite each other (use `lifecycleAnnotationOps` for several);
 * - every builder that writes lifecycle annotations also sets the label `podlife.dev/managed:
 *   "true"` (`managedLabelOps`), so a controller that watches only labelled pods sees the pod;
 * - only the primary key is written, never the KEP-2872 alias;
 * - native conversion moves `sidecar` containers to the front of `initContainers`, in spec
 *   order, with `restartPolicy: Always`; `auto` converts only when every node's kubelet is
 *   >= 1.29; invalid lifecycle annotations are never "fixed" by a conversion.
 */
import type { V1Container, V1Node, V1Pod } from '@kubernetes/client-node';
import { InvalidAnnotationError, jsonPointer, type JsonPatchOp } from '@podlife/core';
import {
  Annotation,
  ManagedLabel,
  hasManagedLabel,
  formatStopSpec,
  parseStopSpec,
  readLifecycle,
  type ContainerRole,
  type LifecycleOptions,
  type StopSpec,
} from '../annotations.js';
import { nodesSupportNativeSidecars } from '../kubelet-version.js';

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

/** Ops setting `podlife.dev/managed: "true"` (creating `/metadata/labels` when absent); none when already set. */
export function managedLabelOps(pod: V1Pod): JsonPatchOp[] {
  if (hasManagedLabel(pod.metadata?.labels)) return [];
  if (!pod.metadata?.labels) return [{ op: 'add', path: '/metadata/labels', value: { [ManagedLabel.key]: ManagedLabel.value } }];
  return [{ op: 'add', path: jsonPointer('metadata', 'labels', ManagedLabel.key), value: ManagedLabel.value }];
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
 * Mark `container` with a role and, optionally, how it is stopped — both keys in one set of ops,
 * so an injector needs no bookkeeping of what an earlier op in the same patch created.
 */
export function markContainerOps(
  pod: V1Pod,
  container: string,
  mark: { role: ContainerRole; stop?: StopSpec | string },
  options: LifecycleOptions = {},
): JsonPatchOp[] {
  requireContainer(pod, container, roleKey(container), mark.role);
  const entries: Record<string, string> = { [roleKey(container)]: mark.role };
  if (mark.stop !== undefined) {
    const key = stopKey(container);
    entries[key] = typeof mark.stop === 'string' ? formatStopSpec(parseStopSpec(mark.stop, key, options)) : formatStopSpec(mark.stop);
  }
  return lifecycleAnnotationOps(pod, entries);
}

export interface NativeSidecarOptions extends LifecycleOptions {
  /** The cluster's nodes, for `auto` (no nodes means no conversion). */
  nodes?: readonly V1Node[];
}

export interface NativeSidecarPlan {
  readonly ops: JsonPatchOp[];
  /** Containers moved to initContainers. */
  readonly converted: readonly string[];
  /** Why nothing was converted, when nothing was. */
  readonly why?: string;
}

export function planNativeSidecars(pod: V1Pod, options: NativeSidecarOptions = {}): NativeSidecarPlan {
  const reading = readLifecycle(pod, options);
  if (reading.kind === 'not-ours') return { ops: [], converted: [], why: 'no lifecycle annotations' };
  if (reading.kind === 'invalid') return { ops: [], converted: [], why: 'invalid lifecycle annotations' };
  const { lifecycle } = reading;
  const sidecars = lifecycle.containers.filter((c) => c.role === 'sidecar');
  if (sidecars.length === 0) return { ops: [], converted: [], why: 'no sidecars in spec.containers' };
  if (lifecycle.nativeSidecarsMode === 'false') return { ops: [], converted: [], why: `${Annotation.NativeSidecars} is "false"` };
  if (lifecycle.nativeSidecarsMode === 'auto' && !nodesSupportNativeSidecars(options.nodes ?? [])) {
    return { ops: [], converted: [], why: 'not every node runs a kubelet >= 1.29' };
  }

  const containers = pod.spec?.containers ?? [];
  const ops: JsonPatchOp[] = [];
  for (let i = sidecars.length - 1; i >= 0; i--) {
    ops.push({ op: 'remove', path: jsonPointer('spec', 'containers', (sidecars[i] as { index: number }).index) });
  }
  const moved: V1Container[] = sidecars.map((s) => ({ ...(containers[s.index] as V1Container), restartPolicy: 'Always' }));
  if (!pod.spec?.initContainers || pod.spec.initContainers.length === 0) {
    ops.push({ op: 'add', path: '/spec/initContainers', value: moved });
  } else {
    moved.forEach((c, k) => ops.push({ op: 'add', path: jsonPointer('spec', 'initContainers', k), value: c }));
  }
  return { ops, converted: sidecars.map((s) => s.name) };
}

/** Just the ops of `planNativeSidecars`. */
export function nativeSidecarOps(pod: V1Pod, options: NativeSidecarOptions = {}): JsonPatchOp[] {
  return planNativeSidecars(pod, options).ops;
}
