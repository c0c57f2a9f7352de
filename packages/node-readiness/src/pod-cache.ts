/**
 * The pods and DaemonSets that pod conditions read, cached only while a rule needs them.
 *
 * Guarantees:
 * - nothing is watched while no rule in force has a pod condition: `follow` starts one pod and one
 *   DaemonSet informer per namespace the rules name, and stops those no rule names any more;
 * - pods are listed with `spec.nodeName!=` (only bound pods) and kept as `slimPod` views; a
 *   DaemonSet as its name alone; pods are indexed by namespace and node, so a gate reads the few
 *   pods on its node, never a namespace's list;
 * - `synced()` is false while a followed namespace has not been listed: the node reconciler then
 *   waits, rather than read a DaemonSet as absent;
 * - every pod change wakes the pod's node (old and new), a DaemonSet appearing or going wakes
 *   every node; the reconcile that follows is level-based, so waking too often costs a read.
 */
import type { V1DaemonSet, V1Pod } from '@kubernetes/client-node';
import { Informer } from '@podlife/core';
import type { KubeClient, Logger } from '@podlife/core';
import type { PodLookup } from './pod-conditions.js';
import { slimPod } from './pod-conditions.js';

interface Watched {
  pods: Informer<V1Pod>;
  daemonSets: Informer<V1DaemonSet>;
  /** node -> pod keys (namespace/name) bound to it. */
  byNode: Map<string, Set<string>>;
}

/** Callbacks that wake the node reconciler. */
export interface PodCacheHooks {
  nodeChanged(node: string): void;
  everyNodeChanged(): void;
}

const slimDaemonSet = (ds: V1DaemonSet): V1DaemonSet => ({ metadata: { name: ds.metadata?.name, namespace: ds.metadata?.namespace, uid: ds.metadata?.uid, resourceVersion: ds.metadata?.resourceVersion } });
const keyOf = (o: { metadata?: { namespace?: string; name?: string } }): string => `${o.metadata?.namespace}/${o.metadata?.name}`;

/** A PodLookup over informers started and stopped as rules need them (see above). */
export class PodCache implements PodLookup {
  private readonly watched = new Map<string, Watched>();

  constructor(
    private readonly client: KubeClient,
    private readonly hooks: PodCacheHooks,
    private readonly logger?: Logger,
  ) {}

  /** Watches exactly `namespaces`: starts what is new, stops what is no longer named. */
  follow(namespaces: ReadonlySet<string>): void {
    for (const ns of namespaces) if (!this.watched.has(ns)) this.watch(ns);
    for (const [ns, w] of this.watched) {
      if (namespaces.has(ns)) continue;
      this.watched.delete(ns);
      void w.pods.stop();
      void w.daemonSets.stop();
    }
  }

  /** The namespaces followed now. */
  namespaces(): string[] {
    return [...this.watched.keys()];
  }

  synced(): boolean {
    for (const w of this.watched.values()) if (!w.pods.hasSynced() || !w.daemonSets.hasSynced()) return false;
    return true;
  }

  podsOn(node: string, namespace: string): V1Pod[] {
    const w = this.watched.get(namespace);
    const keys = w?.byNode.get(node);
    if (!w || !keys) return [];
    return [...keys].map((k) => w.pods.store.get(k)).filter((p): p is V1Pod => p !== undefined);
  }

  namespaceListed(namespace: string): boolean {
    const w = this.watched.get(namespace);
    return w !== undefined && w.pods.hasSynced() && w.daemonSets.hasSynced();
  }

  daemonSetExists(namespace: string, name: string): boolean | undefined {
    const w = this.watched.get(namespace);
    if (!w?.daemonSets.hasSynced()) return undefined;
    return w.daemonSets.store.get(`${namespace}/${name}`) !== undefined;
  }

  async stop(): Promise<void> {
    const all = [...this.watched.values()];
    this.watched.clear();
    await Promise.all(all.flatMap((w) => [w.pods.stop(), w.daemonSets.stop()]));
  }

  private watch(ns: string): void {
    const log = this.logger ? { logger: this.logger } : {};
    const pods = new Informer<V1Pod>({ client: this.client, path: `/api/v1/namespaces/${ns}/pods`, fieldSelector: 'spec.nodeName!=', transform: slimPod, name: `readiness-pods/${ns}`, ...log });
    const daemonSets = new Informer<V1DaemonSet>({ client: this.client, path: `/apis/apps/v1/namespaces/${ns}/daemonsets`, transform: slimDaemonSet, name: `readiness-daemonsets/${ns}`, ...log });
    const w: Watched = { pods, daemonSets, byNode: new Map() };
    const index = (pod: V1Pod, add: boolean): void => {
      const node = pod.spec?.nodeName;
      if (!node) return;
      let keys = w.byNode.get(node);
      if (add) {
        if (!keys) w.byNode.set(node, (keys = new Set()));
        keys.add(keyOf(pod));
      } else if (keys) {
        keys.delete(keyOf(pod));
        if (keys.size === 0) w.byNode.delete(node);
      }
      this.hooks.nodeChanged(node);
    };
    pods.on('add', (p) => index(p, true));
    pods.on('update', (p, old) => {
      if (old.spec?.nodeName !== p.spec?.nodeName) index(old, false);
      index(p, true);
    });
    pods.on('delete', (p) => index(p, false));
    daemonSets.on('add', () => this.hooks.everyNodeChanged());
    daemonSets.on('delete', () => this.hooks.everyNodeChanged());
    pods.on('synced', () => this.hooks.everyNodeChanged());
    this.watched.set(ns, w);
    pods.start();
    daemonSets.start();
  }
}
