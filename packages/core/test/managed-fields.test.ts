import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { parseDeferringManagedFields } from '../src/managed-fields.js';

const managedFields = [{ manager: 'kubelet', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:status': { 'k:{"ip":"10.0.0.1"}': { '.': {} } } } }];
const pod = { kind: 'Pod', metadata: { name: 'p', namespace: 'ns', labels: { 'a,b': '{"x":[1]}' }, managedFields, resourceVersion: '5' }, spec: { containers: [{ name: 'c' }] } };

const isDeferred = (metadata: object): boolean => Object.getOwnPropertyDescriptor(metadata, 'managedFields')?.get !== undefined;

describe('parseDeferringManagedFields: metadata.managedFields parsed only when read', () => {
  it('gives what JSON.parse gives, for an object and for a watch event, with white space or without', () => {
    for (const text of [JSON.stringify(pod), JSON.stringify(pod, null, 2)]) assert.deepEqual(parseDeferringManagedFields(text, 'object'), JSON.parse(text));
    const event = JSON.stringify({ type: 'ADDED', object: pod });
    assert.deepEqual(parseDeferringManagedFields(event, 'event'), JSON.parse(event));
  });

  it('leaves managedFields unparsed until it is read, then parses it once', () => {
    const got = parseDeferringManagedFields(JSON.stringify(pod), 'object') as typeof pod;
    assert.equal(isDeferred(got.metadata), true);
    assert.deepEqual(Object.keys(got.metadata).sort(), ['labels', 'managedFields', 'name', 'namespace', 'resourceVersion']);
    const parse = JSON.parse;
    let parsed = 0;
    JSON.parse = (...args: Parameters<typeof JSON.parse>) => (parsed++, parse(...args));
    try {
      assert.deepEqual(got.metadata.managedFields, managedFields);
      assert.equal(got.metadata.managedFields, got.metadata.managedFields, 'the same value on every read');
    } finally {
      JSON.parse = parse;
    }
    assert.equal(parsed, 1);
  });

  it('shows up in JSON.stringify, spread and structuredClone as the value it stands for, nothing else', () => {
    const got = parseDeferringManagedFields(JSON.stringify(pod), 'object') as typeof pod;
    assert.deepEqual(JSON.parse(JSON.stringify(got)), pod);
    assert.deepEqual({ ...got.metadata }, pod.metadata);
    assert.deepEqual(structuredClone(got), pod);
  });

  it('gives every object the same getter and setter (a closure per object costs V8 a hidden class per object)', () => {
    const [a, b] = ['p', 'q'].map((name) => parseDeferringManagedFields(JSON.stringify({ ...pod, metadata: { ...pod.metadata, name } }), 'object') as typeof pod);
    const [da, db] = [a!, b!].map((o) => Object.getOwnPropertyDescriptor(o.metadata, 'managedFields'));
    assert.ok(da?.get && da.set);
    assert.equal(da.get, db?.get);
    assert.equal(da.set, db?.set);
  });

  it('takes a write or a delete before any read as a plain property would', () => {
    const written = parseDeferringManagedFields(JSON.stringify(pod), 'object') as { metadata: Record<string, unknown> };
    written.metadata.managedFields = [];
    assert.deepEqual(written.metadata.managedFields, []);
    const deleted = parseDeferringManagedFields(JSON.stringify(pod), 'object') as { metadata: Record<string, unknown> };
    delete deleted.metadata.managedFields;
    assert.equal('managedFields' in deleted.metadata, false);
  });

  it('cuts the member wherever it sits among metadata\'s keys', () => {
    for (const metadata of [{ managedFields, name: 'first' }, { name: 'last', managedFields }, { a: 1, managedFields, b: [2] }]) {
      const text = JSON.stringify({ metadata });
      const got = parseDeferringManagedFields(text, 'object') as { metadata: object };
      assert.equal(isDeferred(got.metadata), true, text);
      assert.deepEqual(got, JSON.parse(text));
    }
  });

  it('parses whole what it does not find its way through, as JSON.parse would', () => {
    for (const text of ['{"metadata":{"managedFields":[]}}', '{"metadata":{"managedFields":null,"name":"x"}}', '{"spec":{"managedFields":[1]}}', '[1]', '{"metadata":{"a":1,"managedFields":[1],"managedFields":[2]}}']) {
      const got = parseDeferringManagedFields(text, 'object') as { metadata?: object };
      assert.deepEqual(got, JSON.parse(text), text);
      if (got && typeof got === 'object' && !Array.isArray(got) && got.metadata) assert.equal(isDeferred(got.metadata), false, text);
    }
    for (const bad of ['', '{"metadata":{"name":"x",}}', '{"metadata":{"managedFields":[1],"name":}}']) assert.throws(() => parseDeferringManagedFields(bad, 'object'), SyntaxError, bad);
  });

  it('names the object when its managedFields turns out not to be JSON on first read', () => {
    const got = parseDeferringManagedFields('{"metadata":{"name":"p","namespace":"ns","managedFields":[1,,2]}}', 'object') as { metadata: { managedFields: unknown } };
    assert.throws(() => got.metadata.managedFields, /metadata\.managedFields of ns\/p is not JSON/);
  });

  it('keeps a frozen object frozen, and still reads', () => {
    const got = parseDeferringManagedFields(JSON.stringify(pod), 'object') as typeof pod;
    Object.freeze(got.metadata);
    assert.deepEqual(got.metadata.managedFields, managedFields);
    assert.equal(Object.isFrozen(got.metadata), true);
  });
});
