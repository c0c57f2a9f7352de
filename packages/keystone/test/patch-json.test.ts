/**
 * The patch writer (patch-json.ts): the bytes of JSON.stringify(ops), or -1 for what it leaves to
 * JSON.stringify.
 */
import assert from 'node:assert/strict';
import type { JsonPatchOp } from '@podlife/core';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { writePatchJson } from '../src/webhook/patch-json.js';

const text = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 10 }), fc.constantFrom('/metadata/annotations/role.podlife.dev~1app', 'a"b\\c', '\u0000\u001f\u007f', '\ud800', 'é'));
const value = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant(undefined), fc.jsonValue({ maxDepth: 2 }));
const op = fc.oneof(
  fc.record({ op: fc.constantFrom('add', 'move', 'remove'), path: text, from: text, value }, { requiredKeys: ['op', 'path'] }),
  fc.dictionary(text, value, { maxKeys: 4 }),
);

function written(ops: unknown[], size = 16 * 1024): string | undefined {
  const out = Buffer.alloc(size);
  const n = writePatchJson(ops as JsonPatchOp[], out);
  return n < 0 ? undefined : out.toString('utf8', 0, n);
}

describe('webhook: a patch written straight into bytes', () => {
  it("writes JSON.stringify's text, or leaves the patch to it", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 6 }), (ops) => {
        const out = written(ops);
        if (out !== undefined) assert.equal(out, JSON.stringify(ops));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes the ops the lifecycle mutation makes itself, escapes included', () => {
    const ops = [
      { op: 'add', path: '/spec/initContainers', value: [] },
      { op: 'move', from: '/spec/containers/1', path: '/spec/initContainers/0' },
      { op: 'add', path: '/spec/initContainers/0/restartPolicy', value: 'Always' },
      { op: 'add', path: '/metadata/annotations/native.podlife.dev~1proxy', value: 'a "quoted"\tvalue\\' },
      { op: 'add', path: '/spec/priority', value: 7, extra: undefined },
    ];
    assert.equal(written(ops), JSON.stringify(ops));
  });

  it('leaves to JSON.stringify text outside ASCII, objects, an op with toJSON, and a patch past the buffer', () => {
    assert.equal(written([{ op: 'add', path: '/a', value: 'é' }]), undefined);
    assert.equal(written([{ op: 'add', path: '/a', value: { stopSignal: 'SIGINT' } }]), undefined);
    assert.equal(written([{ op: 'add', path: '/a', toJSON: () => 1 }]), undefined);
    assert.equal(written([{ op: 'add', path: '/a'.repeat(20) }], 32), undefined);
    // 26 bytes: it fits in 26, not in 25.
    assert.equal(written([{ op: 'add', path: '/a' }], 26), '[{"op":"add","path":"/a"}]');
    assert.equal(written([{ op: 'add', path: '/a' }], 25), undefined);
  });
});
