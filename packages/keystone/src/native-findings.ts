/**
 * What became of the native mechanisms podlife's webhook put on a pod: kept, not
 * applied (and why), or undone by someone after it — another mutating webhook that strips fields
 * it does not know (`restartPolicy` of init containers, restart rules, stop signals), or an API
 * server whose feature gate is off.
 *
 * Guarantees:
 * - pure; read from the pod alone: the webhook's records (`native.podlife.dev/<container>`) say
 *   what it did, the spec says what is left, so a pod never changed by the webhook has no finding;
 * - each finding names the container and the cause; an undone mechanism is a Warning, a sidecar
 *   left unconverted is Normal (podlife stops it itself);
 * - `nativeMechanismsUpdate` is the `podlife.dev/NativeMechanisms` condition with one Event per
 *   finding, written (and so announced) only when its message changes.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { Annotation, DEFAULT_STOP, nativeRecords, parseStopSpec, type LifecycleOptions, type NativeRecord, type StopSpec } from './annotations.js';
import type { LifecycleEvent, StatusUpdate } from './records.js';
import { RESTART_ALL_CONTAINERS, restartAllRule } from './restart-in-place.js';
import { nativeStop } from './webhook/native-stop.js';

/** The condition summing up the native mechanisms of a pod the webhook changed. */
export const NATIVE_MECHANISMS_CONDITION = 'podlife.dev/NativeMechanisms';

/** Reasons of the Events about native mechanisms. */
export const NativeEventReason = {
  SidecarNotConverted: 'SidecarNotConverted',
  NativeSidecarUndone: 'NativeSidecarUndone',
  StopSignalStripped: 'StopSignalStripped',
  StopSignalNotApplied: 'StopSignalNotApplied',
  RestartRuleStripped: 'RestartRuleStripped',
} as const;

/** One thing to say about a container's native mechanism. */
export interface NativeFinding {
  readonly container: string;
  readonly reason: (typeof NativeEventReason)[keyof typeof NativeEventReason];
  readonly warning: boolean;
  readonly message: string;
}

const AFTER_US = "a mutating webhook after podlife's (one that drops fields it does not know), or an API server with the feature gate off";

function byName(list: readonly V1Container[] | undefined, name: string): V1Container | undefined {
  return Array.isArray(list) ? list.find((c) => c?.name === name) : undefined;
}

function stopOf(pod: V1Pod, container: string, options: LifecycleOptions): StopSpec {
  const value = pod.metadata?.annotations?.[Annotation.StopPrefix + container];
  if (typeof value !== 'string') return DEFAULT_STOP;
  try {
    return parseStopSpec(value, Annotation.StopPrefix + container, options);
  } catch {
    return DEFAULT_STOP;
  }
}

const NATIVE_PREFIX_FIRST = Annotation.NativePrefix.charCodeAt(0);

/**
 * Whether the webhook left a record on the pod; allocates nothing. evaluatePod asks only when the
 * walk that read the pod's lifecycle met such a key (`readLifecycleNoting`).
 */
function hasNativeRecord(annotations: Record<string, string> | undefined): boolean {
  if (!annotations) return false;
  // The first character rules out nearly every key before the comparison of the prefix.
  for (const key in annotations) if (key.charCodeAt(0) === NATIVE_PREFIX_FIRST && key.startsWith(Annotation.NativePrefix)) return true;
  return false;
}

/** The containers the webhook left records on, and what each says. */
function recordsOf(pod: V1Pod): [string, NativeRecord[]][] {
  const annotations = pod.metadata?.annotations;
  if (!annotations) return [];
  const out: [string, NativeRecord[]][] = [];
  for (const key in annotations) {
    if (key.startsWith(Annotation.NativePrefix)) {
      const name = key.slice(Annotation.NativePrefix.length);
      out.push([name, nativeRecords(annotations, name)]);
    }
  }
  return out;
}

/** Every finding about the native mechanisms the webhook recorded on `pod`, in annotation order. */
export function nativeFindings(pod: V1Pod, options: LifecycleOptions & { stopSignals?: boolean } = {}): NativeFinding[] {
  const spec = pod.spec;
  const out: NativeFinding[] = [];
  for (const [name, records] of recordsOf(pod)) {
    const init = byName(spec?.initContainers, name);
    const regular = byName(spec?.containers, name);
    if (records.includes('unconverted') && regular) {
      const native = nativeStop(stopOf(pod, name, options), { stopSignals: options.stopSignals === true, ...(spec?.os?.name ? { os: spec.os.name } : {}) });
      const why = native.ok ? 'its stop spec had no native form when the pod was created' : native.why;
      out.push({ container: name, reason: NativeEventReason.SidecarNotConverted, warning: false, message: `sidecar ${name} was not made a native sidecar: ${why}; podlife stops it itself` });
    }
    if (records.includes('sidecar') && init && init.restartPolicy !== 'Always') {
      out.push({
        container: name,
        reason: NativeEventReason.NativeSidecarUndone,
        warning: true,
        message: `sidecar ${name} was made a native sidecar by podlife's webhook and has lost restartPolicy: Always (${AFTER_US}): it now runs as an ordinary init container, and the pod's other containers start only after it exits`,
      });
    }
    if (records.includes('stop-signal') && init && !init.lifecycle?.stopSignal) {
      const stop = stopOf(pod, name, options);
      const signal = stop.kind === 'signal' ? `SIG${stop.signal}` : 'its stop signal';
      out.push({
        container: name,
        reason: NativeEventReason.StopSignalStripped,
        warning: true,
        message: `sidecar ${name} was given lifecycle.stopSignal ${signal} by podlife's webhook and it is gone (${AFTER_US}): the kubelet stops it with the runtime's default signal instead`,
      });
    }
    const asked = init?.lifecycle?.stopSignal;
    const status = spec && pod.status?.initContainerStatuses?.find((st) => st?.name === name);
    // A kubelet running ContainerStopSignals reports the signal in effect once the runtime applies it.
    if (records.includes('stop-signal') && asked && status?.state?.running && !status.stopSignal) {
      out.push({
        container: name,
        reason: NativeEventReason.StopSignalNotApplied,
        warning: true,
        message: `sidecar ${name} asks for stop signal ${asked} and node ${spec?.nodeName ?? '<none>'} reports none in effect (its kubelet runs without ContainerStopSignals, or its runtime does not implement stop signals): the kubelet stops it with the runtime's default signal`,
      });
    }
    if (records.includes('restart-all-containers') && regular && !restartAllRule(regular)) {
      out.push({
        container: name,
        reason: NativeEventReason.RestartRuleStripped,
        warning: true,
        message: `keystone ${name} was given a ${RESTART_ALL_CONTAINERS} restart rule by podlife's webhook and it is gone (${AFTER_US}): a keystone exit deletes the pod instead of restarting it in place`,
      });
    }
  }
  return out;
}

/** The NativeMechanisms condition and its Events, for a pod the webhook changed; undefined for any other pod. */
export function nativeMechanismsUpdate(pod: V1Pod, options: LifecycleOptions & { stopSignals?: boolean } = {}): StatusUpdate | undefined {
  if (!hasNativeRecord(pod.metadata?.annotations)) return undefined;
  const records = recordsOf(pod);
  if (records.length === 0) return undefined;
  const findings = nativeFindings(pod, options);
  const undone = findings.filter((f) => f.warning);
  const message =
    findings.length === 0
      ? `in place: ${records.map(([name, what]) => `${name} (${what.join(', ')})`).join('; ')}`
      : findings.map((f) => f.message).join('; ');
  const events: LifecycleEvent[] = findings.map((f) => ({ type: f.warning ? 'Warning' : 'Normal', reason: f.reason, note: f.message, action: 'Admit' }));
  return {
    condition: {
      type: NATIVE_MECHANISMS_CONDITION,
      status: undone.length === 0 ? 'True' : 'False',
      reason: undone[0]?.reason ?? (findings.length > 0 ? NativeEventReason.SidecarNotConverted : 'InPlace'),
      message: message.length <= 1024 ? message : `${message.slice(0, 1021)}...`,
    },
    events,
  };
}
