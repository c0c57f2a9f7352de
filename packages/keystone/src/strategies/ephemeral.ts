/**
 * ephemeral strategy: for images without a shell or `kill` (distroless), add an ephemeral
 * container that targets the sidecar and stops it from inside its namespaces.
 *
 * Guarantees:
 * - the image comes from the controller configuration only, never from the pod;
 * - `targetContainerName` is the sidecar, so `kill -s SIG 1` reaches the sidecar's PID 1 and
 *   127.0.0.1 is the pod's loopback (busybox-compatible `wget --post-data=`);
 * - idempotent: the container name is deterministic per (container, plain|kill), and a pod
 *   that already has it is reported `already` without a second request;
 * - never throws: API errors are returned in the attempt.
 */
import type { V1Container, V1EphemeralContainer, V1Pod, V1SecurityContext } from '@kubernetes/client-node';
import type { StopSpec } from '../annotations.js';
import type { PodApi } from './api.js';
import { podRef } from './api.js';
import type { StopAttempt } from './exec.js';
import { stopUrl } from './exec.js';

const NAME_MAX = 63;

/** FNV-1a, for short stable suffixes when a name must be truncated. */
function hash36(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

/** `podlife-stop-<container>` (or `podlife-kill-…` for the escalation), shortened with a hash past 63 characters. */
export function ephemeralName(container: string, escalated: boolean): string {
  const name = `podlife-${escalated ? 'kill' : 'stop'}-${container}`;
  if (name.length <= NAME_MAX) return name;
  const suffix = `-${hash36(name)}`;
  return name.slice(0, NAME_MAX - suffix.length).replace(/-+$/, '') + suffix;
}

export function ephemeralCommand(spec: StopSpec): string[] | undefined {
  switch (spec.kind) {
    case 'signal':
      return ['kill', '-s', spec.signal, '1'];
    case 'http':
      return ['wget', '-q', '-O-', '--post-data=', '-T', '5', stopUrl(spec.port, spec.path)];
    case 'exec':
      return undefined; // named commands run inside the container itself
  }
}

function defaultSecurityContext(target: V1Container | undefined): V1SecurityContext | undefined {
  const sc = target?.securityContext;
  if (!sc) return undefined;
  const out: V1SecurityContext = {};
  if (sc.runAsUser !== undefined) out.runAsUser = sc.runAsUser;
  if (sc.runAsGroup !== undefined) out.runAsGroup = sc.runAsGroup;
  if (sc.runAsNonRoot !== undefined) out.runAsNonRoot = sc.runAsNonRoot;
  return Object.keys(out).length > 0 ? out : undefined;
}

export function ephemeralStopContainer(
  pod: V1Pod,
  container: string,
  spec: StopSpec,
  escalated: boolean,
  image: string,
  securityContext?: V1SecurityContext,
): V1EphemeralContainer | undefined {
  const command = ephemeralCommand(spec);
  if (!command) return undefined;
  const target = pod.spec?.containers?.find((c) => c.name === container);
  const sc = securityContext ?? defaultSecurityContext(target);
  return {
    name: ephemeralName(container, escalated),
    image,
    imagePullPolicy: 'IfNotPresent',
    command,
    targetContainerName: container,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...(sc ? { securityContext: sc } : {}),
  };
}

export async function stopByEphemeral(
  api: PodApi,
  pod: V1Pod,
  container: string,
  spec: StopSpec,
  escalated: boolean,
  image: string | undefined,
  securityContext?: V1SecurityContext,
): Promise<StopAttempt & { already?: boolean }> {
  if (!image) return { ok: false, detail: 'ephemeral container', error: 'no ephemeral image in the controller configuration' };
  const ephemeral = ephemeralStopContainer(pod, container, spec, escalated, image, securityContext);
  if (!ephemeral) return { ok: false, detail: 'ephemeral container', error: 'exec: stop specs cannot run in an ephemeral container' };
  const detail = `ephemeral container ${ephemeral.name} (${(ephemeral.command ?? []).join(' ')})`;
  if (pod.spec?.ephemeralContainers?.some((c) => c.name === ephemeral.name)) return { ok: true, already: true, detail };
  try {
    await api.addEphemeralContainer(podRef(pod), ephemeral);
    return { ok: true, detail };
  } catch (err) {
    return { ok: false, detail, error: err instanceof Error ? err.message : String(err) };
  }
}
