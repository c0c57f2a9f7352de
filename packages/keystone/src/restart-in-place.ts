/**
 * `on-keystone-exit: RestartPod` through the kubelet (KEP-5532): a `RestartAllContainers`
 * restart rule on the keystone makes the kubelet restart every container of the pod in place
 * (same UID, IP and volumes) when the keystone exits.
 *
 * Guarantees:
 * - the rule podlife adds matches every exit code (`NotIn []`, KEP-5307's matcher: the first rule
 *   that matches wins), so any keystone exit restarts the pod, as RestartPod says;
 * - a keystone exit counts as restarting the pod in place only when the first of the keystone's
 *   rules matching the exit code has the `RestartAllContainers` action and the pod's kubelet
 *   honours such rules: a kubelet with RestartAllContainersOnContainerExits on writes the
 *   `AllContainersRestarting` condition on every pod that has one (v1.37 `generatePodStatus`), so
 *   a pod without it is on a node that ignores the rule.
 */
import type { V1Container, V1ContainerRestartRule, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/** The restart rule action of KEP-5532. */
export const RESTART_ALL_CONTAINERS = 'RestartAllContainers';

/** The rule podlife puts on a keystone for RestartPod: every exit restarts all containers in place. */
export function restartInPlaceRule(): V1ContainerRestartRule {
  return { action: RESTART_ALL_CONTAINERS, exitCodes: { operator: 'NotIn', values: [] } };
}

/** The first of the container's rules that restarts all containers, if any. */
export function restartAllRule(container: V1Container | undefined): V1ContainerRestartRule | undefined {
  const rules = container?.restartPolicyRules;
  if (!Array.isArray(rules)) return undefined;
  for (const r of rules) {
    if (r?.action === RESTART_ALL_CONTAINERS && (r.exitCodes?.operator === 'In' || r.exitCodes?.operator === 'NotIn')) return r;
  }
  return undefined;
}

/** The first of the container's rules that matches `exitCode` (the kubelet's order: the first match wins). */
export function matchingRule(container: V1Container | undefined, exitCode: number): V1ContainerRestartRule | undefined {
  const rules = container?.restartPolicyRules;
  if (!Array.isArray(rules)) return undefined;
  for (const r of rules) if (r && ruleMatches(r, exitCode)) return r;
  return undefined;
}

/** The kubelet's condition while it restarts every container (KEP-5532; the type the v1.37 API names). */
export const ALL_CONTAINERS_RESTARTING = 'AllContainersRestarting';

/** True when the pod's kubelet honours RestartAllContainers rules: it then writes this condition (any status) on every pod that has one. */
export function kubeletHonoursRestartAll(pod: V1Pod): boolean {
  const conditions: unknown = pod.status?.conditions;
  return Array.isArray(conditions) && conditions.some((c: { type?: unknown } | null) => c?.type === ALL_CONTAINERS_RESTARTING);
}

/** The reason the kubelet gives the termination it records for every container it restarts in place. */
export const RESTARTING_ALL_CONTAINERS = 'RestartingAllContainers';

/**
 * True when the container's last termination is the kubelet's in-place restart (exit 137, reason
 * RestartingAllContainers) and it is not terminated now: the exit that triggered it may never have
 * reached the API server.
 */
export function restartedInPlace(status: V1ContainerStatus | undefined): boolean {
  if (!status || status.state?.terminated) return false;
  return status.lastState?.terminated?.reason === RESTARTING_ALL_CONTAINERS || status.state?.waiting?.reason === RESTARTING_ALL_CONTAINERS;
}

/** True when the rule matches `exitCode` (KEP-5307: `In` the values, or `NotIn` them). */
export function ruleMatches(rule: V1ContainerRestartRule, exitCode: number): boolean {
  const values: unknown = rule.exitCodes?.values ?? [];
  const listed = Array.isArray(values) && values.includes(exitCode);
  return rule.exitCodes?.operator === 'In' ? listed : rule.exitCodes?.operator === 'NotIn' ? !listed : false;
}

/** `NotIn []` -> "any exit code"; `In [1, 2]` -> "exit code in 1, 2". */
export function describeRule(rule: V1ContainerRestartRule): string {
  const values = Array.isArray(rule.exitCodes?.values) ? rule.exitCodes.values : [];
  const op = rule.exitCodes?.operator;
  const when = op === 'NotIn' && values.length === 0 ? 'any exit code' : `exit code ${op === 'NotIn' ? 'not in' : 'in'} ${values.join(', ') || 'nothing'}`;
  return `${rule.action} on ${when}`;
}
