import assert from 'node:assert/strict';
import type { RequestOptions } from '../src/client.js';
import { listPages } from '../src/list.js';
import { FakeApiServer } from '../src/testing/index.js';

/** A client that answers every request with `page(n)`, n counting from 1, and records the queries. */
function scripted(page: (n: number) => unknown) {
  const queries: RequestOptions['query'][] = [];
  return { queries, client: { request: async <T>(o: RequestOptions) => (queries.push(o.query), page(queries.length) as T) } };
}

async function all<T>(pages: AsyncIterable<T[]>): Promise<T[]> {
  const items: T[] = [];
  for await (const p of pages) items.push(...p);
  return items;
}

describe('listPages: a list read in bounded pages', () => {
  it('follows continue tokens to the end, with the selectors and page size asked for', async () => {
    const server = await FakeApiServer.start();
    try {
      const client = server.client();
      for (let i = 0; i < 5; i++) await client.create('/api/v1/namespaces/a/pods', { metadata: { name: `p${i}`, labels: { keep: i % 2 === 0 ? 'yes' : 'no' } } });
      const names = (await all(listPages<{ metadata: { name: string } }>(client, '/api/v1/namespaces/a/pods', { pageSize: 1, query: { labelSelector: 'keep=yes' } }))).map((p) => p.metadata.name);
      assert.deepEqual(names, ['p0', 'p2', 'p4']);
      assert.deepEqual(server.requests.filter((r) => r.method === 'GET').map((r) => [r.query.limit, r.query.labelSelector]), [['1', 'keep=yes'], ['1', 'keep=yes'], ['1', 'keep=yes']]);
    } finally {
      await server.stop();
    }
  });

  it('a continue token that never ends is an error after maxPages pages, naming the list and the bound', async () => {
    const { client, queries } = scripted((n) => ({ items: [{ n }], metadata: { continue: `t${n}` } }));
    await assert.rejects(all(listPages(client, '/api/v1/nodes', { pageSize: 10, maxPages: 7 })), /^Error: listing \/api\/v1\/nodes: the API server still had more after 7 pages of 10 \(70 items\)/);
    assert.equal(queries.length, 7);
    assert.deepEqual(queries.slice(0, 2), [{ limit: 10, continue: undefined }, { limit: 10, continue: 't1' }]);
  });

  it('the last page may be the maxPages-th', async () => {
    const { client } = scripted((n) => ({ items: [n], metadata: n < 3 ? { continue: 'more' } : {} }));
    assert.deepEqual(await all(listPages(client, '/x', { maxPages: 3 })), [1, 2, 3]);
  });

  it('a page with more items than the limit is an error; a page without items is empty', async () => {
    await assert.rejects(all(listPages(scripted(() => ({ items: [1, 2, 3] })).client, '/x', { pageSize: 2 })), /^Error: listing \/x: the API server sent 3 items in a page of at most 2$/);
    assert.deepEqual(await all(listPages(scripted(() => ({ items: 'nope', metadata: { continue: 5 } })).client, '/x')), []);
    assert.deepEqual(await all(listPages(scripted(() => null).client, '/x')), []);
  });
});
