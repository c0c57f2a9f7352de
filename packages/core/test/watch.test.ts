import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { isGone } from '../src/client.js';
import type { KubeClient, Query } from '../src/client.js';
import { kubeListWatch, lines, parseEvent } from '../src/watch.js';

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
  it('passes each page through the transform before it asks for the next page', async () => {
    const calls: string[] = [];
    const pages: Record<string, { items: { metadata: { name: string } }[]; metadata: { continue?: string; resourceVersion: string } }> = {
      '': { items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }], metadata: { continue: 'p2', resourceVersion: '9' } },
      p2: { items: [{ metadata: { name: 'c' } }], metadata: { resourceVersion: '9' } },
    };
    const client = {
      get: async (_path: string, query?: Query) => {
        calls.push(`get ${String(query?.continue ?? '')}`);
        return structuredClone(pages[String(query?.continue ?? '')]);
      },
    } as unknown as KubeClient;
    const transport = kubeListWatch<{ metadata?: { name?: string } }>(client, { path: '/api/v1/pods', pageSize: 2 });
    const listed = await transport.list(new AbortController().signal, (obj) => {
      calls.push(`each ${obj.metadata?.name}`);
      return { metadata: { name: obj.metadata?.name?.toUpperCase() } };
    });
    assert.deepEqual(calls, ['get ', 'each a', 'each b', 'get p2', 'each c']);
    assert.deepEqual(listed.items.map((o) => o.metadata?.name), ['A', 'B', 'C']);
    assert.equal(listed.resourceVersion, '9');
  });
});
