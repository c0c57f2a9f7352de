/**
 * The keystone controller's configuration: admin-only settings, the same whether the
 * podlife controller reads them from its config file or a custom controller passes them.
 *
 * Guarantees: nothing here can be set from a pod annotation — commands and images come only
 * from whoever configures the controller. A stop container's securityContext from configuration
 * is laid over the restricted default, never in place of it (`restrictedStopContext`): what it
 * leaves out stays restricted, and a setting weaker than Pod Security "restricted" is refused,
 * naming the field.
 */
import type { V1SecurityContext } from '@kubernetes/client-node';
import type { LifecycleOptions } from './annotations.js';
import type { StopMethod } from './evaluate.js';
import { RESTRICTED_STOP_CONTEXT } from './strategies/ephemeral.js';

/** The keystone controller's admin-only settings. */
export interface KeystoneConfig extends LifecycleOptions {
  /** How stops are delivered first; default 'exec' (ephemeral is the fallback when an image is set). */
  strategy?: StopMethod;
  /** Image for ephemeral stop containers (must provide sh, kill, printf, nc, head and grep, e.g. a pinned busybox). */
  ephemeralImage?: string;
  /**
   * securityContext of ephemeral stop containers, used as given; default RESTRICTED_STOP_CONTEXT
   * (Pod Security "restricted"). Build it with `restrictedStopContext` to keep the defaults it leaves out.
   */
  ephemeralSecurityContext?: V1SecurityContext;
  /** Signal stops run as the target's declared non-root uid; default true (docs/adr/0093). */
  ephemeralMatchTargetUser?: boolean;
  /** Least time a stop stage and an escalation get; default 2000 ms. */
  minStageMs?: number;
  /** Act only on pods in these namespaces (and list and watch only them); empty: every namespace. */
  namespaces?: readonly string[];
  /**
   * Never act on pods in these namespaces, even when `namespaces` is empty (the podlife controller
   * passes kube-system, kube-node-lease and its own namespace unless the admin lists them; ADR 0257).
   */
  excludedNamespaces?: readonly string[];
  /**
   * The cluster runs ContainerStopSignals (API servers and kubelets; alpha through 1.37) with
   * runtimes that honour it: the webhook maps signal stop specs to `lifecycle.stopSignal`.
   */
  stopSignals?: boolean;
}

/** A stop-container securityContext setting weaker than Pod Security "restricted": its field (`.capabilities.add[0]`) and why. */
export interface StopContextProblem {
  readonly field: string;
  readonly message: string;
}

/** The stop container's securityContext: `given` laid over RESTRICTED_STOP_CONTEXT, or every setting of it that is weaker. */
export type StopContextResult = { readonly ok: true; readonly context: V1SecurityContext } | { readonly ok: false; readonly problems: readonly StopContextProblem[] };

/** The SELinux types Pod Security allows (baseline). */
const SELINUX_TYPES = ['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'];

/** What in `given` Pod Security "restricted" (or baseline, which it includes) would refuse. */
function weakerSettings(given: V1SecurityContext): StopContextProblem[] {
  const out: StopContextProblem[] = [];
  const refuse = (field: string, message: string) => void out.push({ field, message });
  if (given.privileged === true) refuse('.privileged', 'must not be true');
  if (given.allowPrivilegeEscalation === true) refuse('.allowPrivilegeEscalation', 'must not be true');
  if (given.runAsNonRoot === false) refuse('.runAsNonRoot', 'must not be false');
  if (given.runAsUser === 0) refuse('.runAsUser', 'must not be 0 (root)');
  const caps = given.capabilities;
  if (caps?.drop !== undefined && !caps.drop.includes('ALL')) refuse('.capabilities.drop', 'must include ALL');
  (caps?.add ?? []).forEach((c, i) => {
    if (c !== 'NET_BIND_SERVICE') refuse(`.capabilities.add[${i}]`, `${c} may not be added (only NET_BIND_SERVICE)`);
  });
  const seccomp = given.seccompProfile?.type;
  if (seccomp !== undefined && seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') refuse('.seccompProfile.type', 'must be RuntimeDefault or Localhost');
  if (given.procMount !== undefined && given.procMount !== 'Default') refuse('.procMount', 'must be Default');
  const selinux = given.seLinuxOptions;
  if (selinux?.user !== undefined) refuse('.seLinuxOptions.user', 'must not be set');
  if (selinux?.role !== undefined) refuse('.seLinuxOptions.role', 'must not be set');
  if (selinux?.type !== undefined && !SELINUX_TYPES.includes(selinux.type)) refuse('.seLinuxOptions.type', `must be one of ${SELINUX_TYPES.filter(Boolean).join(', ')}`);
  if (given.appArmorProfile?.type === 'Unconfined') refuse('.appArmorProfile.type', 'must not be Unconfined');
  if (given.windowsOptions?.hostProcess === true) refuse('.windowsOptions.hostProcess', 'must not be true');
  return out;
}

/**
 * A stop container's securityContext from configuration, laid over RESTRICTED_STOP_CONTEXT: `{}`
 * is the restricted default itself, a field given replaces the default's (capabilities still
 * drop ALL when only `add` is given), and anything weaker than Pod Security "restricted" is
 * refused, each setting named (a stop container never runs with the pod's or the runtime's
 * defaults because a field was left out).
 */
export function restrictedStopContext(given: V1SecurityContext): StopContextResult {
  const problems = weakerSettings(given);
  if (problems.length > 0) return { ok: false, problems };
  const context = { ...structuredClone(RESTRICTED_STOP_CONTEXT), ...structuredClone(given) } as V1SecurityContext;
  if (given.capabilities !== undefined) context.capabilities = { drop: ['ALL'], ...structuredClone(given.capabilities) };
  return { ok: true, context };
}
