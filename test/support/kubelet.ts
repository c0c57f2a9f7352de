/**
 * A simulated kubelet (and the one scheduling step a test cluster needs) for a control plane
 * that has no real nodes.
 *
 * Where it is still used, and why: what podlife does to containers is proven on the real node
 * (node.ts: containerd, runc and the kubelet); this simulation serves only where a real node
 * cannot — benchmarks with thousands of pods or nodes on one machine, and kubelet version skew
 * (several kubelet versions at once, for native-sidecar `auto`). See docs/adr/0012 and 0013.
 *
 * Guarantees:
 * - it registers Node objects (kubeletVersion, conditions, taints, labels, capacity) and plays the
 *   scheduler for pods whose schedulerName is the default: a pending pod is bound, through the
 *   pods/binding subresource, to the first registered node whose labels satisfy its nodeSelector
 *   and whose NoSchedule/NoExecute taints it tolerates (affinity is not considered); a pod with
 *   scheduling gates stays unbound with PodScheduled=False/SchedulingGated, a pod that fits
 *   nowhere gets PodScheduled=False/Unschedulable, as the scheduler writes them;
 * - for a pod bound to one of its nodes it writes, through pods/status only, what the kubelet
 *   writes: phase, startTime, hostIP(s), podIP(s), the PodReadyToStartContainers, Initialized,
 *   ContainersReady and Ready conditions and every container status; conditions it does not own
 *   are left alone (the patch merges conditions by type);
 * - Ready is True only when every container (sidecars included) is ready AND every
 *   spec.readinessGates conditionType is True on the pod: the computation a real kubelet does,
 *   which this simulation performs in its place;
 * - containers follow kubelet order: init containers one by one (a restartable init container,
 *   i.e. a sidecar, only needs to have started), then all regular containers; exits are restarted
 *   per restartPolicy with a short backoff (1, 2, 4, then 10 s) and CrashLoopBackOff in between;
 *   when the regular containers are done and won't restart, sidecars get TERM, and the phase
 *   turns Succeeded/Failed only once every container has stopped;
 * - deletion: running containers get TERM (sidecars after the regular ones), KILL when the
 *   grace period ends (at least 2 s, the kubelet's minimum, even for a zero grace period); then the final status is written and the pod is deleted with
 *   gracePeriodSeconds=0 and a UID precondition, as the kubelet confirms a deletion; a pod that
 *   is already terminal is confirmed at once;
 * - status.phase made terminal by someone else: remaining containers are stopped the same way,
 *   the phase written by that someone is kept;
 * - a pod removed from the API while containers still run (the API server deletes a terminal pod
 *   at once, whatever grace period was asked for) has them stopped as a kubelet stops an orphaned
 *   pod's: TERM, then KILL after the deletion's grace period (at least 2 s), with nothing written;
 * - ephemeral containers are started when they appear; what they do (signal their target) is
 *   described in kubelet-script.ts. Exec, logs, probes and preStop hooks are not simulated;
 * - every intermediate state is written (snapshots are queued, not coalesced), in order, and a
 *   failed write is retried until it lands or the pod is gone, so a timeline is complete even
 *   across an API server restart.
 */
import type { V1Container, V1NodeCondition, V1Pod, V1PodCondition, V1Taint, V1Toleration } from '@kubernetes/client-node';
import { ApiError, ContentType, KubeClient, isConflict, isNotFound, lines, resourcePath } from '@podlife/core';
import {
  SCRIPT_ANNOTATION,
  containerScript,
  exitCodeForSignal,
  parseScriptAnnotation,
  signalSentToPid1,
  type ContainerScript,
  type PodScript,
  type SignalName,
} from './kubelet-script.js';

export * from './kubelet-script.js';

export interface SimulatedNode {
  name: string;
  kubeletVersion?: string;
  labels?: Record<string, string>;
  conditions?: V1NodeCondition[];
  taints?: V1Taint[];
}

export interface SimulatedKubeletOptions {
  /** Nodes registered (with defaults) by start(); when neither this nor registerNode names any, `sim-node-1`. */
  nodeNames?: string[];
  /** kubeletVersion for nodes that do not say (default v1.35.4). */
  kubeletVersion?: string;
  log?: (line: string) => void;
  /** What the kubelet does to containers, as it happens (the chaos soak counts stops from these). */
  onRecord?: (record: KubeletRecord) => void;
}

/**
 * One thing the simulated kubelet did, stamped with its own clock: a signal reaching a container
 * (from an ephemeral container's `kill … 1`, or from the kubelet ending the pod), a container
 * exiting, the kubelet starting to end a pod because it was deleted or someone else made its phase
 * terminal, a pod whose containers have all stopped.
 */
export type KubeletRecord =
  | { kind: 'signal'; atMs: number; uid: string; namespace: string; pod: string; container: string; signal: SignalName; from: string; running: boolean }
  | { kind: 'exit'; atMs: number; uid: string; namespace: string; pod: string; container: string; exitCode: number }
  | { kind: 'ending'; atMs: number; uid: string; namespace: string; pod: string; cause: 'deleted' | 'external'; graceMs: number }
  | { kind: 'finished'; atMs: number; uid: string; namespace: string; pod: string; phase: 'Succeeded' | 'Failed'; cause: 'completed' | 'deleted' | 'external' };

type Kind = 'init' | 'sidecar' | 'regular' | 'ephemeral';
type Phase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

interface Terminated {
  exitCode: number;
  reason: string;
  message?: string;
  startedAt?: number;
  finishedAt: number;
  containerID?: string;
}

interface ContainerRun {
  name: string;
  kind: Kind;
  image: string;
  script: ContainerScript;
  state: 'waiting' | 'running' | 'terminated';
  waitingReason: string;
  startScheduled: boolean;
  startedAt?: number;
  terminated?: Terminated;
  lastTerminated?: Terminated;
  ready: boolean;
  everStarted: boolean;
  restartCount: number;
  containerID?: string;
  signalled: boolean;
  timers: Set<NodeJS.Timeout>;
}

interface Ending {
  cause: 'completed' | 'deleted' | 'external';
  deadline: number;
  sidecarsSignalled: boolean;
  killTimer?: NodeJS.Timeout;
}

interface OwnCondition {
  status: 'True' | 'False';
  reason?: string;
  message?: string;
  since: number;
}

interface PodRun {
  uid: string;
  namespace: string;
  name: string;
  node: string;
  pod: V1Pod;
  script: PodScript;
  startTime: number;
  sandboxReady: boolean;
  podIP?: string;
  containers: Map<string, ContainerRun>;
  ending?: Ending;
  finished: boolean;
  phase: Phase;
  externalPhase?: Phase;
  conditions: Map<string, OwnCondition>;
  chain: Promise<void>;
  lastWritten?: string;
  gone: boolean;
  /** The API object is gone while containers still run: they are being stopped, nothing is written. */
  removed: boolean;
  timers: Set<NodeJS.Timeout>;
}

/** The kubelet's least grace period when it kills a pod (minimumGracePeriodInSeconds). */
const MIN_KILL_GRACE_SECONDS = 2;
const OWN_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'] as const;
const SIM_NODE_ADDRESS_BASE = '172.30.0.';

function iso(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

function isTerminalPhase(phase: string | undefined): phase is 'Succeeded' | 'Failed' {
  return phase === 'Succeeded' || phase === 'Failed';
}

function tolerates(tolerations: V1Toleration[] | undefined, taint: V1Taint): boolean {
  return (tolerations ?? []).some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (!t.key) return t.operator === 'Exists';
    if (t.key !== taint.key) return false;
    return t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '');
  });
}

function hexId(seed: string): string {
  let h = 0x811c9dc5;
  let out = '';
  for (let round = 0; out.length < 64; round++) {
    for (const ch of `${seed}/${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
    out += h.toString(16).padStart(8, '0');
  }
  return out.slice(0, 64);
}

export class SimulatedKubelet {
  private readonly client: KubeClient;
  private readonly opts: SimulatedKubeletOptions;
  private readonly nodes = new Map<string, { node: SimulatedNode; index: number }>();
  private readonly runs = new Map<string, PodRun>();
  private readonly scripts = new Map<string, PodScript>();
  private readonly pods = new Map<string, V1Pod>();
  private readonly binding = new Set<string>();
  private readonly unschedulableNoted = new Map<string, string>();
  private readonly confirming = new Set<string>();
  private abort?: AbortController;
  private loop?: Promise<void>;
  private ipCounter = 0;
  private stopped = false;

  constructor(client: KubeClient, opts: SimulatedKubeletOptions = {}) {
    this.client = client;
    this.opts = opts;
  }

  private log(line: string): void {
    this.opts.log?.(`kubelet: ${line}`);
  }

  private record(record: KubeletRecord): void {
    this.opts.onRecord?.(record);
  }

  /** Creates (or updates) a Node and writes its status as a kubelet registering would. */
  async registerNode(node: SimulatedNode): Promise<void> {
    const index = this.nodes.get(node.name)?.index ?? this.nodes.size;
    const labels = { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', ...node.labels };
    const path = resourcePath({ version: 'v1', resource: 'nodes' });
    const body = { apiVersion: 'v1', kind: 'Node', metadata: { name: node.name, labels }, spec: { taints: node.taints ?? [] } };
    try {
      await this.client.create(path, body);
    } catch (err) {
      if (!isConflict(err)) throw err;
      await this.client.patch(resourcePath({ version: 'v1', resource: 'nodes', name: node.name }),
        { metadata: { labels }, spec: { taints: node.taints ?? [] } }, ContentType.MergePatch);
    }
    const now = iso(Date.now());
    const defaults: Record<string, [string, string, string]> = {
      Ready: ['True', 'KubeletReady', 'kubelet is posting ready status'],
      MemoryPressure: ['False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
      DiskPressure: ['False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
      PIDPressure: ['False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
    };
    const conditions = new Map<string, Record<string, unknown>>();
    for (const [type, [status, reason, message]] of Object.entries(defaults)) {
      conditions.set(type, { type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now });
    }
    for (const c of node.conditions ?? []) {
      conditions.set(c.type, { lastHeartbeatTime: now, lastTransitionTime: now, ...c });
    }
    const address = `${SIM_NODE_ADDRESS_BASE}${index + 2}`;
    const resources = { cpu: '8', memory: '32Gi', pods: '110', 'ephemeral-storage': '100Gi' };
    await this.client.patch(resourcePath({ version: 'v1', resource: 'nodes', name: node.name, subresource: 'status' }), {
      status: {
        conditions: [...conditions.values()],
        addresses: [{ type: 'InternalIP', address }, { type: 'Hostname', address: node.name }],
        capacity: resources,
        allocatable: resources,
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: hexId(node.name).slice(0, 32), systemUUID: hexId(`uuid/${node.name}`).slice(0, 32), bootID: hexId(`boot/${node.name}`).slice(0, 32),
          kernelVersion: 'simulated', osImage: 'podlife simulated kubelet', containerRuntimeVersion: 'sim://1.0.0',
          kubeletVersion: node.kubeletVersion ?? this.opts.kubeletVersion ?? 'v1.35.4', kubeProxyVersion: '',
          operatingSystem: 'linux', architecture: 'amd64',
        },
      },
    }, ContentType.StrategicMergePatch);
    this.nodes.set(node.name, { node: { ...node, labels }, index });
    this.log(`node ${node.name} registered`);
    for (const pod of this.pods.values()) this.maybeSchedule(pod);
  }

  /** Sets the script of a pod (before or after it exists); it wins over the pod's annotation. */
  script(namespace: string, name: string, script: PodScript): void {
    this.scripts.set(`${namespace}/${name}`, script);
  }

  async start(): Promise<void> {
    if (this.abort) return;
    this.stopped = false;
    const wanted = this.opts.nodeNames ?? (this.nodes.size === 0 ? ['sim-node-1'] : []);
    for (const name of wanted) if (!this.nodes.has(name)) await this.registerNode({ name });
    this.abort = new AbortController();
    let onSynced: () => void = () => {};
    const synced = new Promise<void>((resolve) => (onSynced = resolve));
    this.loop = this.watchLoop(this.abort.signal, onSynced);
    await synced;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort?.abort();
    await this.loop?.catch(() => {});
    this.abort = undefined;
    for (const run of this.runs.values()) this.clearRunTimers(run);
    await Promise.all([...this.runs.values()].map((r) => r.chain.catch(() => {})));
    this.runs.clear();
  }

  // ---- watching -------------------------------------------------------------------------

  private async watchLoop(signal: AbortSignal, onSynced: () => void): Promise<void> {
    const path = resourcePath({ version: 'v1', resource: 'pods' });
    let resourceVersion: string | undefined;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined) {
          const list = await this.client.request<{ items: V1Pod[]; metadata: { resourceVersion: string } }>({ path, signal });
          const seen = new Set<string>();
          for (const pod of list.items) {
            seen.add(pod.metadata?.uid ?? '');
            this.onPod(pod);
          }
          for (const [uid, pod] of this.pods) if (!seen.has(uid)) this.onPodDeleted(pod);
          resourceVersion = list.metadata.resourceVersion;
          onSynced();
        }
        const res = await this.client.stream({
          path, signal,
          query: { watch: 1, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 240 },
        });
        for await (const line of lines(res)) {
          const event = JSON.parse(line) as { type: string; object: V1Pod & { code?: number } };
          if (event.type === 'ERROR') {
            // 410 Gone (compacted) or any other watch error: start over with a fresh list.
            resourceVersion = undefined;
            res.destroy();
            break;
          }
          const rv = event.object.metadata?.resourceVersion;
          if (rv) resourceVersion = rv;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') this.onPod(event.object);
          else if (event.type === 'DELETED') this.onPodDeleted(event.object);
        }
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof ApiError && err.status === 410) resourceVersion = undefined;
        this.log(`watch interrupted (${err instanceof Error ? err.message : String(err)}); resuming`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  private onPod(pod: V1Pod): void {
    if (this.stopped) return;
    const uid = pod.metadata?.uid;
    if (!uid) return;
    this.pods.set(uid, pod);
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) {
      this.maybeSchedule(pod);
      return;
    }
    if (!this.nodes.has(nodeName)) return;
    let run = this.runs.get(uid);
    if (!run) {
      if (pod.metadata?.deletionTimestamp || isTerminalPhase(pod.status?.phase) || (pod.status?.containerStatuses?.length ?? 0) > 0) {
        // Not ours to run (terminal, or run by an earlier kubelet); only a deletion needs confirming.
        if (pod.metadata?.deletionTimestamp) void this.confirmDeletion(pod);
        return;
      }
      run = this.admit(pod, nodeName);
    }
    run.pod = pod;
    this.observe(run);
  }

  private onPodDeleted(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    this.pods.delete(uid);
    this.binding.delete(uid);
    this.unschedulableNoted.delete(uid);
    const run = this.runs.get(uid);
    if (run) this.orphan(run, pod);
  }

  /** The pod's API object is gone: what still runs is stopped as a kubelet stops an orphaned pod's, and nothing more is written. */
  private orphan(run: PodRun, last: V1Pod): void {
    if (run.removed) return;
    if (run.finished || run.gone || this.stopped) {
      run.gone = true;
      this.clearRunTimers(run);
      this.runs.delete(run.uid);
      return;
    }
    run.removed = true;
    const graceSeconds = last.metadata?.deletionGracePeriodSeconds ?? last.spec?.terminationGracePeriodSeconds ?? 30;
    this.log(`${run.namespace}/${run.name}: removed from the API while containers run; stopping them`);
    this.beginEnding(run, 'deleted', Math.max(MIN_KILL_GRACE_SECONDS, graceSeconds) * 1000);
  }

  // ---- scheduling -----------------------------------------------------------------------

  private maybeSchedule(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? '';
    const { namespace = '', name = '' } = pod.metadata ?? {};
    if (pod.spec?.nodeName || pod.metadata?.deletionTimestamp || this.binding.has(uid) || this.nodes.size === 0) return;
    if (pod.spec?.schedulerName && pod.spec.schedulerName !== 'default-scheduler') return;
    if (isTerminalPhase(pod.status?.phase)) return;
    if ((pod.spec?.schedulingGates?.length ?? 0) > 0) {
      this.noteUnschedulable(pod, 'SchedulingGated', 'Scheduling is blocked due to non-empty scheduling gates');
      return;
    }
    const selector = pod.spec?.nodeSelector ?? {};
    const reasons: string[] = [];
    const fit = [...this.nodes.values()].sort((a, b) => a.index - b.index).find(({ node }) => {
      if (!Object.entries(selector).every(([k, v]) => node.labels?.[k] === v)) {
        reasons.push(`node ${node.name} didn't match Pod's node affinity/selector`);
        return false;
      }
      const untolerated = (node.taints ?? []).find((t) => (t.effect === 'NoSchedule' || t.effect === 'NoExecute') && !tolerates(pod.spec?.tolerations, t));
      if (untolerated) {
        reasons.push(`node ${node.name} had untolerated taint {${untolerated.key}: ${untolerated.value ?? ''}}`);
        return false;
      }
      return true;
    });
    if (!fit) {
      this.noteUnschedulable(pod, 'Unschedulable', `0/${this.nodes.size} nodes are available: ${reasons.join(', ')}.`);
      return;
    }
    this.binding.add(uid);
    const target = fit.node.name;
    void this.client
      .create(resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource: 'binding' }), {
        apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace, uid }, target: { apiVersion: 'v1', kind: 'Node', name: target },
      })
      .then(() => this.log(`bound ${namespace}/${name} to ${target}`))
      .catch((err: unknown) => {
        this.binding.delete(uid);
        if (isNotFound(err) || isConflict(err)) return;
        this.log(`binding ${namespace}/${name} failed: ${err instanceof Error ? err.message : String(err)}; retrying`);
        setTimeout(() => {
          const latest = this.pods.get(uid);
          if (latest) this.maybeSchedule(latest);
        }, 1000).unref();
      });
  }

  private noteUnschedulable(pod: V1Pod, reason: string, message: string): void {
    const uid = pod.metadata?.uid ?? '';
    if (this.unschedulableNoted.get(uid) === `${reason}/${message}`) return;
    this.unschedulableNoted.set(uid, `${reason}/${message}`);
    const { namespace = '', name = '' } = pod.metadata ?? {};
    void this.client
      .patch(resourcePath({ version: 'v1', resource: 'pods', namespace, name, subresource: 'status' }), {
        status: { conditions: [{ type: 'PodScheduled', status: 'False', reason, message, lastTransitionTime: iso(Date.now()), lastProbeTime: null }] },
      }, ContentType.StrategicMergePatch)
      .catch(() => this.unschedulableNoted.delete(uid));
  }

  // ---- running a pod --------------------------------------------------------------------

  private scriptFor(pod: V1Pod): PodScript {
    const key = `${pod.metadata?.namespace}/${pod.metadata?.name}`;
    const fromTest = this.scripts.get(key);
    if (fromTest) return fromTest;
    const { script, problem } = parseScriptAnnotation(pod.metadata?.annotations?.[SCRIPT_ANNOTATION]);
    if (problem) this.log(`${key}: ${problem}; using the default script`);
    return script ?? {};
  }

  private admit(pod: V1Pod, node: string): PodRun {
    const uid = pod.metadata?.uid ?? '';
    const script = this.scriptFor(pod);
    const run: PodRun = {
      uid, namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', node, pod, script,
      startTime: Date.now(), sandboxReady: false, containers: new Map(), finished: false, phase: 'Pending',
      conditions: new Map(), chain: Promise.resolve(), gone: false, removed: false, timers: new Set(),
    };
    const add = (c: V1Container, kind: Kind): void => {
      run.containers.set(c.name, {
        name: c.name, kind, image: c.image ?? '', script: containerScript(script, c.name), state: 'waiting',
        waitingReason: kind === 'regular' && (pod.spec?.initContainers?.length ?? 0) > 0 ? 'PodInitializing' : 'ContainerCreating',
        startScheduled: false, ready: false, everStarted: false, restartCount: 0, signalled: false, timers: new Set(),
      });
    };
    for (const c of pod.spec?.initContainers ?? []) add(c, c.restartPolicy === 'Always' ? 'sidecar' : 'init');
    for (const c of pod.spec?.containers ?? []) add(c, 'regular');
    this.runs.set(uid, run);
    this.log(`running ${run.namespace}/${run.name} on ${node}`);
    this.snapshot(run);
    this.after(run, undefined, run.script.sandboxDelayMs ?? 0, () => {
      if (run.finished) return; // deleted before its sandbox was ready
      run.sandboxReady = true;
      run.podIP = `10.244.${(this.nodes.get(node)?.index ?? 0) % 250}.${(this.ipCounter++ % 250) + 2}`;
      this.advance(run);
    });
    return run;
  }

  /** Reacts to a new version of a pod we run: deletion, phase set by others, new ephemeral containers, gates. */
  private observe(run: PodRun): void {
    const pod = run.pod;
    if (pod.metadata?.deletionTimestamp) {
      if (run.finished) {
        void this.confirmDeletion(pod);
        return;
      }
      const graceSeconds = pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
      const graceMs = Math.max(MIN_KILL_GRACE_SECONDS, graceSeconds) * 1000;
      this.beginEnding(run, 'deleted', graceMs);
    } else if (isTerminalPhase(pod.status?.phase) && !run.finished && run.phase !== pod.status?.phase) {
      run.externalPhase = pod.status?.phase;
      this.log(`${run.namespace}/${run.name}: phase set to ${run.externalPhase} by someone else; stopping its containers`);
      this.beginEnding(run, 'external', (pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000);
    }
    for (const c of pod.spec?.ephemeralContainers ?? []) {
      if (run.containers.has(c.name)) continue;
      run.containers.set(c.name, {
        name: c.name, kind: 'ephemeral', image: c.image ?? '', script: containerScript(run.script, c.name), state: 'waiting',
        waitingReason: 'ContainerCreating', startScheduled: false, ready: false, everStarted: false, restartCount: 0, signalled: false, timers: new Set(),
      });
    }
    this.advance(run);
  }

  private after(run: PodRun, container: ContainerRun | undefined, ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      run.timers.delete(timer);
      container?.timers.delete(timer);
      if (run.gone || this.stopped) return;
      fn();
    }, ms);
    run.timers.add(timer);
    container?.timers.add(timer);
  }

  private clearRunTimers(run: PodRun): void {
    for (const t of run.timers) clearTimeout(t);
    run.timers.clear();
    for (const c of run.containers.values()) c.timers.clear();
    if (run.ending?.killTimer) clearTimeout(run.ending.killTimer);
  }

  private restartPolicy(run: PodRun): string {
    return run.pod.spec?.restartPolicy ?? 'Always';
  }

  /** Decides what happens next; called after every transition. */
  private advance(run: PodRun): void {
    if (run.gone || this.stopped) return;
    if (run.sandboxReady && !run.ending) this.startDue(run);
    if (run.sandboxReady) this.startEphemerals(run);
    if (!run.ending && this.regularContainersDone(run)) this.beginEnding(run, 'completed', (run.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000);
    if (run.ending) this.progressEnding(run);
    if (!run.finished) run.phase = this.livePhase(run);
    this.snapshot(run);
  }

  private list(run: PodRun, ...kinds: Kind[]): ContainerRun[] {
    return [...run.containers.values()].filter((c) => kinds.includes(c.kind));
  }

  private startDue(run: PodRun): void {
    for (const c of this.list(run, 'init', 'sidecar')) {
      if (c.kind === 'init' && c.state === 'terminated' && c.terminated?.exitCode === 0) continue;
      if (c.state === 'waiting' && !c.startScheduled) this.scheduleStart(run, c);
      if (c.kind === 'sidecar' && c.everStarted) continue;
      return; // the next init container waits for this one
    }
    for (const c of this.list(run, 'regular')) if (c.state === 'waiting' && !c.startScheduled) this.scheduleStart(run, c);
  }

  private startEphemerals(run: PodRun): void {
    if (run.finished) return;
    for (const c of this.list(run, 'ephemeral')) if (c.state === 'waiting' && !c.startScheduled) this.scheduleStart(run, c);
  }

  private initDone(run: PodRun): boolean {
    return this.list(run, 'init', 'sidecar').every((c) => (c.kind === 'sidecar' ? c.everStarted : c.state === 'terminated' && c.terminated?.exitCode === 0));
  }

  private willRestart(run: PodRun, c: ContainerRun): boolean {
    if (run.ending || c.kind === 'ephemeral') return false;
    if (c.kind === 'sidecar') return true;
    const policy = this.restartPolicy(run);
    const code = c.terminated?.exitCode ?? 0;
    // An init container that succeeded is done for good; a failed one is retried unless the
    // pod's policy is Never (the kubelet treats Always like OnFailure for init containers).
    if (c.kind === 'init') return code !== 0 && policy !== 'Never';
    return policy === 'Always' || (policy === 'OnFailure' && code !== 0);
  }

  /** True when the pod's regular work is over: every regular container stopped for good, or an init container failed for good. */
  private regularContainersDone(run: PodRun): boolean {
    const failedInit = this.list(run, 'init').some((c) => c.state === 'terminated' && c.terminated?.exitCode !== 0 && !this.willRestart(run, c));
    if (failedInit) return true;
    const regular = this.list(run, 'regular');
    return regular.length > 0 && regular.every((c) => c.state === 'terminated' && !this.willRestart(run, c));
  }

  private scheduleStart(run: PodRun, c: ContainerRun): void {
    c.startScheduled = true;
    this.after(run, c, c.script.startDelayMs ?? 0, () => {
      if (run.ending && c.kind !== 'ephemeral') return;
      c.state = 'running';
      c.startedAt = Date.now();
      c.everStarted = true;
      c.terminated = undefined;
      c.signalled = false;
      c.containerID = `sim://${hexId(`${run.uid}/${c.name}/${c.restartCount}`)}`;
      if (c.kind === 'ephemeral') {
        this.runEphemeral(run, c);
        return;
      }
      const readyAfter = c.script.readyAfterMs === undefined ? 0 : c.script.readyAfterMs;
      if (readyAfter !== null) {
        this.after(run, c, readyAfter, () => {
          if (c.state !== 'running') return;
          c.ready = true;
          this.advance(run);
        });
      }
      if (c.script.runMs !== undefined) this.after(run, c, c.script.runMs, () => this.exit(run, c, c.script.exitCode ?? 0));
      this.advance(run);
    });
  }

  private runEphemeral(run: PodRun, c: ContainerRun): void {
    const spec = run.pod.spec?.ephemeralContainers?.find((e) => e.name === c.name);
    const signal = signalSentToPid1(spec?.command, spec?.args);
    const target = spec?.targetContainerName ? run.containers.get(spec.targetContainerName) : undefined;
    this.advance(run);
    if (signal && target) {
      if (!run.pod.spec?.shareProcessNamespace) {
        this.log(`${run.namespace}/${run.name}: ephemeral ${c.name} sends ${signal} to ${target.name}`);
        this.signal(run, target, signal, `ephemeral:${c.name}`);
      }
      this.after(run, c, c.script.runMs ?? 0, () => this.exit(run, c, c.script.exitCode ?? 0));
    } else if (c.script.runMs !== undefined) {
      this.after(run, c, c.script.runMs, () => this.exit(run, c, c.script.exitCode ?? 0));
    }
  }

  private signal(run: PodRun, c: ContainerRun, signal: SignalName, from = 'kubelet'): void {
    if (from !== 'kubelet' || c.state === 'running') {
      this.record({ kind: 'signal', atMs: Date.now(), uid: run.uid, namespace: run.namespace, pod: run.name, container: c.name, signal, from, running: c.state === 'running' });
    }
    if (c.state !== 'running') return;
    const code = exitCodeForSignal(c.script, signal);
    if (code === undefined) return;
    if (signal === 'KILL') {
      this.exit(run, c, code);
      return;
    }
    if (c.signalled) return;
    c.signalled = true;
    this.after(run, c, c.script.signalExitDelayMs ?? 0, () => this.exit(run, c, code));
  }

  private exit(run: PodRun, c: ContainerRun, exitCode: number, reason?: string): void {
    if (c.state !== 'running') return;
    for (const t of c.timers) {
      clearTimeout(t);
      run.timers.delete(t);
    }
    c.timers.clear();
    c.state = 'terminated';
    c.ready = false;
    if (c.kind !== 'ephemeral') this.record({ kind: 'exit', atMs: Date.now(), uid: run.uid, namespace: run.namespace, pod: run.name, container: c.name, exitCode });
    c.terminated = {
      exitCode, reason: reason ?? (exitCode === 0 ? 'Completed' : 'Error'),
      startedAt: c.startedAt, finishedAt: Date.now(), containerID: c.containerID,
    };
    if (this.willRestart(run, c)) {
      const delay = Math.min(1000 * 2 ** c.restartCount, 10_000);
      this.after(run, c, 0, () => {
        c.lastTerminated = c.terminated;
        c.terminated = undefined;
        c.state = 'waiting';
        c.waitingReason = 'CrashLoopBackOff';
        c.restartCount++;
        c.startScheduled = true;
        this.snapshot(run);
        this.after(run, c, delay, () => {
          c.startScheduled = false;
          if (!run.ending) this.scheduleStart(run, c);
          this.advance(run);
        });
      });
    }
    this.advance(run);
  }

  private beginEnding(run: PodRun, cause: Ending['cause'], graceMs: number): void {
    const deadline = Date.now() + graceMs;
    if (cause !== 'completed') this.record({ kind: 'ending', atMs: Date.now(), uid: run.uid, namespace: run.namespace, pod: run.name, cause, graceMs });
    if (run.ending) {
      // A deletion can follow completion, or shorten a grace period: the stricter deadline wins,
      // and a deletion is what decides whether the pod is deleted at the end.
      if (cause === 'deleted') run.ending.cause = 'deleted';
      if (deadline >= run.ending.deadline) return;
      if (run.ending.killTimer) clearTimeout(run.ending.killTimer);
      run.ending.deadline = deadline;
    } else {
      run.ending = { cause, deadline, sidecarsSignalled: false };
      if (cause !== 'completed') this.log(`${run.namespace}/${run.name}: stopping containers (${cause}, grace ${graceMs} ms)`);
    }
    const ending = run.ending;
    ending.killTimer = setTimeout(() => {
      if (run.gone || this.stopped) return;
      for (const c of run.containers.values()) this.signal(run, c, 'KILL');
    }, Math.max(0, deadline - Date.now()));
    run.timers.add(ending.killTimer);
    for (const c of this.list(run, 'regular', 'init', 'ephemeral')) this.signal(run, c, 'TERM');
    this.advance(run);
  }

  private progressEnding(run: PodRun): void {
    const ending = run.ending;
    if (!ending || run.finished) return;
    const stillRunning = (c: ContainerRun): boolean => c.state === 'running';
    if (!ending.sidecarsSignalled && !this.list(run, 'regular', 'init', 'ephemeral').some(stillRunning)) {
      ending.sidecarsSignalled = true;
      for (const c of this.list(run, 'sidecar').reverse()) this.signal(run, c, 'TERM');
    }
    if ([...run.containers.values()].some(stillRunning)) return;
    // Everything has stopped: the pod is terminal.
    for (const c of run.containers.values()) {
      if (c.state === 'waiting' && c.kind !== 'ephemeral' && ending.cause !== 'completed') {
        c.state = 'terminated';
        c.terminated = { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated', finishedAt: Date.now() };
      }
    }
    if (ending.killTimer) clearTimeout(ending.killTimer);
    run.finished = true;
    run.sandboxReady = false;
    const succeeded = this.list(run, 'regular').every((c) => c.state === 'terminated' && c.terminated?.exitCode === 0) &&
      this.list(run, 'init').every((c) => c.state === 'terminated' && c.terminated?.exitCode === 0);
    run.phase = run.externalPhase ?? (succeeded ? 'Succeeded' : 'Failed');
    this.log(`${run.namespace}/${run.name}: ${run.phase}`);
    this.record({ kind: 'finished', atMs: Date.now(), uid: run.uid, namespace: run.namespace, pod: run.name, phase: run.phase === 'Succeeded' ? 'Succeeded' : 'Failed', cause: ending.cause });
    if (run.removed) {
      run.gone = true;
      this.clearRunTimers(run);
      this.runs.delete(run.uid);
    } else if (ending.cause === 'deleted') {
      this.snapshot(run);
      run.chain = run.chain.then(() => this.confirmDeletion(run.pod));
    }
  }

  private livePhase(run: PodRun): Phase {
    if (!run.sandboxReady || !this.initDone(run)) return 'Pending';
    return this.list(run, 'regular').some((c) => c.everStarted) ? 'Running' : 'Pending';
  }

  private async confirmDeletion(pod: V1Pod): Promise<void> {
    const { namespace = '', name = '', uid = '' } = pod.metadata ?? {};
    if (this.confirming.has(uid)) return;
    this.confirming.add(uid);
    try {
      await this.client.delete(resourcePath({ version: 'v1', resource: 'pods', namespace, name }), {
        apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid },
      });
      this.log(`${namespace}/${name}: deletion confirmed`);
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) {
        this.log(`${namespace}/${name}: confirming deletion failed: ${err instanceof Error ? err.message : String(err)}`);
        this.confirming.delete(uid);
      }
    }
  }

  // ---- status ---------------------------------------------------------------------------

  private setOwn(run: PodRun, type: string, status: 'True' | 'False', reason?: string, message?: string): void {
    const prev = run.conditions.get(type);
    if (prev && prev.status === status && prev.reason === reason && prev.message === message) return;
    run.conditions.set(type, { status, reason, message, since: prev && prev.status === status ? prev.since : Date.now() });
  }

  private computeConditions(run: PodRun): void {
    const completed = run.finished;
    this.setOwn(run, 'PodReadyToStartContainers', run.sandboxReady ? 'True' : 'False');
    const pendingInit = this.list(run, 'init', 'sidecar').filter((c) => (c.kind === 'sidecar' ? !c.everStarted : !(c.state === 'terminated' && c.terminated?.exitCode === 0)));
    if (pendingInit.length === 0 || (completed && run.phase === 'Succeeded')) this.setOwn(run, 'Initialized', 'True');
    else this.setOwn(run, 'Initialized', 'False', 'ContainersNotInitialized', `containers with incomplete status: [${pendingInit.map((c) => c.name).join(' ')}]`);
    if (completed) {
      this.setOwn(run, 'ContainersReady', 'False', 'PodCompleted');
      this.setOwn(run, 'Ready', 'False', 'PodCompleted');
      return;
    }
    const unready = this.list(run, 'sidecar', 'regular').filter((c) => !c.ready);
    if (unready.length > 0) {
      const message = `containers with unready status: [${unready.map((c) => c.name).join(' ')}]`;
      this.setOwn(run, 'ContainersReady', 'False', 'ContainersNotReady', message);
      this.setOwn(run, 'Ready', 'False', 'ContainersNotReady', message);
      return;
    }
    this.setOwn(run, 'ContainersReady', 'True');
    const podConditions: V1PodCondition[] = run.pod.status?.conditions ?? [];
    for (const gate of run.pod.spec?.readinessGates ?? []) {
      const c = podConditions.find((pc) => pc.type === gate.conditionType);
      if (!c) {
        this.setOwn(run, 'Ready', 'False', 'ReadinessGatesNotReady', `corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
        return;
      }
      if (c.status !== 'True') {
        this.setOwn(run, 'Ready', 'False', 'ReadinessGatesNotReady', `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`);
        return;
      }
    }
    this.setOwn(run, 'Ready', 'True');
  }

  private containerStatus(c: ContainerRun): Record<string, unknown> {
    const terminated = (t: Terminated): Record<string, unknown> => ({
      exitCode: t.exitCode, reason: t.reason, ...(t.message ? { message: t.message } : {}),
      ...(t.startedAt !== undefined ? { startedAt: iso(t.startedAt) } : {}), finishedAt: iso(t.finishedAt),
      ...(t.containerID ? { containerID: t.containerID } : {}),
    });
    let state: Record<string, unknown>;
    if (c.state === 'running') state = { running: { startedAt: iso(c.startedAt ?? Date.now()) } };
    else if (c.state === 'terminated' && c.terminated) state = { terminated: terminated(c.terminated) };
    else state = { waiting: { reason: c.waitingReason } };
    return {
      name: c.name,
      image: c.image,
      imageID: c.everStarted ? `sim://image/${c.image}` : '',
      ...(c.containerID && c.state !== 'waiting' ? { containerID: c.containerID } : {}),
      state,
      lastState: c.lastTerminated ? { terminated: terminated(c.lastTerminated) } : {},
      ready: c.ready,
      restartCount: c.restartCount,
      ...(c.kind === 'ephemeral' ? {} : { started: c.state === 'running' }),
    };
  }

  /** Queues the current state as a status write (every transition gets its own write). */
  private snapshot(run: PodRun): void {
    if (run.gone || run.removed) return;
    this.computeConditions(run);
    const nodeIndex = this.nodes.get(run.node)?.index ?? 0;
    const hostIP = `${SIM_NODE_ADDRESS_BASE}${nodeIndex + 2}`;
    const conditions = OWN_CONDITIONS.map((type) => {
      const c = run.conditions.get(type);
      // null, not absent: the patch merges conditions by type, and an absent field would keep
      // the previous reason/message of a condition that changed status.
      return c ? { type, status: c.status, reason: c.reason ?? null, message: c.message ?? null,
        lastTransitionTime: iso(c.since), lastProbeTime: null } : undefined;
    }).filter((c) => c !== undefined);
    const status: Record<string, unknown> = {
      ...(run.pod.metadata?.generation !== undefined ? { observedGeneration: run.pod.metadata.generation } : {}),
      conditions,
      hostIP,
      hostIPs: [{ ip: hostIP }],
      startTime: iso(run.startTime),
      initContainerStatuses: this.list(run, 'init', 'sidecar').map((c) => this.containerStatus(c)),
      containerStatuses: this.list(run, 'regular').map((c) => this.containerStatus(c)),
      ...(this.list(run, 'ephemeral').length > 0 ? { ephemeralContainerStatuses: this.list(run, 'ephemeral').map((c) => this.containerStatus(c)) } : {}),
    };
    if (!run.externalPhase) status.phase = run.phase;
    if (run.podIP) Object.assign(status, { podIP: run.podIP, podIPs: [{ ip: run.podIP }] });
    const text = JSON.stringify(status);
    run.chain = run.chain.then(() => this.write(run, text));
  }

  private async write(run: PodRun, text: string): Promise<void> {
    if (text === run.lastWritten) return;
    const path = resourcePath({ version: 'v1', resource: 'pods', namespace: run.namespace, name: run.name, subresource: 'status' });
    for (let attempt = 0; !run.gone && !run.removed && !this.stopped; attempt++) {
      try {
        await this.client.patch(path, `{"metadata":{"uid":${JSON.stringify(run.uid)}},"status":${text}}`, ContentType.StrategicMergePatch);
        run.lastWritten = text;
        return;
      } catch (err) {
        if (isNotFound(err) || isConflict(err)) {
          this.orphan(run, run.pod);
          return;
        }
        this.log(`${run.namespace}/${run.name}: status write failed (${err instanceof Error ? err.message : String(err)}); retrying`);
        await new Promise((r) => setTimeout(r, Math.min(200 * 2 ** attempt, 2000)));
      }
    }
  }
}
