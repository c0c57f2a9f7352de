/**
 * One measurement, in a process of its own so its RSS holds nothing but what it measures:
 * `Informer`s over a real `KubeClient` read the fake API's pods (and, for the controller's
 * variants, its nodes) — a streaming list, or paged where the API refuses streaming; parsed from
 * bytes as in production — keep watching, and once synced the process reports its memory.
 *
 * The informer transforms each object as its event arrives (streaming) or as it is read from a
 * page (paged, ADR 0281), so the peak during the initial sync is the slimmed cache plus what the
 * garbage collector has not yet reclaimed.
 *
 * Run by run.ts with `--expose-gc` and an IPC channel, over which it sends one `Measurement`.
 */
import { readFileSync } from 'node:fs';
import { Informer, KubeClient, Manager, silentLogger, type InformerOptions, type KubeObject } from '@podlife/core';
import { OPT_IN_EVERY } from './opt-in.js';
import { TRANSFORMS, type TransformName } from './transforms.js';

/**
 * `optIn`: the lifecycle view of only the pods labelled podlife.dev/managed=true (DESIGN 3.7).
 * The controller's own caches, for sizing it (deploy/README.md): `keystone`, what it holds with
 * keystone and node-readiness (keystone's pod cache, `keepLifecycleFields`); `keystoneManaged`,
 * the same with `--managed-pods-only`; `keystoneAndNetwork`, the default controllers plus
 * node-readiness: that and the network-conditions controller's cache of every pod
 * (`stripManagedFields`). With nodes in the cluster, each of them also holds the controller's two
 * node caches (node-readiness's and the webhook's).
 */
/** Empty-list processes: `baseline` loads core, `baselineController` the controller package too (the floor of the controller's variants). */
export type Variant = 'baseline' | 'baselineController' | TransformName | 'optIn' | 'keystone' | 'keystoneManaged' | 'keystoneAndNetwork';

type ControllerVariant = 'keystone' | 'keystoneManaged' | 'keystoneAndNetwork';

const MANAGED = 'podlife.dev/managed=true';
const PODS = '/api/v1/pods';
const NODES = '/api/v1/nodes';

type Cache = Omit<InformerOptions<KubeObject>, 'client'>;

/** The Deployment's flags for the controllers each sizing variant stands for (deploy/README.md's sizes). */
const CONTROLLER_FLAGS: Record<ControllerVariant, string[]> = {
  keystone: ['--controllers=keystone,node-readiness'],
  keystoneManaged: ['--controllers=keystone,node-readiness', '--managed-pods-only'],
  keystoneAndNetwork: ['--controllers=keystone,network-conditions,node-readiness'],
};
/** As the Deployment runs it: with the webhook, which keeps its own node cache. */
const WEBHOOK_FLAGS = ['--webhook-port=9443', '--tls-cert-file=tls.crt', '--tls-key-file=tls.key'];

/**
 * The informers a podlife-controller process with these flags holds: what `ControllerApp` asks
 * its Manager for while it is built (it is never started; `Manager.prototype.informer` is wrapped
 * for that long only). So the bench syncs the controller's own caches with its own transforms,
 * including those no package exports (the webhook's node transform, `keepKubeletVersion`), and a
 * cache app.ts adds shows in the next sizing run.
 */
async function controllerCaches(client: KubeClient, variant: ControllerVariant): Promise<Cache[]> {
  const { ControllerApp, defaultConfig, parseFlags } = await import('@podlife/controller');
  const parsed = parseFlags([...CONTROLLER_FLAGS[variant], ...WEBHOOK_FLAGS]);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  const asked: Cache[] = [];
  const informer = Manager.prototype.informer;
  Manager.prototype.informer = function <T extends KubeObject>(this: Manager, opts: Omit<InformerOptions<T>, 'client'>) {
    asked.push(opts as Cache);
    return Reflect.apply(informer, this, [opts]) as Informer<T>;
  };
  try {
    new ControllerApp({ flags: parsed.flags, config: defaultConfig, client, logger: silentLogger() });
  } finally {
    Manager.prototype.informer = informer;
  }
  // Nothing recorded means the app was built on another copy of core's Manager than this one.
  if (!asked.some((c) => c.path === PODS)) throw new Error(`ControllerApp (${variant}) asked this Manager for no pod cache`);
  return asked;
}

/**
 * The informers a variant runs in one process. The controller's variants load the controller
 * package, as the controller does; the others load only what an informer needs (core).
 */
async function caches(client: KubeClient, variant: Exclude<Variant, 'baseline'>): Promise<Cache[]> {
  switch (variant) {
    case 'baselineController':
      await import('@podlife/controller');
      return [{ path: PODS }];
    case 'none':
      return [{ path: PODS }];
    case 'stripManagedFields':
    case 'lifecycleView':
      return [{ path: PODS, transform: TRANSFORMS[variant] as Cache['transform'] }];
    case 'optIn':
      return [{ path: PODS, transform: TRANSFORMS.lifecycleView as Cache['transform'], labelSelector: MANAGED }];
    default:
      return controllerCaches(client, variant);
  }
}

export interface Measurement {
  transform: Variant;
  /** Pods held, over all pod caches. */
  pods: number;
  /** Nodes held, over all node caches. */
  nodes: number;
  /** The caches held: what each lists and its transform. */
  caches: string[];
  /** Caches the controller holds that the fake API does not serve (so not in the figures). */
  notHeld: string[];
  syncMs: number;
  /** RSS right after sync and a full collection. */
  rssAtSync: number;
  /** RSS (and the heap figures below) after `idleMs` of idling and another full collection. */
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /**
   * The RSS split as Linux reports it (/proc/self/status), read with `rss`: anonymous memory (the
   * heaps, buffers) and file-backed pages (the node binary's mapped code and data, which the kernel
   * shares between processes and can reclaim). Undefined where /proc is not there.
   */
  rssAnon: number | undefined;
  rssFile: number | undefined;
  /** Peak RSS over the process's life (the initial list is its high point). */
  maxRss: number;
  /** What made up the RSS at its highest sample during the sync (every SAMPLE_MS), for finding where the transient goes. */
  atPeak: PeakSample | undefined;
  /** Committed bytes per V8 space at the steady state (`rss`), to set against `atPeak`'s. */
  steadySpaces: Record<string, number>;
  heapLimit: number;
  /** Errors the informer emitted before it synced (e.g. a list page timing out, then a relist). */
  errors: string[];
  /** How the informer read the collection: one streaming watch, or a paged list. */
  syncPath: string;
}

/** How often the sync's memory is sampled. */
const SAMPLE_MS = 20;

/**
 * One sample of the process's memory: RSS, V8's heap (committed and used, and committed per
 * space), and the memory outside it that Node accounts (external, of which array buffers).
 */
export interface PeakSample {
  atMs: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** Committed bytes per V8 space (new_space, old_space, large_object_space, ...). */
  spaces: Record<string, number>;
  /** Full (mark-compact) collections that had run by then, and scavenges. */
  majorGcs: number;
  minorGcs: number;
}

/** Committed bytes by space name. */
function spaceSizes(stats: readonly { space_name: string; space_size: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const sp of stats) out[sp.space_name] = sp.space_size;
  return out;
}

/** Samples memory every SAMPLE_MS until stopped and keeps the sample with the highest RSS. */
async function peakSampler(): Promise<{ stop: () => PeakSample | undefined }> {
  const v8 = await import('node:v8');
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  let majorGcs = 0;
  let minorGcs = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = ((e as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) majorGcs++;
      else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) minorGcs++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const t0 = performance.now();
  let peak: PeakSample | undefined;
  const sample = (): void => {
    const rss = process.memoryUsage.rss();
    if (peak && rss <= peak.rss) return;
    const m = process.memoryUsage();
    const spaces = spaceSizes(v8.getHeapSpaceStatistics());
    peak = { atMs: performance.now() - t0, rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, spaces, majorGcs, minorGcs };
  };
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    stop: () => {
      sample();
      clearInterval(timer);
      observer.disconnect();
      return peak;
    },
  };
}

/**
 * A full collection that also compacts the old space as far as it goes ("last resort"), as V8's
 * memory reducer does in an idle process: with a plain full collection the steady state depended
 * on whether the reducer had run during the idle spell, 35-45 MiB apart (docs/adr/0276).
 */
function gc(): void {
  const collect = (globalThis as { gc?: (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void }).gc;
  if (!collect) throw new Error('run with --expose-gc: measuring without a full collection would report garbage as cache');
  collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

async function settle(): Promise<void> {
  // Several full collections with turns of the event loop between them, so weak callbacks and
  // finalizers run and what survives is the cache alone.
  for (let k = 0; k < 4; k++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** RssAnon and RssFile of /proc/self/status, in bytes; undefined where there is no such file. */
function rssSplit(): { anon: number; file: number } | undefined {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string): number | undefined => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const anon = kib('RssAnon');
  const file = kib('RssFile');
  return anon === undefined || file === undefined ? undefined : { anon, file };
}

/** What a cache lists and how it slims it, e.g. `nodes slimNode`. */
function describe(c: Cache): string {
  const what = c.path === PODS ? 'pods' : c.path === NODES ? 'nodes' : (c.name ?? c.path);
  return `${what} ${c.transform?.name || 'untransformed'}${c.labelSelector ? ` (${c.labelSelector})` : ''}`;
}

async function measure(server: string, variant: Variant, clusterPods: number, clusterNodes: number, idleMs: number): Promise<Measurement> {
  const { getHeapStatistics, getHeapSpaceStatistics } = await import('node:v8');
  // An address and no credentials, as an in-cluster process is handed them: no kubeconfig, so
  // the client library's generated API is not loaded (core imports only its types).
  const client = KubeClient.fromConnection({ server });
  const empty = variant === 'baseline' || variant === 'baselineController';
  const asked = variant === 'baseline' ? [{ path: PODS }] : await caches(client, variant);
  // Node caches only where the cluster has nodes, so runs without them hold what they always held.
  const wanted = asked.filter((c) => c.path === PODS || (c.path === NODES && clusterNodes > 0));
  const notHeld = asked.filter((c) => !wanted.includes(c) && !(c.path === NODES && clusterNodes === 0)).map(describe);
  const expected = (c: Cache): number => (c.path === NODES ? clusterNodes : empty ? 0 : c.labelSelector ? Math.ceil(clusterPods / OPT_IN_EVERY) : clusterPods);
  const errors: string[] = [];
  let events = 0;
  const informers = wanted.map((c, i) => {
    const path = empty ? '/api/v1/namespaces/empty/pods' : c.path;
    const informer = new Informer<KubeObject>({ ...c, client, path, name: `bench ${variant} ${i}` });
    informer.on('error', (err) => errors.push(err.message));
    informer.on('add', () => events++);
    return informer;
  });

  const sampler = await peakSampler();
  const started = performance.now();
  for (const informer of informers) informer.start();
  await Promise.all(informers.map((informer) => informer.waitForSync()));
  const syncMs = performance.now() - started;
  const atPeak = sampler.stop();
  let pods = 0;
  let nodes = 0;
  for (const [i, informer] of informers.entries()) {
    const cache = wanted[i] as Cache;
    const want = expected(cache);
    if (informer.store.size !== want) throw new Error(`store ${i} (${describe(cache)}) holds ${informer.store.size} objects after sync, expected ${want}`);
    if (cache.path === NODES) nodes += want;
    else pods += want;
  }
  if (events !== pods + nodes) throw new Error(`informers emitted ${events} add events, expected ${pods + nodes}`);

  await settle();
  const rssAtSync = process.memoryUsage().rss;
  // V8's memory reducer returns unused heap pages only after several seconds of low allocation;
  // a controller lives far longer than that, so its steady state is measured after an idle spell.
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  await settle();
  const mem = process.memoryUsage();
  const split = rssSplit();
  const result: Measurement = {
    transform: variant,
    pods,
    nodes,
    caches: wanted.map(describe),
    notHeld,
    syncMs,
    rssAtSync,
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    heapTotal: mem.heapTotal,
    external: mem.external,
    arrayBuffers: mem.arrayBuffers,
    rssAnon: split?.anon,
    rssFile: split?.file,
    maxRss: process.resourceUsage().maxRSS * 1024,
    atPeak,
    steadySpaces: spaceSizes(getHeapSpaceStatistics()),
    heapLimit: getHeapStatistics().heap_size_limit,
    errors,
    syncPath: informers[0]?.lastSyncPath ?? 'none',
  };
  await Promise.all(informers.map((informer) => informer.stop()));
  client.close();
  return result;
}

const [server, transform, expected, nodes, idleMs] = process.argv.slice(2);
if (!server || !transform || expected === undefined || nodes === undefined || idleMs === undefined) {
  console.error('usage: measure.ts <server-url> <variant> <pods-in-the-cluster> <nodes-in-the-cluster> <idle-ms>');
  process.exit(2);
}
try {
  const result = await measure(server, transform as Variant, Number(expected), Number(nodes), Number(idleMs));
  if (!process.send) throw new Error('measure.ts reports over IPC: start it from run.ts');
  process.send(result, () => process.exit(0));
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
