/**
 * explainPod: the stage a pod is stuck in and why, in one sentence a user can act on.
 *
 * Guarantees:
 * - pure: the pod, its Events and the time are inputs; nothing is fetched;
 * - the first unmet stage in start order is the one diagnosed (a pod cannot be stuck on its
 *   readiness probe while it is unschedulable), using the container statuses first and the
 *   Events as evidence, since statuses are current and Events may be stale;
 * - every diagnosis names the object to look at (node, volume, image, container, gate) when known;
 *   the kubectl commands it suggests quote each name for a POSIX shell;
 * - a crashing container is recognised in each state the kubelet shows between restarts
 *   (terminated, waiting CrashLoopBackOff, running again), from its restart count, last state,
 *   exit codes and restart policy (crash-loop.ts), never from one waiting reason alone, and a
 *   ready pod whose container is up between crashes is said to be crashing, not simply ready;
 * - never throws on partial or malformed objects.
 */
import type { V1Container, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { shellQuote, timeMs } from '@podlife/core';
import { podCondition, readinessGateTypes } from './model.js';
import { sandboxReady } from './sandbox.js';
import { eventContainer, eventMessage, eventTimeMs, eventsOf, latestEvent } from './events.js';
import type { PodEvent } from './events.js';
import { formatDuration } from './duration.js';
import { oneLine } from './text.js';
import { containerRestartPolicy, crashLoop, describeExit, pendingRestart } from './crash-loop.js';
import type { CrashLoop, Termination } from './crash-loop.js';
import { stageReached, type StageName } from './timeline.js';

/** Why a pod is stuck (or that it is not), machine-readable. */
export type DiagnosisCause =
  | 'Ready'
  /** Ready now, but a container has crashed in its recent runs (the kubelet restarted it). */
  | 'ReadyAfterCrashes'
  | 'Succeeded'
  | 'Failed'
  | 'Terminating'
  | 'FailedScheduling'
  | 'WaitingForScheduler'
  | 'FailedMount'
  | 'FailedCreatePodSandBox'
  | 'SandboxPending'
  | 'InitContainerRunning'
  | 'InitContainerFailed'
  | 'ImagePullBackOff'
  | 'CrashLoopBackOff'
  | 'ContainerExited'
  | 'CreateContainerConfigError'
  | 'ContainerWaiting'
  | 'ReadinessProbeFailing'
  | 'ContainersNotReady'
  | 'ReadinessGateMissing'
  | 'ReadinessGateFalse'
  | 'RestartingInPlace'
  | 'Unknown';

/** Where a pod is stuck, the cause, and one sentence saying what to do. */
export interface Diagnosis {
  /** The first stage not reached, or `ready` when the pod is ready (or finished). */
  stage: StageName;
  cause: DiagnosisCause;
  /** One actionable sentence. */
  sentence: string;
  /** Container, volume, gate or node the sentence is about. */
  subject?: string;
  /** Epoch ms since when the pod has been in this situation, when known. */
  sinceMs?: number;
  /** For a crashing container: how often the kubelet restarted it. */
  restarts?: number;
  /** For a crashing container: its most recent exit code. */
  exitCode?: number;
}

const maxDetail = 240;

function detail(text: string | undefined): string {
  return oneLine(text, maxDetail);
}

/** The pod as kubectl arguments, each quoted for the shell: `-n shop web-0`. */
function podRef(pod: V1Pod): string {
  const ns = pod.metadata?.namespace;
  const name = shellQuote(pod.metadata?.name ?? '<unnamed>');
  return ns ? `-n ${shellQuote(ns)} ${name}` : name;
}

function diag(stage: StageName, cause: DiagnosisCause, sentence: string, extra: Partial<Diagnosis> = {}): Diagnosis {
  const d: Diagnosis = { stage, cause, sentence };
  if (extra.subject !== undefined) d.subject = extra.subject;
  if (extra.sinceMs !== undefined) d.sinceMs = extra.sinceMs;
  if (extra.restarts !== undefined) d.restarts = extra.restarts;
  if (extra.exitCode !== undefined) d.exitCode = extra.exitCode;
  return d;
}

function forText(sinceMs: number | undefined, nowMs: number): string {
  return sinceMs === undefined ? '' : ` for ${formatDuration(Math.max(0, nowMs - sinceMs))}`;
}

/** Why the pod is where it is. `events` are the pod's Events (any order, any incarnation). */
export function explainPod(pod: V1Pod, events: readonly PodEvent[] | undefined, nowMs: number): Diagnosis {
  const evs = eventsOf(pod, events);
  const phase = pod.status?.phase;

  if (pod.metadata?.deletionTimestamp) {
    const since = timeMs(pod.metadata.deletionTimestamp);
    const grace = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds;
    return diag(
      'ready',
      'Terminating',
      `The pod is being deleted${grace !== undefined ? ` (grace period ${grace}s)` : ''}; if it stays, look for finalizers or an unreachable node.`,
      since !== undefined ? { sinceMs: since } : {},
    );
  }
  if (phase === 'Succeeded') return diag('ready', 'Succeeded', 'The pod has completed: every container exited successfully.');
  if (phase === 'Failed') {
    const why = pod.status?.reason ? ` (${pod.status.reason}${pod.status.message ? `: ${detail(pod.status.message)}` : ''})` : '';
    const bad = firstFailedContainer(pod);
    return diag(
      'ready',
      'Failed',
      bad
        ? `The pod has failed${why}: container ${bad.name} exited with code ${bad.code}; see kubectl logs ${podRef(pod)} -c ${shellQuote(bad.name)}.`
        : `The pod has failed${why}.`,
      bad ? { subject: bad.name } : {},
    );
  }

  return (
    restartingInPlace(pod, nowMs) ??
    scheduling(pod, evs, nowMs) ??
    sandbox(pod, evs, nowMs) ??
    initialization(pod, evs, nowMs) ??
    containers(pod, evs, nowMs) ??
    gates(pod, evs, nowMs) ??
    readyAfterCrashes(pod, nowMs) ??
    diag('ready', 'Ready', 'The pod is ready.', readySince(pod))
  );
}

/**
 * A ready pod whose container is up between two crashes (running and ready, restarted, its last
 * run failed less than the back-off reset ago) is not simply ready: in a crash loop each run is
 * ready for a moment before it exits again.
 */
function readyAfterCrashes(pod: V1Pod, nowMs: number): Diagnosis | undefined {
  for (const c of statuses(pod.spec?.containers, pod.status?.containerStatuses)) {
    const loop = crashLoop(pod, c.spec, c.status, { nowMs, ready: true });
    if (loop?.phase !== 'runningAgain') continue;
    const logs = `kubectl logs ${podRef(pod)} -c ${shellQuote(loop.container)} --previous`;
    return diag(
      'ready',
      'ReadyAfterCrashes',
      `The pod is ready now, but container ${loop.container} has been crashing: it last exited with ${describeExit(loop.last)}${ranFor(loop.last)} and has restarted ${plural(loop.restarts, 'time')}; it is up again${forText(loop.runningSinceMs, nowMs)}, see ${logs}.`,
      {
        subject: loop.container,
        restarts: loop.restarts,
        ...(loop.last.exitCode >= 0 ? { exitCode: loop.last.exitCode } : {}),
        ...(loop.runningSinceMs !== undefined ? { sinceMs: loop.runningSinceMs } : {}),
      },
    );
  }
  return undefined;
}

/** KEP-5532: the kubelet restarts every container in place while AllContainersRestarting is True. */
function restartingInPlace(pod: V1Pod, nowMs: number): Diagnosis | undefined {
  const c = podCondition(pod, 'AllContainersRestarting');
  if (c?.status !== 'True') return undefined;
  const since = timeMs(c.lastTransitionTime);
  const exited = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].find((s) => s.state?.terminated && s.state.terminated.exitCode !== undefined);
  const trigger = exited ? `; container ${exited.name} exited with code ${exited.state?.terminated?.exitCode}, which its RestartAllContainers restart rule matches` : '';
  return diag(
    'initialized',
    'RestartingInPlace',
    `The kubelet is restarting every container of the pod in place (AllContainersRestarting${forText(since, nowMs)})${trigger}; the pod keeps its UID, IP and volumes, and its init containers run again.`,
    { ...(exited ? { subject: exited.name } : {}), ...(since !== undefined ? { sinceMs: since } : {}) },
  );
}

function readySince(pod: V1Pod): Partial<Diagnosis> {
  const t = timeMs(podCondition(pod, 'Ready')?.lastTransitionTime);
  return t === undefined ? {} : { sinceMs: t };
}

function scheduling(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  if (stageReached(pod, 'scheduled', evs)) return undefined;
  const c = podCondition(pod, 'PodScheduled');
  const e = latestEvent(evs, ['FailedScheduling']);
  const since = timeMs(c?.lastTransitionTime) ?? timeMs(pod.metadata?.creationTimestamp);
  const msg = c?.status === 'False' && c.message ? c.message : e ? eventMessage(e) : undefined;
  if (msg !== undefined || c?.reason === 'Unschedulable') {
    return diag(
      'scheduled',
      'FailedScheduling',
      `The scheduler cannot place the pod${forText(since, nowMs)}: ${detail(msg ?? c?.reason)}; free capacity or relax its requests, node selector, affinity or tolerations.`,
      since !== undefined ? { sinceMs: since } : {},
    );
  }
  const scheduler = pod.spec?.schedulerName ?? 'default-scheduler';
  return diag(
    'scheduled',
    'WaitingForScheduler',
    `No scheduler has placed the pod yet${forText(since, nowMs)}; check that scheduler "${scheduler}" is running.`,
    since !== undefined ? { sinceMs: since } : {},
  );
}

function sandbox(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  // The timeline's answer: what it shows in progress is what is diagnosed.
  if (stageReached(pod, 'sandbox', evs)) return undefined;
  const s = sandboxReady(pod, nowMs);
  const node = pod.spec?.nodeName ?? '';
  const mount = latestEvent(evs, ['FailedMount', 'FailedAttachVolume']);
  // A False condition never says why the sandbox fails (1.37 says only why one is needed): these Events do.
  const sb = latestEvent(evs, ['FailedCreatePodSandBox', 'NetworkNotReady']);
  const latest = mount && sb ? (eventTimeMs(mount) >= eventTimeMs(sb) ? mount : sb) : (mount ?? sb);
  const since = s.sinceMs ?? timeMs(podCondition(pod, 'PodScheduled')?.lastTransitionTime);
  if (latest && latest === mount) {
    const volume = /volume "([^"]+)"/.exec(eventMessage(latest))?.[1];
    return diag(
      'sandbox',
      'FailedMount',
      `${volume ? `Volume "${volume}"` : 'A volume'} cannot be ${latest.reason === 'FailedAttachVolume' ? 'attached' : 'mounted'} on node ${node}: ${detail(eventMessage(latest))}; check that the Secret, ConfigMap or PersistentVolumeClaim it names exists and is reachable from that node.`,
      { subject: volume ?? node, ...(since !== undefined ? { sinceMs: since } : {}) },
    );
  }
  if (latest) {
    return diag(
      'sandbox',
      'FailedCreatePodSandBox',
      `The container runtime on node ${node} cannot create the pod sandbox: ${detail(eventMessage(latest))}; check the network plugin (CNI) and runtime on that node.`,
      { subject: node, ...(since !== undefined ? { sinceMs: since } : {}) },
    );
  }
  if (s.source === 'condition' || s.status === 'False') {
    return diag(
      'sandbox',
      'SandboxPending',
      `The kubelet on node ${node} has not finished the pod sandbox and its network${forText(since, nowMs)} and reports no error; check the kubelet and CNI logs on that node.`,
      { subject: node, ...(since !== undefined ? { sinceMs: since } : {}) },
    );
  }
  // No condition, no Event, no container past ContainerCreating, no IP: nothing says the sandbox is up.
  return diag(
    'sandbox',
    'SandboxPending',
    `The kubelet on node ${node} has not started a container of the pod${forText(since, nowMs)}, and this cluster does not report the sandbox condition, so the sandbox and its network may still be in progress; see kubectl describe pod ${podRef(pod)} and the kubelet's log on that node.`,
    { subject: node, ...(since !== undefined ? { sinceMs: since } : {}) },
  );
}

interface Status {
  spec: V1Container | undefined;
  status: V1ContainerStatus | undefined;
  name: string;
}

function statuses(specs: V1Container[] | undefined, list: V1ContainerStatus[] | undefined): Status[] {
  const byName = new Map((list ?? []).map((s) => [s.name, s]));
  return (specs ?? []).map((spec) => ({ spec, status: byName.get(spec.name), name: spec.name }));
}

function initialization(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  if (stageReached(pod, 'initialized', evs)) return undefined;
  return initContainerProblem(pod, evs, nowMs) ?? notReported(pod, 'initialized', 'Initialized', nowMs);
}

/** A stage whose condition is not True while nothing in the pod's statuses says why. */
function notReported(pod: V1Pod, stage: StageName, type: string, nowMs: number): Diagnosis {
  const c = podCondition(pod, type);
  const since = timeMs(c?.lastTransitionTime);
  const state = c ? ` (${type} is ${c.status}${c.reason ? `, ${c.reason}` : ''})` : '';
  return diag(
    stage,
    'Unknown',
    `The kubelet has not reported the pod ${type} yet${state}${forText(since, nowMs)} and its container statuses show no cause; wait for its next status update, or see kubectl describe pod ${podRef(pod)}.`,
    since !== undefined ? { sinceMs: since } : {},
  );
}

function initContainerProblem(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  for (const c of statuses(pod.spec?.initContainers, pod.status?.initContainerStatuses)) {
    // A native sidecar (restartPolicy Always) counts once started.
    const sidecar = c.spec?.restartPolicy === 'Always';
    const st = c.status;
    if (st?.state?.terminated?.exitCode === 0 && !sidecar) continue;
    if (sidecar && st?.started) continue;
    const waiting = waitingProblem(pod, c, evs, nowMs, 'initialized', 'init container', true);
    if (waiting) return waiting;
    const crash = crashProblem(pod, c, nowMs, 'initialized', 'init container', true);
    if (crash) return crash;
    const term = st?.state?.terminated ?? st?.lastState?.terminated;
    if (term && term.exitCode !== 0) {
      return diag(
        'initialized',
        'InitContainerFailed',
        `Init container ${c.name} failed with exit code ${term.exitCode}${term.reason ? ` (${term.reason})` : ''} after ${st?.restartCount ?? 0} restarts; see kubectl logs ${podRef(pod)} -c ${shellQuote(c.name)}.`,
        { subject: c.name },
      );
    }
    const started = timeMs(st?.state?.running?.startedAt);
    if (st?.state?.running) {
      return diag(
        'initialized',
        'InitContainerRunning',
        `Init container ${c.name} is still running${forText(started, nowMs)}; the app containers start when it completes, see kubectl logs ${podRef(pod)} -c ${shellQuote(c.name)}.`,
        { subject: c.name, ...(started !== undefined ? { sinceMs: started } : {}) },
      );
    }
    return undefined;
  }
  return undefined;
}

function waitingProblem(
  pod: V1Pod,
  c: Status,
  evs: PodEvent[],
  nowMs: number,
  stage: StageName,
  what: string,
  init = false,
): Diagnosis | undefined {
  const waiting = c.status?.state?.waiting;
  const reason = waiting?.reason;
  if (!reason) return undefined;
  const image = c.spec?.image ?? c.status?.image ?? '<no image>';
  if (reason === 'ErrImageNeverPull') {
    return diag(
      stage,
      'ImagePullBackOff',
      `Image "${image}" of ${what} ${c.name} is not on node ${pod.spec?.nodeName ?? '<none>'} and its imagePullPolicy is Never (ErrImageNeverPull); load the image onto that node or allow the kubelet to pull it.`,
      { subject: c.name },
    );
  }
  if (reason === 'ImagePullBackOff' || reason === 'ErrImagePull' || reason === 'InvalidImageName') {
    const failed = evs.filter((e) => e.reason === 'Failed' && eventContainer(e) === c.name).at(-1);
    const why = detail(waiting?.message ?? (failed ? eventMessage(failed) : reason));
    return diag(
      stage,
      'ImagePullBackOff',
      `Image "${image}" of ${what} ${c.name} cannot be pulled (${reason}: ${why}); check the image name and tag, registry access and imagePullSecrets.`,
      { subject: c.name },
    );
  }
  if (reason === 'CrashLoopBackOff') {
    const loop = crashLoop(pod, c.spec, c.status, { init, nowMs });
    if (loop) return crashDiagnosis(pod, loop, stage, what, nowMs);
  }
  if (reason === 'CreateContainerConfigError' || reason === 'CreateContainerError') {
    return diag(
      stage,
      'CreateContainerConfigError',
      `${capitalize(what)} ${c.name} cannot be created: ${detail(waiting?.message ?? reason)}; create the missing ConfigMap or Secret key or fix the container spec.`,
      { subject: c.name },
    );
  }
  if (reason === 'RunContainerError') {
    const restarts = c.status?.restartCount ?? 0;
    return diag(
      stage,
      'CreateContainerConfigError',
      `${capitalize(what)} ${c.name} cannot start (RunContainerError: ${detail(waiting?.message ?? reason)})${restarts > 0 ? ` and has been retried ${plural(restarts, 'time')}` : ''}; fix its command, image or security settings.`,
      { subject: c.name, restarts },
    );
  }
  if (reason === 'ContainerCreating' || reason === 'PodInitializing') return undefined;
  return diag(
    stage,
    'ContainerWaiting',
    `${capitalize(what)} ${c.name} is waiting (${reason}${waiting?.message ? `: ${detail(waiting.message)}` : ''}); see kubectl describe pod ${podRef(pod)}.`,
    { subject: c.name },
  );
}

/** A container between two restarts (terminated, restart pending), or about to be restarted the first time. */
function crashProblem(pod: V1Pod, c: Status, nowMs: number, stage: StageName, what: string, init = false): Diagnosis | undefined {
  const loop = crashLoop(pod, c.spec, c.status, { init, nowMs });
  if (loop && loop.phase === 'exited') return crashDiagnosis(pod, loop, stage, what, nowMs);
  const first = pendingRestart(pod, c.spec, c.status, init);
  if (!first) return undefined;
  return diag(
    stage,
    'ContainerExited',
    `${capitalize(what)} ${c.name} exited with ${describeExit(first)}${ranFor(first)} and the kubelet restarts it (restartPolicy ${containerRestartPolicy(pod, c.spec, init)}); ${mustKeepRunning(first, pod)}see kubectl logs ${podRef(pod)} -c ${shellQuote(c.name)}.`,
    { subject: c.name, restarts: 0, exitCode: first.exitCode, ...(first.finishedAtMs !== undefined ? { sinceMs: first.finishedAtMs } : {}) },
  );
}

/** How long the run lasted; the kubelet's times have one-second resolution, so no less than `<1s`. */
function ranFor(t: Termination): string {
  if (t.startedAtMs === undefined || t.finishedAtMs === undefined) return '';
  const ms = t.finishedAtMs - t.startedAtMs;
  return ` after running ${ms < 1000 ? '<1s' : formatDuration(ms)}`;
}

/** Exit 0 under Always is a loop too: say what the user meant to write. */
function mustKeepRunning(t: Termination, pod: V1Pod): string {
  return t.exitCode === 0 && (pod.spec?.restartPolicy ?? 'Always') === 'Always' ? 'a container under restartPolicy Always must keep running (use a Job for work that ends), ' : '';
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One sentence for a crash loop, whichever of its three states the kubelet shows now. */
function crashDiagnosis(pod: V1Pod, loop: CrashLoop, stage: StageName, what: string, nowMs: number): Diagnosis {
  const name = loop.container;
  const exit = `${describeExit(loop.last)}${ranFor(loop.last)}`;
  const restarted = `has restarted ${plural(loop.restarts, 'time')}`;
  const logs = `kubectl logs ${podRef(pod)} -c ${shellQuote(name)}`;
  const keep = mustKeepRunning(loop.last, pod);
  const sentence =
    loop.phase === 'exited'
      ? `it exited with ${exit} and ${restarted}; ${keep}the kubelet restarts it after a back-off, see ${logs}.`
      : loop.phase === 'backingOff'
        ? `it last exited with ${exit} and ${restarted}; ${keep}the kubelet waits ${loop.backOff ?? 'a back-off'} before the next restart, see ${logs} --previous.`
        : `it last exited with ${exit} and ${restarted}; ${keep}it is running again${forText(loop.runningSinceMs, nowMs)}, see ${logs} --previous.`;
  const first = [loop.previous?.finishedAtMs, loop.last.finishedAtMs].filter((t): t is number => t !== undefined);
  return diag(stage, 'CrashLoopBackOff', `${capitalize(what)} ${name} keeps crashing: ${sentence}`, {
    subject: name,
    restarts: loop.restarts,
    ...(loop.last.exitCode >= 0 ? { exitCode: loop.last.exitCode } : {}),
    ...(first.length > 0 ? { sinceMs: Math.min(...first) } : {}),
  });
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function containers(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  if (stageReached(pod, 'containersReady', evs)) return undefined;
  return containerProblem(pod, evs, nowMs) ?? notReported(pod, 'containersReady', 'ContainersReady', nowMs);
}

function containerProblem(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  const all = statuses(pod.spec?.containers, pod.status?.containerStatuses);
  for (const c of all) {
    const problem = waitingProblem(pod, c, evs, nowMs, 'containersReady', 'container') ?? crashProblem(pod, c, nowMs, 'containersReady', 'container');
    if (problem) return problem;
  }
  const notReady = all.filter((c) => c.status?.ready !== true);
  for (const c of notReady) {
    if (!c.status?.state?.running) continue;
    const unhealthy = evs
      .filter((e) => e.reason === 'Unhealthy' && eventContainer(e) === c.name && /readiness probe/i.test(eventMessage(e)))
      .at(-1);
    const startedMs = timeMs(c.status.state.running.startedAt);
    // A probe failing in the current run explains more than the crashes before it.
    const probeNow = unhealthy !== undefined && (startedMs === undefined || eventTimeMs(unhealthy) >= startedMs);
    const again = probeNow ? undefined : crashLoop(pod, c.spec, c.status, { nowMs });
    if (again) return crashDiagnosis(pod, again, 'containersReady', 'container', nowMs);
    if (unhealthy) {
      return diag(
        'containersReady',
        'ReadinessProbeFailing',
        `Container ${c.name} is running but its readiness probe fails (${detail(eventMessage(unhealthy))}); fix what the probe checks or the probe itself.`,
        { subject: c.name, sinceMs: eventTimeMs(unhealthy) },
      );
    }
    if (c.spec?.readinessProbe) {
      const started = timeMs(c.status.state.running.startedAt);
      return diag(
        'containersReady',
        'ReadinessProbeFailing',
        `Container ${c.name} has been running${forText(started, nowMs)} but its readiness probe has not passed yet; check what the probe checks.`,
        { subject: c.name, ...(started !== undefined ? { sinceMs: started } : {}) },
      );
    }
  }
  const pending = notReady[0];
  if (pending) {
    const since = timeMs(podCondition(pod, 'ContainersReady')?.lastTransitionTime);
    return diag(
      'containersReady',
      'ContainersNotReady',
      `Container ${pending.name} is not ready yet${forText(since, nowMs)}${pending.status?.state?.waiting?.reason ? ` (${pending.status.state.waiting.reason})` : ''}; see kubectl describe pod ${podRef(pod)}.`,
      { subject: pending.name, ...(since !== undefined ? { sinceMs: since } : {}) },
    );
  }
  return undefined;
}

function gates(pod: V1Pod, evs: PodEvent[], nowMs: number): Diagnosis | undefined {
  if (stageReached(pod, 'ready', evs)) return undefined;
  for (const gate of readinessGateTypes(pod)) {
    const c = podCondition(pod, gate);
    if (!c) {
      return diag(
        'ready',
        'ReadinessGateMissing',
        `Readiness gate "${gate}" has no condition on the pod; the controller that owns it is not running or does not watch this pod.`,
        { subject: gate },
      );
    }
    if (c.status !== 'True') {
      const since = timeMs(c.lastTransitionTime);
      const why = c.reason || c.message ? ` (${[c.reason, detail(c.message)].filter(Boolean).join(': ')})` : '';
      return diag(
        'ready',
        'ReadinessGateFalse',
        `Readiness gate "${gate}" is ${c.status}${why}${forText(since, nowMs)}; the controller that owns it decides when it turns True.`,
        { subject: gate, ...(since !== undefined ? { sinceMs: since } : {}) },
      );
    }
  }
  if (podCondition(pod, 'ContainersReady')?.status === 'True') {
    return diag('ready', 'Unknown', 'Containers are ready but the kubelet has not reported the pod Ready yet; wait for its next status update.');
  }
  return notReported(pod, 'ready', 'Ready', nowMs);
}

function firstFailedContainer(pod: V1Pod): { name: string; code: number } | undefined {
  for (const cs of pod.status?.containerStatuses ?? []) {
    const t = cs.state?.terminated;
    if (t && t.exitCode !== 0) return { name: cs.name, code: t.exitCode };
  }
  return undefined;
}
