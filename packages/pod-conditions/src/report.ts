/**
 * Everything `podlife explain` shows about a pod, as data (for `--output json`) and as text.
 *
 * Guarantees: pure (pod, events and time in; no I/O); the JSON shape is stable for scripts
 * (`podlife.dev/v1alpha1` `PodExplanation`); the text ends with the one-sentence diagnosis.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { timeMs } from '@podlife/core';
import { explainPod } from './explain.js';
import type { Diagnosis } from './explain.js';
import type { PodEvent } from './events.js';
import { networkReady, sandboxReady } from './sandbox.js';
import type { Readiness } from './sandbox.js';
import { podTimeline } from './timeline.js';
import type { PodTimeline } from './timeline.js';
import { renderTimeline } from './render.js';
import type { RenderOptions } from './render.js';
import { formatDuration } from './duration.js';

/** The JSON shape of `podlife explain -o json`. */
export interface PodExplanation {
  apiVersion: 'podlife.dev/v1alpha1';
  kind: 'PodExplanation';
  pod: { namespace: string; name: string; uid?: string; node?: string; phase?: string; createdAt?: string };
  observedAt: string;
  sandbox: Readiness;
  network: { IPv4: Readiness; IPv6: Readiness };
  timeline: PodTimeline;
  diagnosis: Diagnosis;
}

/** Everything `podlife explain` shows about a pod, as data. */
export function podExplanation(pod: V1Pod, events: readonly PodEvent[] | undefined, nowMs: number): PodExplanation {
  const created = timeMs(pod.metadata?.creationTimestamp);
  const ref: PodExplanation['pod'] = { namespace: pod.metadata?.namespace ?? 'default', name: pod.metadata?.name ?? '' };
  if (pod.metadata?.uid) ref.uid = pod.metadata.uid;
  if (pod.spec?.nodeName) ref.node = pod.spec.nodeName;
  if (pod.status?.phase) ref.phase = pod.status.phase;
  if (created !== undefined) ref.createdAt = new Date(created).toISOString();
  return {
    apiVersion: 'podlife.dev/v1alpha1',
    kind: 'PodExplanation',
    pod: ref,
    observedAt: new Date(nowMs).toISOString(),
    sandbox: sandboxReady(pod, nowMs),
    network: { IPv4: networkReady(pod, 'IPv4', nowMs), IPv6: networkReady(pod, 'IPv6', nowMs) },
    timeline: podTimeline(pod, events, nowMs),
    diagnosis: explainPod(pod, events, nowMs),
  };
}

/** The explanation as terminal text: a header, the Gantt timeline, then the diagnosis. */
export function renderExplanation(x: PodExplanation, opts: RenderOptions = {}): string {
  const nowMs = Date.parse(x.observedAt);
  const created = x.pod.createdAt ? Date.parse(x.pod.createdAt) : undefined;
  const header = [
    `pod ${x.pod.namespace}/${x.pod.name}`,
    x.pod.node ? `on ${x.pod.node}` : 'not scheduled',
    x.pod.phase ?? 'no phase',
    created !== undefined ? `created ${formatDuration(nowMs - created)} ago` : '',
  ].filter(Boolean);
  const net = (['IPv4', 'IPv6'] as const).map((f) => `${f} ${x.network[f].status}`).join(', ');
  const lines = [
    header.join('  ·  '),
    `sandbox ${x.sandbox.status} (${x.sandbox.source === 'condition' ? 'condition' : 'inferred'}${x.sandbox.forMs !== undefined ? `, for ${formatDuration(x.sandbox.forMs)}` : ''})  ·  network ${net}`,
    '',
    renderTimeline(x.timeline, opts),
  ];
  if (x.timeline.stages.some((s) => s.source === 'inferred')) {
    lines.push('  * inferred: this cluster does not report the sandbox condition');
  }
  const done = ['Ready', 'ReadyAfterCrashes', 'Succeeded', 'Failed', 'Terminating'].includes(x.diagnosis.cause);
  lines.push('', `${done ? 'state' : 'stuck at'}: ${x.diagnosis.stage} (${x.diagnosis.cause})`, x.diagnosis.sentence);
  return lines.join('\n');
}
