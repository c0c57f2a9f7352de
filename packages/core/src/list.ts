/**
 * `listPages`: a collection read page by page with `limit` and `continue`, for a reader that must
 * end whatever the API server answers (a CLI, an audit).
 *
 * Guarantees: one page held at a time; at most `maxPages` requests, after which a continue token
 * still coming back is an error naming the collection and the bound; a page with more items than
 * the `limit` asked for is an error (no API server sends one), so the items read are at most
 * `maxPages × pageSize`; a page without `items` counts as empty.
 */
import type { KubeClient, Query } from './client.js';

/** How a list is read: the page size asked for and the most pages read. */
export interface ListPagesOptions {
  /** Query parameters besides `limit` and `continue` (selectors). */
  query?: Query;
  /** Accept header (e.g. `METADATA_LIST`). */
  accept?: string;
  /** Items asked for per page (`limit`); default 500. */
  pageSize?: number;
  /** Pages read at most; default no bound. */
  maxPages?: number;
}

interface Page<T> {
  items?: T[];
  metadata?: { continue?: string };
}

/** The pages of the collection at `path`, each as its items. */
export async function* listPages<T>(client: Pick<KubeClient, 'request'>, path: string, opts: ListPagesOptions = {}): AsyncGenerator<T[], void, undefined> {
  const pageSize = opts.pageSize ?? 500;
  const maxPages = opts.maxPages ?? Infinity;
  let token: string | undefined;
  for (let pages = 0; ; ) {
    const page = await client.request<Page<T> | undefined>({ path, accept: opts.accept, query: { ...opts.query, limit: pageSize, continue: token } });
    pages++;
    const items = Array.isArray(page?.items) ? page.items : [];
    if (items.length > pageSize) throw new Error(`listing ${path}: the API server sent ${items.length} items in a page of at most ${pageSize}`);
    yield items;
    token = typeof page?.metadata?.continue === 'string' && page.metadata.continue !== '' ? page.metadata.continue : undefined;
    if (token === undefined) return;
    if (pages >= maxPages) throw new Error(`listing ${path}: the API server still had more after ${maxPages} pages of ${pageSize} (${maxPages * pageSize} items), the most read of one list`);
  }
}
