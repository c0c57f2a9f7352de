/**
 * Pods with lifecycle annotations but without the label `podlife.dev/managed: "true"`: a controller
 * that watches only labelled pods never acts on them, so they are counted,
 * never silently ignored. The gauge `podlife_unlabelled_annotated_pods`:
 *
 * - watching every pod, it counts them in the pod cache at each scrape;
 * - watching only labelled pods, it is the result of the last audit: a paged list of the
 *   metadata of the pods *without* the label (the API server filters by `podlife.dev/managed!=true`,
 *   one page held at a time), started by a scrape when the last one is older than `intervalMs`
 *   (default 10 min), so nothing polls while nobody looks. NaN until the first audit ends.
 *
 * Each audit that finds some logs a warning naming the first ones. The audit's list,
 * `listUnlabelledAnnotated`, also serves whoever wants every name (`podlife explain --unlabelled`).
 */
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import { METADATA_LIST, listPages, objectKey, type Informer, type KubeClient, type Logger } from '@podlife/core';
import { ManagedLabel, hasManagedLabel } from './annotations.js';
import { Gauge, type Registry } from 'prom-client';
import { hasPodlifeAnnotation } from './transform.js';

/** The name of the gauge counting annotated pods without the managed label. */
export const UNLABELLED_GAUGE = 'podlife_unlabelled_annotated_pods';

/** True for a pod a managed-only controller does not see although it asks for podlife. */
export function isUnlabelledAnnotated(metadata: V1ObjectMeta | undefined): boolean {
  return hasPodlifeAnnotation(metadata?.annotations) && !hasManagedLabel(metadata?.labels);
}

/**
 * The metadata of the annotated pods without the managed label under `path` (a pods collection,
 * one namespace's or every namespace's): a metadata-only list that the API server filters by
 * `podlife.dev/managed!=true` (which also matches pods without the label), read in pages of
 * `pageSize`, one page held at a time, at most `maxPages` of them (core's `listPages`). A failed
 * request, or a list longer than that, ends the iteration with an error.
 */
export async function* listUnlabelledAnnotated(
  client: Pick<KubeClient, 'request'>,
  path: string,
  pageSize = 500,
  maxPages = Infinity,
): AsyncGenerator<{ metadata?: V1ObjectMeta }, void, undefined> {
  const query = { labelSelector: `${ManagedLabel.key}!=${ManagedLabel.value}` };
  for await (const items of listPages<{ metadata?: V1ObjectMeta }>(client, path, { accept: METADATA_LIST, query, pageSize, maxPages })) {
    for (const item of items) if (isUnlabelledAnnotated(item?.metadata)) yield item;
  }
}

/** Where the audit reports, how it lists pods, and how often it may run. */
export interface UnlabelledAuditOptions {
  registry: Registry;
  logger: Logger;
  /** Watching every pod: count in these caches. */
  informers?: readonly Informer<V1Pod>[];
  /** Watching labelled pods only: audit these list paths through `client`. */
  audit?: { client: KubeClient; paths: readonly string[]; intervalMs?: number; pageSize?: number };
}

/** What one audit found: how many, and the first few keys. */
export interface UnlabelledFinding {
  count: number;
  examples: string[];
}

const EXAMPLES = 5;

/** Counts annotated pods a managed-only controller cannot see (see above). */
export class UnlabelledPodAudit {
  private readonly opts: UnlabelledAuditOptions;
  private last: { at: number; finding: UnlabelledFinding } | undefined;
  private running: Promise<UnlabelledFinding> | undefined;

  constructor(opts: UnlabelledAuditOptions) {
    this.opts = opts;
    const existing = opts.registry.getSingleMetric(UNLABELLED_GAUGE);
    if (existing) opts.registry.removeSingleMetric(UNLABELLED_GAUGE);
    const audit = this;
    new Gauge({
      name: UNLABELLED_GAUGE,
      help: 'Pods with podlife lifecycle annotations but not the label podlife.dev/managed=true',
      registers: [opts.registry],
      collect() {
        this.set(audit.current());
      },
    });
  }

  /** The figure a scrape reports now (and, when auditing, a fresh audit started if due). */
  current(): number {
    if (!this.opts.audit) return this.fromCaches().count;
    const interval = this.opts.audit.intervalMs ?? 600_000;
    if (!this.running && (!this.last || Date.now() - this.last.at >= interval)) {
      this.audit().catch((err: unknown) => this.opts.logger.warn({ err }, 'audit of unlabelled annotated pods failed'));
    }
    return this.last?.finding.count ?? Number.NaN;
  }

  /** Counts in the caches (watching every pod). */
  fromCaches(): UnlabelledFinding {
    const finding: UnlabelledFinding = { count: 0, examples: [] };
    for (const informer of this.opts.informers ?? []) {
      for (const pod of informer.store.list()) if (isUnlabelledAnnotated(pod.metadata)) note(finding, objectKey(pod));
    }
    return finding;
  }

  /** Lists the metadata of unlabelled pods, page by page, and counts the annotated ones. */
  audit(): Promise<UnlabelledFinding> {
    const audit = this.opts.audit;
    if (!audit) return Promise.resolve(this.fromCaches());
    this.running ??= this.scan(audit).finally(() => (this.running = undefined));
    return this.running;
  }

  private async scan(audit: NonNullable<UnlabelledAuditOptions['audit']>): Promise<UnlabelledFinding> {
    const finding: UnlabelledFinding = { count: 0, examples: [] };
    for (const path of audit.paths) {
      for await (const item of listUnlabelledAnnotated(audit.client, path, audit.pageSize)) note(finding, objectKey(item));
    }
    this.last = { at: Date.now(), finding };
    if (finding.count > 0) {
      this.opts.logger.warn(
        { count: finding.count, examples: finding.examples },
        `pods with lifecycle annotations but without the label ${ManagedLabel.selector} are not watched; label them (podlife explain <pod> says so too)`,
      );
    }
    return finding;
  }
}

function note(finding: UnlabelledFinding, key: string): void {
  finding.count++;
  if (finding.examples.length < EXAMPLES) finding.examples.push(key);
}
