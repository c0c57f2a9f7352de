import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { readPage, type PageFields } from '../src/page.js';

/** `body` in chunks of `size` bytes. */
async function* chunked(body: string | Buffer, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function read(body: string | Buffer, size = 1 << 16): Promise<{ items: unknown[]; fields: PageFields; seen: PageFields[] }> {
  const items: unknown[] = [];
  const seen: PageFields[] = [];
  const fields = await readPage(chunked(body, size), 'listing /api/v1/pods', (item, sofar) => {
    items.push(item);
    seen.push({ ...sofar });
  });
  return { items, fields, seen };
}

describe('readPage: a list answer, one item at a time', () => {
  // Brackets, quotes, escapes and a multi-byte character inside strings, where a reader that
  // counted brackets outside strings only would cut an item short.
  const tricky = [
    { metadata: { name: 'a', annotations: { 'x/y': '{"k":["]"]}', escaped: 'back\\slash \\" quote', unicode: 'é ✓ 𝄞' } }, spec: { n: -1.5e3, t: true, f: false, z: null, e: [], o: {} } },
    { metadata: { name: 'b' } },
    'a string item',
    42,
  ];
  const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7', continue: 'tok"en' }, items: tricky, extra: [1, { two: 2 }] });

  it('hands over every item as JSON.parse reads it, whatever the chunk size (down to one byte)', async () => {
    for (const size of [1, 2, 3, 5, 13, 64, 1 << 16]) {
      const { items, fields } = await read(body, size);
      assert.deepEqual(items, tricky, `chunks of ${size}`);
      assert.deepEqual(fields, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7', continue: 'tok"en' }, extra: [1, { two: 2 }] }, `chunks of ${size}`);
    }
  });

  it('gives each item the fields read before it, as the API server writes kind and metadata first', async () => {
    const { seen } = await read('{"kind":"PodList","items":[{"a":1}],"metadata":{"resourceVersion":"3"}}', 4);
    assert.deepEqual(seen, [{ kind: 'PodList' }]);
  });

  it('accepts white space anywhere JSON does, and no items, empty items or null items', async () => {
    assert.deepEqual((await read(' \n{ "kind" : "PodList" ,\t"items" : [ { "a" : 1 } , 2 ] }\r\n', 3)).items, [{ a: 1 }, 2]);
    assert.deepEqual((await read('{"kind":"PodList","metadata":{}}')).items, []);
    assert.deepEqual((await read('{"items":[]}')).items, []);
    assert.deepEqual((await read('{"items":null}')).items, []);
    assert.deepEqual((await read('{}')).fields, {});
  });

  it('hands over the first item before the rest of the answer has arrived', async () => {
    const events: string[] = [];
    async function* slow(): AsyncGenerator<string> {
      yield '{"items":[{"name":"a"},';
      events.push('second chunk');
      yield '{"name":"b"}]}';
    }
    await readPage(slow(), 'listing /api/v1/pods', (item) => events.push(`item ${(item as { name: string }).name}`));
    assert.deepEqual(events, ['item a', 'second chunk', 'item b']);
  });

  it('reads a page of 100 pods cut at arbitrary points into the same objects as JSON.parse of the whole', async () => {
    const pods = Array.from({ length: 100 }, (_, i) => ({ metadata: { name: `p-${i}`, labels: { app: `a${i % 7}` }, annotations: { note: 'x'.repeat(i * 13) } }, status: { phase: i % 2 ? 'Running' : 'Pending' } }));
    const whole = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, items: pods });
    for (const size of [997, 4096, 65536]) assert.deepEqual((await read(whole, size)).items, pods);
  });

  describe('names the path and what is wrong', () => {
    const cases: [string, string, RegExp][] = [
      ['an empty answer', '', /listing \/api\/v1\/pods: the answer ended after 0 bytes, before its JSON object did$/],
      ['an answer that is not an object', '[{"a":1}]', /listing \/api\/v1\/pods: the answer is not a JSON list: expected "\{" at byte 0, found "\["$/],
      ['an HTML error page', '<html>', /expected "\{" at byte 0, found "<"/],
      ['a cut answer, inside an item', '{"items":[{"a":1},{"a":', /the answer ended after 23 bytes, before its JSON object did \(inside items, 1 read\)$/],
      ['a cut answer, after the items', '{"items":[{"a":1}]', /the answer ended after 18 bytes, before its JSON object did$/],
      ['an item that is not JSON', '{"items":[{"a":1},{"a":}]}', /listing \/api\/v1\/pods: item 1 in the answer is not JSON \(.*\): \{"a":\}$/],
      ['a field whose value is not JSON', '{"metadata":{"continue":x}}', /the value of "metadata" in the answer is not JSON/],
      ['items that are not an array', '{"items":{"a":1}}', /the answer's "items" is \{"a":1\}, not an array/],
      ['an empty slot in items', '{"items":[{"a":1},,{"a":2}]}', /expected an item at byte 18, found ","/],
      ['a trailing comma in items', '{"items":[{"a":1},]}', /expected an item at byte 18, found "\]"/],
      ['a missing colon', '{"items" []}', /expected ":" at byte 9, found "\["/],
      ['a field name that is not a string', '{items:[]}', /expected a field name or "\}" at byte 1, found "i"/],
      ['bytes after the object', '{"items":[]}{}', /expected nothing after the end of the object at byte 12, found "\{"/],
    ];
    for (const [what, body, message] of cases) {
      it(what, async () => {
        await assert.rejects(read(body, 2), message);
      });
    }
  });
});
