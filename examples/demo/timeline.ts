/**
 * What changed between two versions of a pod, as lines for a terminal timeline: phase, each
 * condition (status and reason), each container's state. Pure: no I/O, no clock.
 */
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

export interface PodView {
  phase: string;
  conditions: Map<string, string>;
  containers: Map<string, string>;
}

function containerState(s: V1ContainerStatus): string {
  const st = s.state;
  if (st?.running) return s.ready ? 'running, ready' : 'running';
  if (st?.terminated) return `terminated (exit ${st.terminated.exitCode}${st.terminated.reason ? `, ${st.terminated.reason}` : ''})`;
  if (st?.waiting) return `waiting (${st.waiting.reason ?? 'no reason'})`;
  return 'unknown';
}

export function viewOf(pod: V1Pod): PodView {
  const conditions = new Map<string, string>();
  for (const c of pod.status?.conditions ?? []) {
    conditions.set(c.type, `${c.status}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}`);
  }
  const containers = new Map<string, string>();
  const all = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? []), ...(pod.status?.ephemeralContainerStatuses ?? [])];
  for (const s of all) containers.set(s.name, containerState(s));
  return { phase: pod.status?.phase ?? 'Pending', conditions, containers };
}

export function changes(before: PodView | undefined, after: PodView): string[] {
  const lines: string[] = [];
  if (before?.phase !== after.phase) lines.push(`phase ${after.phase}`);
  for (const [type, value] of after.conditions) {
    if (before?.conditions.get(type) !== value) lines.push(`${type}=${value}`);
  }
  for (const [name, value] of after.containers) {
    if (before?.containers.get(name) !== value) lines.push(`container ${name}: ${value}`);
  }
  return lines;
}
