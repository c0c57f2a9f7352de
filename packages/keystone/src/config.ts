/**
 * The keystone controller's configuration: admin-only settings (DESIGN 7), the same whether the
 * podlife controller reads them from its config file or a custom controller passes them.
 *
 * Guarantees: nothing here can be set from a pod annotation — commands and images come only
 * from whoever configures the controller.
 */
import type { V1SecurityContext } from '@kubernetes/client-node';
import type { LifecycleOptions } from './annotations.js';
import type { StopMethod } from './evaluate.js';

/** The keystone controller's admin-only settings (DESIGN 7). */
export interface KeystoneConfig extends LifecycleOptions {
  /** How stops are delivered first; default 'exec' (ephemeral is the fallback when an image is set). */
  strategy?: StopMethod;
  /** Image for ephemeral stop containers (must provide sh, kill, printf, nc, head and grep, e.g. a pinned busybox). */
  ephemeralImage?: string;
  /** securityContext of ephemeral stop containers; default RESTRICTED_STOP_CONTEXT (Pod Security "restricted"). */
  ephemeralSecurityContext?: V1SecurityContext;
  /** Signal stops run as the target's declared non-root uid; default true (docs/adr/0093). */
  ephemeralMatchTargetUser?: boolean;
  /** Least time a stop stage and an escalation get; default 2000 ms. */
  minStageMs?: number;
  /** Act only on pods in these namespaces (and list and watch only them); empty: every namespace. */
  namespaces?: readonly string[];
  /**
   * The cluster runs ContainerStopSignals (API servers and kubelets; alpha through 1.37) with
   * runtimes that honour it: the webhook maps signal stop specs to `lifecycle.stopSignal`.
   */
  stopSignals?: boolean;
}
