/**
 * The keystone reconciler: evaluate the cached pod, hand the decision to the actuators, record
 * what they report, requeue when the decision says.
 *
 * Guarantees:
 * - level-based: a reconcile reads the pod from the cache (or the newer copy its own last write
 *   returned) and never trusts the event that woke it; `evaluatePod` alone decides what is due
 *   and when to look again, and the reconciler returns its `requeueAfterMs` as it is (or, when a
 *   status patch met a newer pod, schedule.ts's STALE_RETRY_MS); a container that terminates,
 *   and the record this reconciler writes, wake the key through the informer;
 * - one-shot: actuators are called once per due step and never waited on; nothing runs in the
 *   background between reconciles;
 * - never acts on a pod without podlife annotations or outside the scoped namespaces;
 * - conditions are merged by type through pods/status (strategic merge), written only when they
 *   change, and only to the pod they were decided on: the patch carries its `metadata.uid`, which
 *   the API server refuses to change, so a pod recreated under the same name is not written;
 *   every Event comes from `passRecord` (records.ts), a condition's only when it changes,
 *   an action's once per action, so repeated reconciles repeat nothing. A stop goes out before its
 *   record is written (one round trip less to react);
 * - `dryRun` logs each new decision once and writes nothing;
 * - API failures are retried with the controller's backoff; nothing here throws on bad input.
 *
 * State beside the cache, and why each must be there (a new reconciler with only the cache, as
 * after a restart, decides the same: nothing here holds a decision):
 * - `fresh`: the pod a status write of ours returned, until the cache holds that version or a
 *   newer one. A reconcile woken by an older event (a kubelet update from before our write) would
 *   otherwise read a pod without the record it just wrote, and repeat the stop it lists;
 * - `unwritten`: conditions a write could not store, written before anything else is done for the
 *   pod: the stop they record already went out, and the pod does not show it anywhere else
 *   (a crash in between may repeat it: at least once, docs/adr/0052);
 * - `dryRunSeen`: the last decision logged per pod in dry run, so that each is logged once.
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
  type EventRecorderLike,
  type KubeClient,
  type KubeObject,
  type Logger,
  type ReconcileResult,
  type Reconciler,
} from '@podlife/core';
import type { Registry } from 'prom-client';
import type { KeystoneConfig } from './config.js';
import { DEFAULT_MIN_STAGE_MS, type Decision } from './decision.js';
import { evaluatePod } from './evaluate.js';
import { KeystoneMetrics, type StopStrategyLabel } from './metrics.js';
import { ConditionType, passRecord, type LifecycleEvent, type StatusUpdate } from './records.js';
import { STALE_RETRY_MS } from './schedule.js';
import { actOn, type ActionReport } from './strategies/act.js';
import { createPodApi, type PodApi, type PodExecApi } from './strategies/api.js';
import { keepLifecycleFields } from './transform.js';

/** The client, pod cache, transports and settings of a KeystoneReconciler. */
export interface KeystoneReconcilerOptions {
  client: KubeClient;
  /** Reads a pod from the informer cache by "namespace/name". */
  getPod(key: string): V1Pod | undefined;
  events?: EventRecorderLike;
  /** pods/exec transport; without one the exec strategy is skipped (ephemeral only). */
  exec?: PodExecApi;
  /** Replaces the REST actuator API (tests and benchmarks observe actions through it). */
  pods?: PodApi;
  config?: KeystoneConfig;
  dryRun?: boolean;
  logger?: Logger;
  registry?: Registry;
  now?: () => number;
}

/** Conditions this reconciler meant to write and could not yet: written before anything else is done. */
interface Unwritten {
  uid: string;
  conditions: V1PodCondition[];
}

function podKey(pod: KubeObject): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** The conditions patch, for the pod of `pod`'s uid only (the API server refuses to change a uid). */
function statusPatch(pod: V1Pod, conditions: readonly V1PodCondition[]): object {
  const uid = pod.metadata?.uid;
  return uid ? { metadata: { uid }, ...conditionsPatch(conditions) } : conditionsPatch(conditions);
}

function newerResourceVersion(a: string | undefined, b: string | undefined): boolean {
  // resourceVersions are opaque, but etcd's are integers; when they are not, trust the cache.
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) > BigInt(b);
}

/** The keystone Reconciler (see the guarantees above). */
export class KeystoneReconciler implements Reconciler {
  private readonly opts: KeystoneReconcilerOptions;
  private readonly log: Logger;
  private readonly metrics: KeystoneMetrics | undefined;
  private readonly pods: PodApi;
  private readonly config: KeystoneConfig;
  private readonly namespaces: ReadonlySet<string>;
  private readonly now: () => number;
  /** The pod each of our status writes returned, used until the cache catches up. */
  private readonly fresh = new Map<string, V1Pod>();
  private readonly unwritten = new Map<string, Unwritten>();
  private readonly dryRunSeen = new Map<string, string>();

  constructor(opts: KeystoneReconcilerOptions) {
    this.opts = opts;
    this.log = opts.logger ?? silentLogger();
    this.metrics = opts.registry ? new KeystoneMetrics(opts.registry) : undefined;
    this.pods = opts.pods ?? createPodApi(opts.client);
    this.now = opts.now ?? Date.now;
    this.config = { keystoneLimit: 1, execCommands: {}, strategy: 'exec', minStageMs: DEFAULT_MIN_STAGE_MS, ...opts.config };
    this.namespaces = new Set(opts.config?.namespaces ?? []);
  }

  /** Whether a pod's namespace is one this reconciler may act in. */
  inScope(namespace: string | undefined): boolean {
    return this.namespaces.size === 0 || (namespace !== undefined && this.namespaces.has(namespace));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    let pod = this.current(key);
    if (!pod) {
      this.forget(key);
      return;
    }
    // A record that could not be written goes first: acting on a pod that does not show it
    // would repeat what it lists.
    const unwritten = this.unwritten.get(key);
    if (unwritten && unwritten.uid === pod.metadata?.uid) {
      await this.patchConditions(key, pod, unwritten.conditions);
      pod = this.current(key) ?? pod;
    }
    this.unwritten.delete(key);
    if (!this.inScope(pod.metadata?.namespace)) return;
    const nowMs = this.now();
    const decision = evaluatePod(pod, { ...this.config, nowMs });
    if (decision.action === 'none' && decision.updates.length === 0) {
      if (decision.why !== 'not-ours') this.dryRunSeen.delete(key);
      return;
    }
    if (this.opts.dryRun) return this.logDryRun(key, pod, decision);

    const acted = await actOn(pod, decision, { pods: this.pods, exec: this.opts.exec, config: this.config, nowMs, now: this.now, signal });
    if (acted.written && acted.written.metadata?.uid === pod.metadata?.uid) this.fresh.set(key, keepLifecycleFields(acted.written));
    for (const r of acted.reports ?? []) this.count(pod, r);
    const record = passRecord(decision, acted);
    const closed = await this.write(key, this.current(key) ?? pod, record.updates, record.events);
    if (decision.action === 'none' && decision.stopLatencyMs !== undefined && closed) this.metrics?.stopLatency(decision.stopLatencyMs / 1000);
    if (!acted.ok) throw new Error(`${decision.action} for pod ${key} did not take; retrying`);
    if (acted.stale) return { requeueAfterMs: STALE_RETRY_MS };
    return decision.requeueAfterMs === undefined ? undefined : { requeueAfterMs: decision.requeueAfterMs };
  }

  /** Drops what this reconciler holds for a key (the pod is gone). */
  private forget(key: string): void {
    this.fresh.delete(key);
    this.unwritten.delete(key);
    this.dryRunSeen.delete(key);
  }

  private current(key: string): V1Pod | undefined {
    const cached = this.opts.getPod(key);
    if (!cached) return undefined;
    const fresh = this.fresh.get(key);
    if (fresh && fresh.metadata?.uid === cached.metadata?.uid && newerResourceVersion(fresh.metadata?.resourceVersion, cached.metadata?.resourceVersion)) return fresh;
    this.fresh.delete(key);
    return cached;
  }

  /**
   * Records the Events of this pass — those of each condition that changes, then those of its
   * actions — and merges the changed conditions into pods/status. Conditions that could not be
   * written are kept, and written first on the next pass. True when it closed a stop's record.
   */
  private async write(key: string, pod: V1Pod, updates: readonly StatusUpdate[], actionEvents: readonly LifecycleEvent[]): Promise<boolean> {
    const nowMs = this.now();
    let conditions: V1PodCondition[] = pod.status?.conditions ?? [];
    const changed: V1PodCondition[] = [];
    let closed = false;
    for (const update of updates) {
      const r = setCondition<V1PodCondition>(conditions, update.condition, nowMs);
      conditions = r.conditions;
      if (!r.changed) continue;
      changed.push(r.condition);
      if (update.condition.type === ConditionType.SidecarsStopped && update.condition.status === 'True') closed = true;
      if (update.condition.type === ConditionType.LifecycleValid && update.condition.status === 'False') this.metrics?.invalidPod();
      for (const e of update.events) this.recordEvent(pod, e);
    }
    for (const e of actionEvents) this.recordEvent(pod, e);
    if (changed.length > 0) await this.patchConditions(key, pod, changed);
    return closed;
  }

  private async patchConditions(key: string, pod: V1Pod, conditions: V1PodCondition[]): Promise<void> {
    const { namespace, name } = splitKey(key);
    const path = resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource: 'status' });
    let written: V1Pod;
    try {
      written = await this.opts.client.patch<V1Pod>(path, statusPatch(pod, conditions), ContentType.StrategicMergePatch);
    } catch (err) {
      if (isNotFound(err)) return this.forget(key);
      if (pod.metadata?.uid) this.unwritten.set(key, { uid: pod.metadata.uid, conditions });
      throw err;
    }
    this.unwritten.delete(key);
    if (written.metadata?.uid === pod.metadata?.uid) this.fresh.set(key, keepLifecycleFields(written));
  }

  /** Metrics and the log line of one action. */
  private count(pod: V1Pod, r: ActionReport): void {
    if (r.kind === 'stop-issued') this.metrics?.stop(r.method, r.ok ? 'success' : 'failure');
    if ((r.kind === 'deleted' || r.kind === 'phase' || r.kind === 'escalated') && r.outcome !== 'already') {
      const strategy: StopStrategyLabel = r.kind === 'phase' ? 'phase' : 'delete';
      this.metrics?.stop(strategy, r.outcome === 'done' ? 'success' : 'failure');
    }
    this.log.info({ pod: podKey(pod), ...r }, `keystone action: ${r.kind}`);
  }

  private recordEvent(pod: V1Pod, e: LifecycleEvent): void {
    const sink = this.opts.events;
    if (!sink) return;
    sink.event(pod, e.type, e.reason, e.note, e.action).catch((err: unknown) => this.log.warn({ pod: podKey(pod), reason: e.reason, err }, 'event not recorded'));
  }

  private logDryRun(key: string, pod: V1Pod, decision: Decision): void {
    const summary = JSON.stringify({
      action: decision.action,
      ...(decision.action === 'stop'
        ? { rule: decision.rule, steps: decision.steps.map((s) => `${s.container}:${s.escalate ? 'kubelet' : s.method}`) }
        : {}),
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
