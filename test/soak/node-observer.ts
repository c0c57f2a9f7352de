/**
 * Watches the soak's pods on the real node from outside the controller: the pods through an
 * informer (container ids, terminated states, deletion), containerd's record of each exit
 * (sampled every second, before the kubelet removes the container), runc for what still runs,
 * the containers' own record files and the kubelet's log. `records()` turns it all into the
 * tally's records (node-records.ts).
 *
 * Guarantees: survives API server restarts, pauses and compactions (the informer relists);
 * `records()` reads everything afresh each call and never throws for a file that is not there
 * yet; `stop()` ends the informer and the sampler.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { Informer, resourcePath, stripManagedFields, type KubeClient } from '@podlife/core';
import type { KubeletRecord, RealNode } from '@podlife/testbed';
import { recordFileName } from './busybox.js';
import { nodeRecords, parseKubeletKills, parseOwnRecord, type PodSeen } from './node-records.js';

/** A pod removed without a deletion seen first: its deletion began before the watch delivered it (by this much at most, short of an outage). */
const DELETE_SEEN_MARGIN_MS = 1000;
const SAMPLE_EVERY_MS = 1000;

interface PodState {
  uid: string;
  name: string;
  containers: string[];
  ids: Map<string, string>;
  apiExit: Map<string, { exitCode: number; atMs: number }>;
  containerdExit: Map<string, { exitCode: number; atMs: number }>;
  vanished: Map<string, number>;
  seenInContainerd: Set<string>;
  removed: Set<string>;
  deletionAtMs?: number;
  gone: boolean;
  createdMs: number;
  phaseTerminalAtMs?: number;
  /** The last of its containers' start times, once every one has started (API, 1 s). */
  allStartedMs?: number;
}

export class NodeObserver {
  private readonly pods = new Map<string, PodState>();
  private readonly informer: Informer<V1Pod>;
  private sampler?: NodeJS.Timeout;
  private kubeletLogOffset = 0;
  private readonly kills = new Map<string, number[]>();
  /** Wall time at uptime 0, for the containers' uptime records. */
  private readonly bootMs: number;

  constructor(client: KubeClient, private readonly namespace: string, private readonly node: RealNode, private readonly recordDir: string) {
    this.bootMs = Date.now() - Math.round(Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000);
    this.informer = new Informer<V1Pod>({ client, path: resourcePath({ version: 'v1', resource: 'pods', namespace }), transform: stripManagedFields, name: 'soak-pods' });
    this.informer.on('add', (p) => this.seen(p, false));
    this.informer.on('update', (p) => this.seen(p, false));
    this.informer.on('delete', (p) => this.seen(p, true));
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
    this.sampler = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.sampler);
    await this.informer.stop();
  }

  private seen(pod: V1Pod, deleted: boolean): void {
    const uid = pod.metadata?.uid;
    if (!uid) return;
    let state = this.pods.get(uid);
    if (!state) {
      state = {
        uid, name: pod.metadata?.name ?? '?', containers: (pod.spec?.containers ?? []).map((c) => c.name),
        ids: new Map(), apiExit: new Map(), containerdExit: new Map(), vanished: new Map(), seenInContainerd: new Set(), removed: new Set(), gone: false,
        createdMs: new Date(pod.metadata?.creationTimestamp ?? Date.now()).getTime(),
      };
      this.pods.set(uid, state);
    }
    for (const s of pod.status?.containerStatuses ?? []) {
      if (s.containerID) state.ids.set(s.name, s.containerID.replace(/^[a-z]+:\/\//, ''));
      const t = s.state?.terminated;
      if (t?.finishedAt) state.apiExit.set(s.name, { exitCode: t.exitCode, atMs: new Date(t.finishedAt).getTime() });
    }
    const starts = (pod.status?.containerStatuses ?? []).map((c) => c.state?.running?.startedAt ?? c.state?.terminated?.startedAt);
    if (state.allStartedMs === undefined && starts.length === state.containers.length && starts.every((t) => t !== undefined)) {
      state.allStartedMs = Math.max(...starts.map((t) => new Date(t as Date).getTime()));
    }
    if (state.phaseTerminalAtMs === undefined && (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed')) state.phaseTerminalAtMs = Date.now();
    const dts = pod.metadata?.deletionTimestamp;
    const candidates = [
      state.deletionAtMs,
      dts ? new Date(dts).getTime() - (pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000 : undefined,
      deleted ? Date.now() - DELETE_SEEN_MARGIN_MS : undefined,
    ].filter((n): n is number => n !== undefined);
    if (candidates.length > 0) state.deletionAtMs = Math.min(...candidates);
    if (deleted) state.gone = true;
  }

  /** containerd's exit record of each container not yet known exited; runc for those of pods gone. */
  private sample(): void {
    let running: Set<string> | undefined;
    for (const pod of this.pods.values()) {
      for (const name of pod.containers) {
        if (pod.containerdExit.has(name)) continue;
        const id = pod.ids.get(name);
        if (id && !pod.removed.has(name)) {
          const times = this.node.containerTimes(id);
          if (times && times.finishedAtMs > 0) {
            pod.containerdExit.set(name, { exitCode: times.exitCode, atMs: Math.round(times.finishedAtMs) });
            continue;
          }
          // Removed by the kubelet: the API's status (1 s) is all there will be.
          if (!times && pod.seenInContainerd.has(name)) pod.removed.add(name);
          if (times) pod.seenInContainerd.add(name);
        }
        if (!pod.gone || pod.apiExit.has(name) || pod.vanished.has(name)) continue;
        try {
          running ??= new Set(this.node.runningContainerIds());
        } catch {
          return; // runc busy or the node stopping: look again next time
        }
        if (!id || !running.has(id)) pod.vanished.set(name, Date.now());
      }
    }
  }

  private ownRecords(): Map<string, string> {
    const files = new Map<string, string>();
    for (const f of readdirSync(this.recordDir)) {
      try {
        files.set(f, readFileSync(join(this.recordDir, f), 'utf8'));
      } catch {
        // Removed while we looked: nothing to read.
      }
    }
    return files;
  }

  /** The kubelet's kill lines since the last call, read from where the last read stopped. */
  private readKubeletKills(): void {
    let fd: number;
    try {
      fd = openSync(join(this.node.dir, 'kubelet.log'), 'r');
    } catch {
      return; // not written yet
    }
    try {
      const size = fstatSync(fd).size;
      if (size <= this.kubeletLogOffset) return;
      const buf = Buffer.alloc(size - this.kubeletLogOffset);
      readSync(fd, buf, 0, buf.length, this.kubeletLogOffset);
      const text = buf.toString('utf8');
      const complete = text.lastIndexOf('\n') + 1; // a line still being written waits for the next read
      this.kubeletLogOffset += Buffer.byteLength(text.slice(0, complete));
      for (const k of parseKubeletKills(text.slice(0, complete), Date.now())) {
        const key = recordFileName(k.podUid, k.container);
        this.kills.set(key, [...(this.kills.get(key) ?? []), k.atMs]);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** For each pod whose containers all started: creation to the last container's start (1 s steps). */
  startLatenciesMs(): number[] {
    return [...this.pods.values()].flatMap((p) => (p.allStartedMs === undefined ? [] : [p.allStartedMs - p.createdMs]));
  }

  /** Everything seen so far, as the tally's records. */
  records(): KubeletRecord[] {
    this.sample();
    const files = this.ownRecords();
    this.readKubeletKills();
    const kills = this.kills;
    const pods: PodSeen[] = [...this.pods.values()].map((p) => ({
      uid: p.uid,
      name: p.name,
      namespace: this.namespace,
      ...(p.deletionAtMs !== undefined ? { deletionAtMs: p.deletionAtMs } : {}),
      ...(p.phaseTerminalAtMs !== undefined ? { phaseTerminalAtMs: p.phaseTerminalAtMs } : {}),
      containers: p.containers.map((name) => {
        const key = recordFileName(p.uid, name);
        const exit = p.containerdExit.get(name) ?? p.apiExit.get(name);
        const vanishedAtMs = p.vanished.get(name);
        return {
          name,
          own: parseOwnRecord(files.get(key) ?? '', this.bootMs),
          kubeletKillsMs: kills.get(key) ?? [],
          ...(exit ? { runtimeExit: exit } : {}),
          ...(vanishedAtMs !== undefined ? { vanishedAtMs } : {}),
        };
      }),
    }));
    return nodeRecords(pods);
  }
}
