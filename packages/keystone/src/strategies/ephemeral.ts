/**
 * ephemeral strategy: for images without a shell or `kill` (distroless), add an ephemeral
 * container that targets the sidecar and stops it from inside its namespaces.
 *
 * Guarantees:
 * - the image and the securityContext come from the controller configuration only, never from
 *   the pod; by default the container is restricted-profile compatible (RESTRICTED_STOP_CONTEXT).
 *   The one thing a signal stop takes from the target is its declared non-root uid (0093);
 * - `targetContainerName` is the sidecar, so the command (`ephemeralCommand`, commands.ts) reaches
 *   the sidecar's PID 1 and 127.0.0.1 is the pod's loopback;
 * - idempotent: the container name is deterministic per (container, plain|kill), and a pod
 *   that already has it is reported `already` without a second request;
 * - never throws: API errors are returned in the attempt.
 */
import type { V1Container, V1EphemeralContainer, V1Pod, V1SecurityContext } from '@kubernetes/client-node';
import type { StopSpec } from '../annotations.js';
import type { PodApi } from './api.js';
import { podRef } from './api.js';
import { ephemeralCommand } from './commands.js';
import type { StopAttempt } from './exec.js';
import { ephemeralName } from '../stop-containers.js';

/**
 * The default securityContext of a stop container: what Pod Security "restricted" requires
 * (non-root, no privilege escalation, every capability dropped, RuntimeDefault seccomp), with a
 * fixed non-root user so that images whose default user is root still start.
 */
export const RESTRICTED_STOP_CONTEXT: Readonly<V1SecurityContext> = Object.freeze({
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  allowPrivilegeEscalation: false,
  capabilities: Object.freeze({ drop: Object.freeze(['ALL']) }) as V1SecurityContext['capabilities'],
  seccompProfile: Object.freeze({ type: 'RuntimeDefault' }) as V1SecurityContext['seccompProfile'],
});

/** How stop containers are secured (controller configuration only, never the pod). */
export interface StopContainerSecurity {
  /** Default RESTRICTED_STOP_CONTEXT. */
  readonly securityContext?: V1SecurityContext;
  /**
   * For signal stops, run as the target's own non-root user when it declares one (kill(2)
   * needs the same uid, and CAP_KILL is not allowed under "restricted"); default true. Only
   * the uid is taken, never root, nothing else (docs/adr/0093).
   */
  readonly matchTargetUser?: boolean;
}

function declaredUser(pod: V1Pod, target: V1Container | undefined): number | undefined {
  const uid = target?.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser;
  return typeof uid === 'number' && Number.isInteger(uid) && uid > 0 ? uid : undefined;
}

/** The stop container's securityContext: the configured one (or the restricted default), plus the target's uid for a signal. */
export function stopContainerSecurityContext(pod: V1Pod, container: string, spec: StopSpec, security: StopContainerSecurity = {}): V1SecurityContext {
  const base: V1SecurityContext = structuredClone(security.securityContext ?? RESTRICTED_STOP_CONTEXT) as V1SecurityContext;
  if (spec.kind !== 'signal' || security.matchTargetUser === false) return base;
  const target = pod.spec?.containers?.find((c) => c.name === container);
  const uid = declaredUser(pod, target);
  if (uid !== undefined) {
    base.runAsUser = uid;
    base.runAsNonRoot = true;
  }
  return base;
}

export function ephemeralStopContainer(
  pod: V1Pod,
  container: string,
  spec: StopSpec,
  escalated: boolean,
  image: string,
  security: StopContainerSecurity = {},
): V1EphemeralContainer | undefined {
  const command = ephemeralCommand(spec);
  if (!command) return undefined;
  return {
    name: ephemeralName(container, escalated),
    image,
    imagePullPolicy: 'IfNotPresent',
    command,
    targetContainerName: container,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    securityContext: stopContainerSecurityContext(pod, container, spec, security),
  };
}

export async function stopByEphemeral(
  api: PodApi,
  pod: V1Pod,
  container: string,
  spec: StopSpec,
  escalated: boolean,
  image: string | undefined,
  security: StopContainerSecurity = {},
): Promise<StopAttempt & { already?: boolean }> {
  if (!image) return { ok: false, detail: 'ephemeral container', error: 'no ephemeral image in the controller configuration' };
  const ephemeral = ephemeralStopContainer(pod, container, spec, escalated, image, security);
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
