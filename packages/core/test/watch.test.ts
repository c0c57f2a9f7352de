import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { Readable } from 'node:stream';
import { ApiError, isGone } from '../src/client.js';
import type { KubeClient, Query, RequestOptions } from '../src/client.js';
import { EXPIRED_LIST_ATTEMPTS, isInitialEventsEnd, kubeListWatch, lines, parseEvent, refusesStreamingList } from '../src/watch.js';
import { pagedClient } from './support/paged-client.js';
import { until } from './support/until.js';

async function collect(chunks: (string | Buffer)[]): Promise<string[]> {
  async function* source(): AsyncGenerator<string | Buffer> {
    yield* chunks;
  }
  const out: string[] = [];
  for await (const line of lines(source())) out.push(line);
  return out;
}

describe('watch stream framing', () => {
  it('splits line-delimited JSON across chunk boundaries', async () => {
    assert.deepEqual(await collect(['{"a":', '1}\n{"b"', ':2}\n\n{"c":3}']), ['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('yields every line of a large chunk in order and carries its unfinished tail', async () => {
    const many = Array.from({ length: 5000 }, (_, i) => `{"i":${i}}`);
    const out = await collect([`${many.join('\n')}\n{"tail":`, '1}\n']);
    assert.equal(out.length, 5001);
    assert.equal(out[4999], '{"i":4999}');
    assert.equal(out[5000], '{"tail":1}');
  });

  it('decodes a multi-byte character split between chunks', async () => {
    const bytes = Buffer.from('{"n":"é"}\n');
    assert.deepEqual(await collect([bytes.subarray(0, 7), bytes.subarray(7)]), ['{"n":"é"}']);
  });
});

describe('watch events', () => {
  it('parses a bookmark', () => {
    const ev = parseEvent('{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}', '/api/v1/pods');
    assert.equal(ev?.type, 'BOOKMARK');
  });

  it('throws an ERROR event with code 410 as an error isGone recognises', () => {
    const line = '{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version: 1 (5)"}}';
    assert.throws(() => parseEvent(line, '/api/v1/pods'), (err: unknown) => isGone(err));
  });

  it('names the path when a line is not JSON', () => {
    assert.throws(() => parseEvent('not json', '/api/v1/pods'), /\/api\/v1\/pods: malformed/);
  });

  it('skips event types it does not know', () => {
    assert.equal(parseEvent('{"type":"SOMETHING","object":{}}', '/x'), undefined);
  });
});

describe('paged list', () => {
  type Named = { apiVersion?: string; kind?: string; metadata?: { name?: string } };
  const list = (names: string[], metadata: Record<string, unknown>): Record<string, unknown> => ({ kind: 'PodList', apiVersion: 'v1', metadata, items: names.map((name) => ({ metadata: { name } })) });

  it('passes each page through the transform before it asks for the next page', async () => {
    const calls: string[] = [];
    const pages: Record<string, Record<string, unknown>> = {
      '': list(['a', 'b'], { continue: 'p2', resourceVersion: '9' }),
      p2: list(['c'], { resourceVersion: '9' }),
    };
    const { client } = pagedClient((query) => {
      calls.push(`get ${String(query.continue ?? '')}`);
      return pages[String(query.continue ?? '')]!;
    });
    const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods', pageSize: 2 });
    const listed = await transport.list(new AbortController().signal, (obj) => {
      calls.push(`each ${obj.metadata?.name}`);
      return { metadata: { name: obj.metadata?.name?.toUpperCase() } };
    });
    assert.deepEqual(calls, ['get ', 'each a', 'each b', 'get p2', 'each c']);
    assert.deepEqual(listed.items.map((o) => o.metadata?.name), ['A', 'B', 'C']);
    assert.equal(listed.resourceVersion, '9');
  });

  it("transforms each item as soon as its bytes are in, before the rest of the page arrives", async () => {
    const calls: string[] = [];
    async function* body(): AsyncGenerator<string> {
      yield '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"4"},"items":[{"metadata":{"name":"a"}},';
      await until(() => calls.includes('each a'));
      calls.push('rest of the page sent');
      yield '{"metadata":{"name":"b"}}]}';
    }
    const { client } = pagedClient(() => body());
    const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods' });
    await transport.list(new AbortController().signal, (obj) => {
      calls.push(`each ${obj.metadata?.name}`);
      return obj;
    });
    assert.deepEqual(calls, ['each a', 'rest of the page sent', 'each b']);
  });

  it('gives list items the apiVersion and kind a watch event carries, also when a page names them after its items', async () => {
    const seen: Named[] = [];
    const { client } = pagedClient((query) =>
      query.continue === undefined
        ? list(['a'], { continue: 'p2', resourceVersion: '3' })
        : '{"items":[{"metadata":{"name":"b"}},{"kind":"Other","metadata":{"name":"c"}}],"metadata":{"resourceVersion":"3"},"apiVersion":"v1","kind":"PodList"}',
    );
    const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods' });
    await transport.list(new AbortController().signal, (obj) => (seen.push(obj), obj));
    assert.deepEqual(
      seen.map((o) => [o.metadata?.name, o.apiVersion, o.kind]),
      [
        ['a', 'v1', 'Pod'],
        ['b', 'v1', 'Pod'],
        ['c', 'v1', 'Other'],
      ],
    );
  });

  it('reads a page without items, or with null items, as empty', async () => {
    for (const body of ['{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"8"}}', '{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"8"},"items":null}']) {
      const transport = kubeListWatch<Named>(pagedClient(() => body).client, { path: '/api/v1/pods' });
      assert.deepEqual(await transport.list(new AbortController().signal, (obj) => obj), { items: [], resourceVersion: '8' });
    }
  });

  it('names the path and what is wrong when a page is not a JSON list, and asks for no further page', async () => {
    const cases: [string, RegExp][] = [
      ['<html>', /listing \/api\/v1\/pods: the answer is not a JSON list: expected "\{" at byte 0, found "<"/],
      ['{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":', /listing \/api\/v1\/pods: the answer ended after \d+ bytes, before its JSON object did \(inside items, 1 read\)/],
      ['{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":}}]}', /listing \/api\/v1\/pods: item 0 in the answer is not JSON/],
      ['{"kind":"PodList","apiVersion":"v1","items":[7]}', /listing \/api\/v1\/pods: an item of the answer is 7, not an object/],
      ['{"kind":"PodList","items":"none"}', /listing \/api\/v1\/pods: the answer's "items" is "none", not an array/],
    ];
    for (const [body, message] of cases) {
      const { client, asked } = pagedClient(() => body);
      const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods' });
      await assert.rejects(transport.list(new AbortController().signal, (obj) => obj), message);
      assert.equal(asked.length, 1, body);
    }
  });

  /** A server of two pages whose continue token expires the first `expiring` times it is used. */
  function expiringServer(expiring: number): { client: KubeClient; asked: Query[] } {
    let expired = 0;
    let lists = 0;
    return pagedClient((query) => {
      if (query.continue === undefined) {
        const rv = String(10 + ++lists);
        return list(['a', 'b'], { continue: `after-b-at-${rv}`, resourceVersion: rv });
      }
      if (expired < expiring) {
        expired++;
        return new ApiError(410, 'Expired', 'The provided continue parameter is too old to display a consistent list result.', undefined);
      }
      return list(['c'], { resourceVersion: String(query.continue).slice('after-b-at-'.length) });
    });
  }

  it('starts over in pages from a fresh read when a continue token expires, keeping nothing of the expired list', async () => {
    const { client, asked } = expiringServer(1);
    const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods', pageSize: 2 });
    let transformed = 0;
    const listed = await transport.list(new AbortController().signal, (obj) => {
      transformed++;
      return obj;
    });
    assert.deepEqual(asked.map((q) => [q.limit, q.continue]), [
      [2, undefined],
      [2, 'after-b-at-11'],
      [2, undefined],
      [2, 'after-b-at-12'],
    ]);
    assert.deepEqual(listed.items.map((o) => o.metadata?.name), ['a', 'b', 'c']);
    assert.equal(listed.resourceVersion, '12');
    assert.equal(transformed, 5, 'the first attempt\'s two objects, then all three again');
  });

  it(`throws the 410 after ${EXPIRED_LIST_ATTEMPTS} expired lists, and never asks for an unpaged list`, async () => {
    const { client, asked } = expiringServer(Infinity);
    const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods', pageSize: 2 });
    await assert.rejects(transport.list(new AbortController().signal, (obj) => obj), (err: unknown) => isGone(err));
    assert.equal(asked.length, 2 * EXPIRED_LIST_ATTEMPTS);
    assert.ok(asked.every((q) => q.limit === 2), `every request is paged: ${JSON.stringify(asked)}`);
  });

  it('throws any other error of a page at once, without listing again', async () => {
    const { client, asked } = pagedClient((query) => (query.continue ? new ApiError(500, 'InternalError', 'etcd is unavailable', undefined) : list(['a'], { continue: 'next', resourceVersion: '5' })));
    const transport = kubeListWatch<Named>(client, { path: '/api/v1/pods', pageSize: 1 });
    await assert.rejects(transport.list(new AbortController().signal, (obj) => obj), /etcd is unavailable/);
    assert.equal(asked.length, 2);
  });
});

describe('streaming list', () => {
  it('asks for the initial events from a consistent read, with bookmarks, and yields them then the end bookmark', async () => {
    const asked: Query[] = [];
    const body = [
      { type: 'ADDED', object: { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '5' } } },
      { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } } },
    ].map((e) => `${JSON.stringify(e)}\n`);
    const client = {
      stream: async (req: RequestOptions) => {
        asked.push(req.query ?? {});
        return Readable.from(body);
      },
    } as unknown as KubeClient;
    const transport = kubeListWatch<{ metadata?: { name?: string } }>(client, { path: '/api/v1/pods', labelSelector: 'podlife.dev/managed=true' });
    const events = [];
    for await (const e of transport.watchList!(new AbortController().signal)) events.push(e);
    assert.deepEqual(
      { ...asked[0], timeoutSeconds: undefined },
      { labelSelector: 'podlife.dev/managed=true', fieldSelector: undefined, watch: true, allowWatchBookmarks: true, resourceVersion: '', sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', timeoutSeconds: undefined },
    );
    assert.deepEqual(events.map((e) => e.type), ['ADDED', 'BOOKMARK']);
    assert.equal(isInitialEventsEnd(events[0]!), false);
    assert.equal(isInitialEventsEnd(events[1]!), true);
  });

  it('counts a client error as a refusal (422 while WatchList is off), but not 410, 429 or a server error', () => {
    const err = (status: number): ApiError => new ApiError(status, 'x', 'x', undefined);
    assert.equal(refusesStreamingList(err(422)), true);
    assert.equal(refusesStreamingList(err(400)), true);
    assert.equal(refusesStreamingList(err(410)), false);
    assert.equal(refusesStreamingList(err(429)), false);
    assert.equal(refusesStreamingList(err(500)), false);
    assert.equal(refusesStreamingList(new Error('connection reset')), false);
  });
});
