/**
 * `podlife explain <pod>`: fetch a pod and its Events, print the explanation; with --watch, redraw
 * every second until the pod is ready or finished.
 *
 * The kubeconfig is found the way kubectl finds it (--kubeconfig, KUBECONFIG, ~/.kube/config,
 * in-cluster), `--context` picks a context, and the namespace defaults to the context's. Text
 * fits the terminal (80 columns when unknown); `-o wide` is the same text unfitted. Text from the
 * cluster (names, annotation values, termination messages, Events) is shown with control
 * characters escaped (terminal.ts); JSON and YAML carry it exact.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, resourcePath, shellQuote, sleep } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { podExplanation, podOutcome, renderExplanation } from '@podlife/pod-conditions';
import type { PodEvent, PodExplanation } from '@podlife/pod-conditions';
import { ManagedLabel } from '@podlife/keystone';
import { annotationNearMisses, isUnlabelledAnnotated, judgePolicies, missedPolicyNotes, nativeMechanismNotes, POLICY_PATH, PolicyAnnotation, policiesInForce, roleNotes, type LifecyclePolicy } from '@podlife/keystone';
import type { V1Namespace } from '@kubernetes/client-node';
import type { ExplainArgs, OutputFormat } from './args.js';
import { connect, contextNamespace } from './kubeconfig.js';
import { fitText, isData, renderData, textWidth } from './output.js';
import { terminalSafe, terminalText } from './terminal.js';

export interface Output {
  write(text: string): void;
  isTTY: boolean;
  columns: number | undefined;
}

/**
 * What `explain` adds about podlife itself, beside the pod's own story: annotations podlife
 * ignores although they look meant for it (a typo in a key, a stop spec nothing uses), a missing managed label,
 * and the native mechanisms (restart rules and their matches, native sidecars, stop signals, what
 * podlife's webhook did that was not applied or was undone).
 */
export function podlifeNotes(pod: V1Pod, policyNotes: readonly string[] = []): string[] {
  const notes = [...annotationNearMisses(pod.metadata?.annotations), ...lifecycleNotes(pod), ...policyNotes, ...nativeMechanismNotes(pod)];
  if (!isUnlabelledAnnotated(pod.metadata)) return notes;
  const label = ['kubectl', 'label', 'pod', '-n', pod.metadata?.namespace ?? 'default', pod.metadata?.name ?? '', ManagedLabel.selector].map(shellQuote).join(' ');
  return [
    `this pod has podlife lifecycle annotations but not the label ${ManagedLabel.key}: "${ManagedLabel.value}"; ` +
      `a controller run with --managed-pods-only does not see it (${label})`,
    ...notes,
  ];
}

/**
 * Why each container has its role (annotation, policy, native) and, for a pod with sidecars or
 * roles, its outcome judged by the main containers only (`podOutcome`).
 */
function lifecycleNotes(pod: V1Pod): string[] {
  const roles = roleNotes(pod);
  const o = podOutcome(pod);
  if (roles.length === 0 && o.setAside.length === 0) return [];
  return [`outcome: ${o.outcome}: ${o.reason}`, ...roles];
}

interface Explained {
  explanation: PodExplanation;
  notes: string[];
}

async function fetchExplanation(client: KubeClient, namespace: string, name: string): Promise<Explained> {
  const pod = await client.get<V1Pod>(resourcePath({ version: 'v1', resource: 'pods', namespace, name }));
  const events = await client
    .get<{ items?: PodEvent[] }>(resourcePath({ version: 'v1', resource: 'events', namespace }), {
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${name}`,
    })
    .catch(() => ({ items: [] as PodEvent[] })); // events are evidence, not a requirement (RBAC may hide them)
  return { explanation: podExplanation(pod, events.items ?? [], Date.now()), notes: podlifeNotes(pod, await policyNotesFor(client, pod)) };
}

/**
 * Whether a lifecycle policy in force would have marked this pod that carries no record of one
 * (docs/adr/0269). Best effort: without the CRD or the right to read policies and the namespace, nothing.
 */
async function policyNotesFor(client: KubeClient, pod: V1Pod): Promise<string[]> {
  const namespace = pod.metadata?.namespace;
  if (!namespace || pod.metadata?.annotations?.[PolicyAnnotation.Policies] !== undefined) return [];
  try {
    const [list, ns] = await Promise.all([client.get<{ items?: LifecyclePolicy[] }>(POLICY_PATH), client.get<V1Namespace>(resourcePath({ version: 'v1', resource: 'namespaces', name: namespace }))]);
    const labels = ns.metadata?.labels ?? {};
    const inForce = policiesInForce(judgePolicies(list.items ?? [], [{ name: namespace, labels }]));
    return missedPolicyNotes(pod, inForce, labels);
  } catch {
    return [];
  }
}

/**
 * The explanation as text (control characters escaped) or data (exact), with podlife's notes after
 * it (text) or under `notes` (data, only when there are some).
 */
export function renderExplained(explained: Explained, opts: { output: OutputFormat; compact: boolean; width: number; ascii?: boolean }): string {
  if (isData(opts.output)) {
    const { explanation, notes } = explained;
    return renderData(notes.length > 0 ? { ...explanation, notes } : explanation, opts.output, opts.compact);
  }
  const { explanation, notes } = terminalSafe(explained);
  const wide = opts.output === 'wide';
  const text = renderExplanation(explanation, { width: opts.width, ascii: opts.ascii });
  const all = notes.length > 0 ? `${text}\n${notes.map((n) => `note: ${n}`).join('\n')}` : text;
  return wide ? all : fitText(all, opts.width);
}

function settled(x: PodExplanation): boolean {
  return x.diagnosis.cause === 'Ready' || x.diagnosis.cause === 'Succeeded' || x.diagnosis.cause === 'Failed';
}

/** Runs the command; resolves with the process exit code. */
export async function runExplain(args: ExplainArgs, out: Output, signal?: AbortSignal): Promise<number> {
  const namespace = args.namespace ?? contextNamespace(args);
  const client = await connect(args);
  // -o wide draws the timeline as wide as the terminal allows (up to 160), text within it.
  const width = args.output === 'wide' ? (args.width ?? Math.min(out.columns ?? 120, 160)) : (args.width ?? Math.min(textWidth(undefined, out.columns), 120));
  const render = (x: Explained): string => renderExplained(x, { output: args.output, compact: args.watch, width, ascii: args.ascii });
  try {
    if (!args.watch) {
      out.write(`${render(await fetchExplanation(client, namespace, args.pod))}\n`);
      return 0;
    }
    for (;;) {
      const x = await fetchExplanation(client, namespace, args.pod);
      // A terminal gets the view redrawn in place; a pipe gets one snapshot per poll.
      if (out.isTTY && !isData(args.output)) out.write('\x1b[H\x1b[2J');
      out.write(`${render(x)}\n`);
      if (settled(x.explanation)) return 0;
      const stop = await sleep(1000, signal);
      if (stop) return 130;
    }
  } catch (err) {
    if (isNotFound(err)) {
      out.write(`${terminalText(`pod ${namespace}/${args.pod} not found (kubectl get pods -n ${shellQuote(namespace)} lists what exists)`)}\n`);
      return 1;
    }
    throw err;
  } finally {
    client.close();
  }
}

