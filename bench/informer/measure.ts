/**
 * One measurement, in a process of its own so its RSS holds nothing but what it measures: an
 * `Informer` over a real `KubeClient` reads the fake API's pods (a streaming list, or paged
 * where the API refuses streaming; parsed from bytes as in production), keeps watching, and
 * once synced the process reports its memory.
 *
 * The informer transforms each pod as its event arrives (streaming) or each page as it arrives
 * (paged), so the peak during the initial sync is the slimmed cache plus what the garbage
 * collector has not yet reclaimed.
 *
 * Run by run.ts with `--expose-gc` and an IPC channel, over which it sends one `Measurement`.
 */
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { Informer, KubeClient, stripManagedFields } from '@podlife/core';
import { OPT_IN_EVERY } from './api.js';
import { TRANSFORMS, type TransformName } from './transforms.js';

/**
 * `optIn`: the lifecycle view of only the pods labelled podlife.dev/managed=true (DESIGN 3.7).
 * The controller's own pod caches, for sizing it (deploy/README.md): `keystone`, the keystone
 * controller's transform (`keepLifecycleFields`); `keystoneManaged`, the same with
 * `--managed-pods-only`; `keystoneAndNetwork`, what the default controllers cache: that and the
 * network-conditions controller's cache of every pod (`stripManagedFields`), in one process.
 */
/** Empty-list processes: `baseline` loads core, `baselineController` the controller package too (the floor of the controller's variants). */
export type Variant = 'baseline' | 'baselineController' | TransformName | 'optIn' | 'keystone' | 'keystoneManaged' | 'keystoneAndNetwork';

const MANAGED = 'podlife.dev/managed=true';

type Cache = { transform?: (pod: V1Pod) => V1Pod; labelSelector?: string };

/**
 * The informers a variant runs in one process. The controller's variants load the controller
 * package, as the controller does; the others load only what an informer needs (core).
 */
async function caches(variant: Exclude<Variant, 'baseline'>): Promise<Cache[]> {
  if (variant === 'baselineController') {
    await import('@podlife/controller');
    return [{}];
  }
  switch (variant) {
    case 'none':
      return [{}];
    case 'stripManagedFields':
      return [{ transform: TRANSFORMS.stripManagedFields }];
    case 'lifecycleView':
      return [{ transform: TRANSFORMS.lifecycleView }];
    case 'optIn':
      return [{ transform: TRANSFORMS.lifecycleView, labelSelector: MANAGED }];
    default: {
      await import('@podlife/controller');
      const { keepLifecycleFields } = await import('@podlife/keystone');
      if (variant === 'keystone') return [{ transform: keepLifecycleFields }];
      if (variant === 'keystoneManaged') return [{ transform: keepLifecycleFields, labelSelector: MANAGED }];
      return [{ transform: keepLifecycleFields }, { transform: stripManagedFields }];
    }
  }
}

export interface Measurement {
  transform: Variant;
  pods: number;
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
  heapLimit: number;
  /** Errors the informer emitted before it synced (e.g. a list page timing out, then a relist). */
  errors: string[];
  /** How the informer read the collection: one streaming watch, or a paged list. */
  syncPath: string;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc: measuring without a full collection would report garbage as cache');
  collect();
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

async function measure(server: string, variant: Variant, clusterPods: number, idleMs: number): Promise<Measurement> {
  const { getHeapStatistics } = await import('node:v8');
  // An address and no credentials, as an in-cluster process is handed them: no kubeconfig, so
  // the client library's generated API is not loaded (core imports only its types).
  const client = KubeClient.fromConnection({ server });
  const empty = variant === 'baseline' || variant === 'baselineController';
  const path = empty ? '/api/v1/namespaces/empty/pods' : '/api/v1/pods';
  const wanted = variant === 'baseline' ? [{}] : await caches(variant);
  const expected = (labelSelector: string | undefined): number => (empty ? 0 : labelSelector ? Math.ceil(clusterPods / OPT_IN_EVERY) : clusterPods);
  const errors: string[] = [];
  let events = 0;
  const informers = wanted.map(({ transform, labelSelector }, i) => {
    const informer = new Informer<V1Pod>({ client, path, transform, labelSelector, name: `bench ${variant} ${i}` });
    informer.on('error', (err) => errors.push(err.message));
    informer.on('add', () => events++);
    return informer;
  });

  const started = performance.now();
  for (const informer of informers) informer.start();
  await Promise.all(informers.map((informer) => informer.waitForSync()));
  const syncMs = performance.now() - started;
  let pods = 0;
  for (const [i, informer] of informers.entries()) {
    const want = expected(wanted[i]?.labelSelector);
    if (informer.store.size !== want) throw new Error(`store ${i} holds ${informer.store.size} pods after sync, expected ${want}`);
    pods += want;
  }
  if (events !== pods) throw new Error(`informers emitted ${events} add events, expected ${pods}`);

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
    heapLimit: getHeapStatistics().heap_size_limit,
    errors,
    syncPath: informers[0]?.lastSyncPath ?? 'none',
  };
  await Promise.all(informers.map((informer) => informer.stop()));
  client.close();
  return result;
}

const [server, transform, expected, idleMs] = process.argv.slice(2);
if (!server || !transform || expected === undefined || idleMs === undefined) {
  console.error('usage: measure.ts <server-url> <variant> <pods-in-the-cluster> <idle-ms>');
  process.exit(2);
}
try {
  const result = await measure(server, transform as Variant, Number(expected), Number(idleMs));
  if (!process.send) throw new Error('measure.ts reports over IPC: start it from run.ts');
  process.send(result, () => process.exit(0));
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}
