/**
 * The keystone controller, added to any Manager (the podlife-controller binary and custom
 * controllers embed the same code); like every factory that takes the manager, it adds what it
 * builds and returns it (docs/adr/0192):
 *
 *     keystoneController(manager, { config: { keystoneLimit: 2 } });
 *
 * Guarantees:
 * - with namespace scoping it lists and watches pods per namespace only, so it needs (and is
 *   granted) no cluster-wide pod access (docs/adr/0061);
 * - the pod cache keeps only lifecycle fields (`keepLifecycleFields`), and pods without podlife
 *   annotations never even reach the work queue;
 * - with `managedPodsOnly` it lists and watches only pods labelled `podlife.dev/managed: "true"`
 *   (the API server filters), and counts annotated pods without the label
 *   (`podlife_unlabelled_annotated_pods`, docs/adr/0131);
 * - a pod is reconciled when it changes and when its decision says (a stage's deadline); with
 *   nothing running between reconciles, stopping the controller stops everything it does;
 * - stops reach pods/exec with the manager's own client's server and credentials unless told
 *   otherwise (`kubeConfig`, `exec`; `exec: false` for none): a controller built from a client
 *   alone can stop containers;
 * - with the exec strategy, one namespace holds at most a quarter of the workers with commands in
 *   flight (`execSlotsPerNamespace`, at least 1), however few workers it runs (docs/adr/0261).
 */
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { Controller, objectKey, silentLogger, type Informer, type KubeClient, type Manager } from '@podlife/core';
import { ManagedLabel } from './annotations.js';
import { KeystoneReconciler, type KeystoneReconcilerOptions } from './reconciler.js';
import { createExecApi, type PodExecApi } from './strategies/api.js';
import { DEFAULT_EXEC_SLOTS_PER_NAMESPACE } from './strategies/exec-slots.js';
import { hasPodlifeAnnotation, keepLifecycleFields } from './transform.js';
import { UnlabelledPodAudit } from './unlabelled.js';

/** Settings, transports and scoping of the keystone controller. */
export interface KeystoneControllerOptions extends Omit<KeystoneReconcilerOptions, 'client' | 'getPod' | 'events' | 'registry' | 'exec'> {
  /**
   * pods/exec transport, by default one to the manager's client's server (see `kubeConfig`);
   * `false`: no exec strategy, stops use ephemeral containers only (a controller without pods/exec rights).
   */
  exec?: PodExecApi | false;
  /**
   * Where pods/exec goes for the exec strategy. Default: the KubeConfig or connection the
   * manager's client was built from (`KubeClient.origin`), so a controller stops containers with
   * no more than its client.
   */
  kubeConfig?: KubeConfig;
  /**
   * Pods reconciled at once; default 64 (docs/adr/0181). A reconcile holds its worker while its
   * stop is delivered and its record written, so the default covers a trigger rate times a slow
   * API server's round trip, within the client's socket pool (128 by default).
   */
  concurrency?: number;
  /** List and watch only pods labelled `podlife.dev/managed: "true"`; default false. */
  managedPodsOnly?: boolean;
  /** How often, at most, the unlabelled-pod audit lists pods when `managedPodsOnly`; default 10 min. */
  unlabelledAuditIntervalMs?: number;
}

/** Pods the keystone controller reconciles at once unless told otherwise (docs/adr/0181). */
const DEFAULT_KEYSTONE_CONCURRENCY = 64;

/**
 * The exec slots one namespace gets with `concurrency` workers: a quarter of them, at least 1, so
 * that one tenant's hanging commands leave three quarters of the workers to the others.
 */
export function execSlotsPerNamespace(concurrency: number): number {
  return Number.isFinite(concurrency) ? Math.max(1, Math.floor(concurrency / 4)) : DEFAULT_EXEC_SLOTS_PER_NAMESPACE;
}

/** A core Controller running the KeystoneReconciler, with its pod informers. */
export class KeystoneController extends Controller {
  readonly keystone: KeystoneReconciler;
  readonly podInformers: readonly Informer<V1Pod>[];
  readonly unlabelled: UnlabelledPodAudit;

  constructor(reconciler: KeystoneReconciler, informers: readonly Informer<V1Pod>[], concurrency: number, unlabelled: UnlabelledPodAudit) {
    super({ name: 'keystone', reconciler, concurrency });
    this.keystone = reconciler;
    this.podInformers = informers;
    this.unlabelled = unlabelled;
  }
}

/** The pod list paths for a namespace scope (empty: the whole cluster). */
export function podPaths(namespaces: readonly string[]): string[] {
  return namespaces.length === 0 ? ['/api/v1/pods'] : namespaces.map((ns) => `/api/v1/namespaces/${encodeURIComponent(ns)}/pods`);
}

/** The KubeConfig of a client's own server and credentials: the one it was built from, or one made from its connection. */
export function kubeConfigOf(client: KubeClient): KubeConfig {
  const origin = client.origin();
  if ('kubeConfig' in origin) return origin.kubeConfig;
  const { server, ca, token, cert, key, insecureSkipTLSVerify } = origin.connection;
  const data = (pem: string | Buffer | undefined) => (pem === undefined ? {} : { data: Buffer.from(pem).toString('base64') });
  const caData = data(ca).data;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses a plain http:// server unless told to skip TLS checks: there is no TLS to check.
    clusters: [{ name: 'client', server, skipTLSVerify: insecureSkipTLSVerify === true || server.startsWith('http:'), ...(caData !== undefined ? { caData } : {}) }],
    users: [{ name: 'client', ...(token !== undefined ? { token } : {}), ...(cert !== undefined ? { certData: data(cert).data } : {}), ...(key !== undefined ? { keyData: data(key).data } : {}) }],
    contexts: [{ name: 'client', cluster: 'client', user: 'client' }],
    currentContext: 'client',
  });
  return kc;
}

/** The keystone controller on `manager`'s pod informers; add it with `manager.add`. */
export function keystoneController(manager: Manager, opts: KeystoneControllerOptions = {}): KeystoneController {
  const namespaces = opts.config?.namespaces ?? [];
  const labelSelector = opts.managedPodsOnly ? ManagedLabel.selector : undefined;
  const paths = podPaths(namespaces);
  const informers = paths.map((path) =>
    manager.informer<V1Pod>({ path, labelSelector, transform: keepLifecycleFields, name: `pods${namespaces.length ? ` ${path.split('/')[4]}` : ''}` }),
  );
  const byNamespace = new Map<string, Informer<V1Pod>>();
  namespaces.forEach((ns, i) => byNamespace.set(ns, informers[i] as Informer<V1Pod>));
  const getPod = (key: string): V1Pod | undefined => {
    const informer = namespaces.length === 0 ? informers[0] : byNamespace.get(key.slice(0, key.indexOf('/')));
    return informer?.store.get(key);
  };
  const concurrency = opts.concurrency ?? DEFAULT_KEYSTONE_CONCURRENCY;
  const perNamespace = execSlotsPerNamespace(concurrency);
  const reconciler = new KeystoneReconciler({
    ...opts,
    client: manager.client,
    getPod,
    events: manager.events,
    registry: manager.registry,
    exec: opts.exec === false ? undefined : (opts.exec ?? createExecApi(opts.kubeConfig ?? kubeConfigOf(manager.client), { client: manager.client, perNamespace })),
  });
  const unlabelled = new UnlabelledPodAudit({
    registry: manager.registry,
    logger: opts.logger ?? silentLogger(),
    ...(opts.managedPodsOnly
      ? { audit: { client: manager.client, paths, ...(opts.unlabelledAuditIntervalMs !== undefined ? { intervalMs: opts.unlabelledAuditIntervalMs } : {}) } }
      : { informers }),
  });
  const controller = new KeystoneController(reconciler, informers, concurrency, unlabelled);
  // Namespaces never acted in (ADR 0257): their pods are never queued.
  const excluded = new Set(opts.config?.excludedNamespaces ?? []);
  const ours = (pod: V1Pod): string[] => (hasPodlifeAnnotation(pod.metadata?.annotations) && !excluded.has(pod.metadata?.namespace ?? '') ? [objectKey(pod)] : []);
  for (const informer of informers) controller.watch(informer, ours);
  manager.add(controller);
  return controller;
}
