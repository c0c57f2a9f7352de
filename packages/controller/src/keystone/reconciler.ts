/**
 * The keystone reconciler: applies `evaluatePod` to cached pods and carries decisions out with
 * keystone's actuators (`runDecision`).
 *
 * Guarantees:
 * - level-based: a reconcile reads the pod from the cache (or the newer copy its own last status
 *   write returned) and never trusts the event that woke it;
 * - never acts on a pod without podlife annotations or outside the scoped namespaces;
 * - conditions are merged by type through pods/status (strategic merge), written only when they
 *   change, and their Events are recorded only then — repeated reconciles repeat nothing;
 * - a stop sequence runs in the background (it waits for containers for up to the grace period),
 *   at most one per pod; its progress goes to the pod's conditions before it waits, so a
 *   restarted or failed-over controller resumes it without repeating a stop;
 * - `dryRun` logs each new decision once and writes nothing;
 * - API failures are retried with the controller's backoff; nothing here throws on bad input.
 */
import type { V1Pod, V1PodCondition } from '@kubernetes/client-node';
import {
  ContentType,
  conditionsPatch,
  isNotFound,
  resourcePath,
  setCondition,
  silentLogger,
  splitKey,
  timeMs,
  type KubeClient,
  type KubeObject,
  type Logger,
  type ReconcileResult,
  type Reconciler,
} from '@podlife/core';
import {
  ConditionType,
  DEFAULT_MIN_STAGE_MS,
  NO_HANDLER_EXIT,
  createPodApi,
  ephemeralName,
  evaluatePod,
  readLifecycle,
  reportEvent,
  runDecision,
  type ActionReport,
  type Decision,
  type KeystoneConfig,
  type PodApi,
  type PodExecApi,
  type StatusUpdate,
  type WaitOutcome,
} from '@podlife/keystone';
import type { ControllerConfig } from '../options/config-file.js';
import { KeystoneMetrics, type StopStrategyLabel } from './metrics.js';
import { keepLifecycleFields } from './transform.js';
import type { Registry } from 'prom-client';

/** Where Events go: core's EventRecorder has this shape. */
export interface EventSink {
  event(regarding: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string, action?: string): Promise<void>;
}

export interface KeystoneReconcilerOptions {
  client: KubeClient;
  /** Reads a pod from the informer cache by "namespace/name". */
  getPod(key: string): V1Pod | undefined;
  events?: EventSink;
  /** pods/exec transport; without one the exec strategy is skipped (ephemeral only). */
  exec?: PodExecApi;
  /** Replaces the REST actuator API (tests and benchmarks observe actions through it). */
  pods?: PodApi;
  config?: Partial<ControllerConfig>;
  dryRun?: boolean;
  logger?: Logger;
  registry?: Registry;
  now?: () => number;
  /** Least time a stop stage and a SIGKILL are given; default 2000 ms. */
  minStageMs?: number;
}

interface Running {
  uid: string;
  done: Promise<void>;
}

function podKey(pod: KubeObject): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

function newerResourceVersion(a: string | undefined, b: string | undefined): boolean {
  // resourceVersions are opaque, but etcd's are integers; when they are not, trust the cache.
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) > BigInt(b);
}

/** The stop container for `container` exited saying its PID 1 has no handler for the signal. */
function stopNotReceivable(pod: V1Pod | undefined, container: string): boolean {
  const name = ephemeralName(container, false);
  const s = pod?.status?.ephemeralContainerStatuses?.find((c) => c.name === name);
  return s?.state?.terminated?.exitCode === NO_HANDLER_EXIT;
}

/** Not running now: terminated, or waiting to restart after a termination. */
function containerStopped(pod: V1Pod | undefined, container: string): boolean {
  if (!pod) return true;
  const s = pod.status?.containerStatuses?.find((c) => c.name === container);
  if (!s) return false;
  return s.state?.terminated !== undefined || (s.state?.waiting !== undefined && s.lastState?.terminated !== undefined);
}

export class KeystoneReconciler implements Reconciler {
  private readonly opts: KeystoneReconcilerOptions;
  private readonly log: Logger;
  private readonly metrics: KeystoneMetrics | undefined;
  private readonly pods: PodApi;
  private readonly keystoneConfig: KeystoneConfig;
  private readonly namespaces: ReadonlySet<string>;
  private readonly now: () => number;
  /** The pod each of our status writes returned, used until the cache catches up. */
  private readonly fresh = new Map<string, V1Pod>();
  private readonly running = new Map<string, Running>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly dryRunSeen = new Map<string, string>();
  /** Set by the controller factory: schedules a key for another pass. */
  enqueue: (key: string) => void = () => undefined;

  constructor(opts: KeystoneReconcilerOptions) {
    this.opts = opts;
    this.log = opts.logger ?? silentLogger();
    this.metrics = opts.registry ? new KeystoneMetrics(opts.registry) : undefined;
    this.pods = opts.pods ?? createPodApi(opts.client);
    this.now = opts.now ?? Date.now;
    const c = opts.config ?? {};
    this.keystoneConfig = {
      keystoneLimit: c.keystoneLimit ?? 1,
      execCommands: c.execCommands ?? {},
      strategy: c.defaultStrategy === 'ephemeral' ? 'ephemeral' : 'exec',
      // `exec` means exec only: no ephemeral fallback.
      ephemeralImage: c.defaultStrategy === 'exec' ? undefined : c.ephemeralContainerImage,
      ...(c.ephemeralContainerSecurityContext ? { ephemeralSecurityContext: c.ephemeralContainerSecurityContext } : {}),
      ...(c.ephemeralContainerMatchTargetUser !== undefined ? { ephemeralMatchTargetUser: c.ephemeralContainerMatchTargetUser } : {}),
      minStageMs: opts.minStageMs ?? DEFAULT_MIN_STAGE_MS,
    };
    this.namespaces = new Set(c.namespaces ?? []);
  }

  /** Whether a pod's namespace is one this reconciler may act in. */
  inScope(namespace: string | undefined): boolean {
    return this.namespaces.size === 0 || (namespace !== undefined && this.namespaces.has(namespace));
  }

  /** Tell waiting stop sequences that a pod changed (the factory calls this on informer events). */
  podChanged(pod: KubeObject): void {
    const set = this.waiters.get(podKey(pod));
    if (set) for (const wake of [...set]) wake();
  }

  /** Resolves once every background stop sequence has ended (they end early when aborted). */
  async drain(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const pod = this.current(key);
    if (!pod) {
      this.fresh.delete(key);
      this.dryRunSeen.delete(key);
      return;
    }
    if (!this.inScope(pod.metadata?.namespace)) return;
    const nowMs = this.now();
    const decision = evaluatePod(pod, { ...this.keystoneConfig, nowMs });
    if (decision.action === 'none' && decision.updates.length === 0) {
      if (decision.why !== 'not-ours') this.dryRunSeen.delete(key);
      return;
    }
    if (this.opts.dryRun) return this.logDryRun(key, pod, decision);

    const running = this.running.get(key);
    if (running && running.uid === pod.metadata?.uid) return; // the sequence in flight owns this pod

    switch (decision.action) {
      case 'none':
      case 'invalid':
        await this.writeUpdates(pod, decision.updates);
        return;
      case 'delete':
      case 'phase': {
        await this.writeUpdates(pod, decision.updates);
        const result = await runDecision(pod, decision, this.context(pod, signal));
        if (!result.ok) throw new Error(`${decision.action} failed for pod ${key}; retrying`);
        return;
      }
      case 'stop': {
        // The first stop goes out without waiting for this write (reaction time is one round
        // trip less); the sequence's own progress writes are ordered after it, so the record
        // of issued stops can never be overwritten by this older one.
        const initial = this.writeUpdates(pod, decision.updates);
        this.startStop(key, pod, decision, signal, initial);
        await initial;
        return;
      }
    }
  }

  private current(key: string): V1Pod | undefined {
    const cached = this.opts.getPod(key);
    const fresh = this.fresh.get(key);
    if (!cached) return undefined;
    if (fresh && fresh.metadata?.uid === cached.metadata?.uid && newerResourceVersion(fresh.metadata?.resourceVersion, cached.metadata?.resourceVersion)) {
      return fresh;
    }
    this.fresh.delete(key);
    return cached;
  }

  private startStop(key: string, pod: V1Pod, decision: Decision & { action: 'stop' }, signal: AbortSignal, after: Promise<void>): void {
    const uid = pod.metadata?.uid ?? '';
    const done = (async () => {
      try {
        await runDecision(pod, decision, this.context(pod, signal, after));
      } catch (err) {
        this.log.error({ pod: key, err }, 'stop sequence failed');
      } finally {
        this.running.delete(key);
        // One more pass: records SidecarsStopped=True, or picks up what changed meanwhile.
        if (!signal.aborted) this.enqueue(key);
      }
    })();
    this.running.set(key, { uid, done });
  }

  private context(pod: V1Pod, signal: AbortSignal, after: Promise<void> = Promise.resolve()) {
    const key = podKey(pod);
    return {
      pods: this.pods,
      exec: this.opts.exec,
      config: this.keystoneConfig,
      now: this.now,
      signal,
      waitForStopped: (container: string, untilMs: number, s?: AbortSignal) => this.waitForStopped(key, container, untilMs, s ?? signal),
      report: (r: ActionReport) => this.report(pod, r),
      progress: async (update: StatusUpdate) => {
        await after.catch(() => undefined);
        await this.writeUpdates(this.current(key) ?? pod, [update]);
      },
    };
  }

  private waitForStopped(key: string, container: string, untilMs: number, signal: AbortSignal): Promise<WaitOutcome> {
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const check = (): void => {
        const pod = this.current(key);
        // A recorded terminal phase hands the rest to the kubelet's termination (docs/adr/0101).
        const phase = pod?.status?.phase;
        const gone = !pod || (pod.metadata?.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) || phase === 'Succeeded' || phase === 'Failed';
        if (containerStopped(pod, container) || gone) finish(true);
        else if (stopNotReceivable(pod, container)) finish('no-handler');
        else if (this.now() >= untilMs || signal.aborted) finish(false);
      };
      const finish = (stopped: WaitOutcome): void => {
        clearTimeout(timer);
        clearInterval(poll);
        signal.removeEventListener('abort', check);
        set.delete(check);
        if (set.size === 0) this.waiters.delete(key);
        resolve(stopped);
      };
      const timer = setTimeout(check, Math.max(0, untilMs - this.now()));
      // A slow safety net for a missed event; informer updates call `check` at once.
      const poll = setInterval(check, 1000);
      signal.addEventListener('abort', check, { once: true });
      set.add(check);
      check();
    });
  }

  private report(pod: V1Pod, r: ActionReport): void {
    if (r.kind === 'stop-issued') this.metrics?.stop(r.method, r.ok ? 'success' : 'failure');
    if ((r.kind === 'deleted' || r.kind === 'phase' || r.kind === 'escalated') && r.outcome !== 'already') {
      const strategy: StopStrategyLabel = r.kind === 'phase' ? 'phase' : 'delete';
      this.metrics?.stop(strategy, r.outcome === 'done' ? 'success' : 'failure');
    }
    this.log.info({ pod: podKey(pod), ...r }, `keystone action: ${r.kind}`);
    const event = reportEvent(r);
    if (event) this.recordEvent(pod, event.type, event.reason, event.note, event.action);
  }

  private recordEvent(pod: V1Pod, type: 'Normal' | 'Warning', reason: string, note: string, action: string): void {
    const sink = this.opts.events;
    if (!sink) return;
    sink.event(pod, type, reason, note, action).catch((err: unknown) => this.log.warn({ pod: podKey(pod), reason, err }, 'event not recorded'));
  }

  /** Merges conditions into pods/status; records their Events only for conditions that changed. */
  private async writeUpdates(pod: V1Pod, updates: readonly StatusUpdate[]): Promise<void> {
    if (updates.length === 0) return;
    const nowMs = this.now();
    let conditions: V1PodCondition[] = pod.status?.conditions ?? [];
    const changed: { update: StatusUpdate; condition: V1PodCondition }[] = [];
    for (const update of updates) {
      const r = setCondition<V1PodCondition>(conditions, update.condition, nowMs);
      conditions = r.conditions;
      if (r.changed) changed.push({ update, condition: r.condition });
    }
    if (changed.length === 0) return;
    const { namespace, name } = splitKey(podKey(pod));
    const path = resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource: 'status' });
    let written: V1Pod;
    try {
      written = await this.opts.client.patch<V1Pod>(path, conditionsPatch(changed.map((c) => c.condition)), ContentType.StrategicMergePatch);
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (written.metadata?.uid === pod.metadata?.uid) this.fresh.set(podKey(pod), keepLifecycleFields(written));
    for (const { update, condition } of changed) {
      if (condition.type === ConditionType.LifecycleValid && condition.status === 'False') this.metrics?.invalidPod();
      if (condition.type === ConditionType.SidecarsStopped && condition.status === 'True') this.observeLatency(written);
      for (const e of update.events) this.recordEvent(pod, e.type, e.reason, e.note, e.action);
    }
  }

  /** Trigger's finishedAt (first keystone, else the last main) to the last stopped container's finishedAt. */
  private observeLatency(pod: V1Pod): void {
    const reading = readLifecycle(pod, this.keystoneConfig);
    if (reading.kind !== 'valid') return;
    const finished = (name: string): number | undefined => {
      const s = pod.status?.containerStatuses?.find((c) => c.name === name);
      return timeMs((s?.state?.terminated ?? s?.lastState?.terminated)?.finishedAt);
    };
    const { keystones, containers } = reading.lifecycle;
    let firedAt: number;
    let lastStopped: number;
    if (keystones.length > 0) {
      // Rule K fires on the first keystone to finish; everything else is stopped.
      let trigger: string | undefined;
      firedAt = Infinity;
      for (const k of keystones) {
        const at = finished(k.name);
        if (at !== undefined && at < firedAt) [firedAt, trigger] = [at, k.name];
      }
      lastStopped = Math.max(...containers.filter((c) => c.name !== trigger).map((c) => finished(c.name) ?? -Infinity));
    } else {
      firedAt = Math.max(...containers.filter((c) => c.role !== 'sidecar').map((c) => finished(c.name) ?? -Infinity));
      lastStopped = Math.max(...containers.filter((c) => c.role === 'sidecar').map((c) => finished(c.name) ?? -Infinity));
    }
    if (Number.isFinite(firedAt) && Number.isFinite(lastStopped)) this.metrics?.stopLatency((lastStopped - firedAt) / 1000);
  }

  private logDryRun(key: string, pod: V1Pod, decision: Decision): void {
    const summary = JSON.stringify({
      action: decision.action,
      ...(decision.action === 'stop' ? { rule: decision.rule, steps: decision.steps.map((s) => `${s.container}:${s.escalate ? 'kubelet' : s.method}`) } : {}),
      ...(decision.action === 'delete' ? { gracePeriodSeconds: decision.gracePeriodSeconds } : {}),
      ...(decision.action === 'phase' ? { phase: decision.phase } : {}),
      ...(decision.action === 'invalid' ? { errors: decision.errors.map((e) => e.message) } : {}),
      conditions: decision.updates.map((u) => `${u.condition.type}=${u.condition.status}`),
    });
    if (this.dryRunSeen.get(key) === summary) return;
    this.dryRunSeen.set(key, summary);
    this.log.info({ pod: key, uid: pod.metadata?.uid, decision: JSON.parse(summary) as unknown }, 'dry run: would act');
  }
}
