/**
 * What `podlife explain` says about a pod's native lifecycle mechanisms: restart rules and
 * whether the last exit matched one, native sidecars and their state, stop signals (asked for and
 * what the kubelet reports in effect), and what podlife's webhook did that was not applied or was
 * undone (native-findings.ts).
 *
 * Guarantees: pure; one line per fact, each naming the container; nothing for a pod without
 * any of these; never throws on a partial pod.
 */
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { LifecycleOptions } from './annotations.js';
import { nativeFindings } from './native-findings.js';
import { describeRule, matchingRule, restartedInPlace } from './restart-in-place.js';

function statusesByName(pod: V1Pod): Map<string, V1ContainerStatus> {
  const out = new Map<string, V1ContainerStatus>();
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) if (s?.name) out.set(s.name, s);
  return out;
}

function stateOf(s: V1ContainerStatus | undefined): string {
  if (!s?.state) return 'no status yet';
  if (s.state.running) return `running${s.started ? ' (started)' : ''}`;
  if (s.state.terminated) return `terminated with exit code ${s.state.terminated.exitCode}`;
  return `waiting${s.state.waiting?.reason ? ` (${s.state.waiting.reason})` : ''}`;
}

function restartRuleNote(c: V1Container, s: V1ContainerStatus | undefined): string | undefined {
  const rules = c.restartPolicyRules;
  if (!Array.isArray(rules) || rules.length === 0) return undefined;
  const last = s?.state?.terminated ?? s?.lastState?.terminated;
  let match = '';
  if (restartedInPlace(s)) {
    match = '; the kubelet last restarted it in place with the whole pod (RestartAllContainers)';
  } else if (last) {
    const rule = matchingRule(c, last.exitCode);
    match = rule ? `; its last exit (${last.exitCode}) matched ${describeRule(rule)}` : `; its last exit (${last.exitCode}) matched no rule (restartPolicy ${c.restartPolicy ?? 'of the pod'} applies)`;
  }
  return `container ${c.name}: restart rules ${rules.map(describeRule).join(', ')}${match}`;
}

function stopSignalNote(c: V1Container, s: V1ContainerStatus | undefined): string | undefined {
  const asked = c.lifecycle?.stopSignal;
  if (!asked) return undefined;
  const reported = s?.stopSignal;
  const effect = reported
    ? `the kubelet reports ${reported} in effect`
    : s?.state?.running
      ? 'the kubelet reports no stop signal in effect: the node or its runtime does not apply it (ContainerStopSignals off, or a runtime without stop signals), so the default signal is sent'
      : 'not yet reported by the kubelet';
  return `container ${c.name}: stop signal ${asked}; ${effect}`;
}

/** The lines `podlife explain` prints about native mechanisms, in spec order, then the webhook's findings. */
export function nativeMechanismNotes(pod: V1Pod, options: LifecycleOptions & { stopSignals?: boolean } = {}): string[] {
  const statuses = statusesByName(pod);
  const notes: string[] = [];
  for (const c of pod.spec?.initContainers ?? []) {
    if (c?.restartPolicy !== 'Always') continue;
    const s = statuses.get(c.name);
    notes.push(`native sidecar ${c.name}: ${stateOf(s)}${s?.restartCount ? `, restarted ${s.restartCount} times` : ''}`);
  }
  for (const c of [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])]) {
    if (!c?.name) continue;
    const s = statuses.get(c.name);
    const rule = restartRuleNote(c, s);
    if (rule) notes.push(rule);
    const signal = stopSignalNote(c, s);
    if (signal) notes.push(signal);
  }
  for (const f of nativeFindings(pod, options)) notes.push(f.warning ? `warning: ${f.message}` : f.message);
  return notes;
}
