import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { Store, adoptInto, objectKey } from '../src/store.js';
import { obj } from './support/fake-transport.js';

describe('Store: an informer\'s first list taken over as the store\'s table', () => {
  it('makes an empty store hold the map it is given, by key', () => {
    const store = new Store<ReturnType<typeof obj>>();
    const first = new Map([obj('a', '1'), obj('b', '2')].map((o) => [objectKey(o), o]));
    assert.equal(adoptInto(store, first), true);
    assert.deepEqual(store.keys(), ['ns/a', 'ns/b']);
    assert.equal(store.get('ns/b')?.metadata?.resourceVersion, '2');
  });

  it('leaves a store that holds anything as it is, and says so', () => {
    const store = Store.of([obj('a', '1')]);
    assert.equal(adoptInto(store, new Map([['ns/z', obj('z', '9')]])), false);
    assert.deepEqual(store.keys(), ['ns/a']);
  });

  it('replaces and reports changes after an adopted list as after any other', () => {
    const store = new Store<ReturnType<typeof obj>>();
    adoptInto(store, new Map([obj('a', '1'), obj('b', '2')].map((o) => [objectKey(o), o])));
    const diff = store.replace([obj('a', '3'), obj('c', '4')]);
    assert.deepEqual(diff.added.map(objectKey), ['ns/c']);
    assert.deepEqual(diff.updated.map((u) => objectKey(u.obj)), ['ns/a']);
    assert.deepEqual(diff.deleted.map(objectKey), ['ns/b']);
  });
});
