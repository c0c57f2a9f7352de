import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { StringTable } from '../src/intern.js';

// Which copy of a string a property holds is invisible to JavaScript; what the table keeps is not.
describe('StringTable: equal strings in cached objects share one copy', () => {
  it('leaves an object deep-equal to what it was, at any depth, arrays included', () => {
    const table = new StringTable();
    const parse = (): unknown => JSON.parse('{"metadata":{"name":"a","labels":{"app":"web"}},"status":{"conditions":[{"type":"Ready","status":"True"}],"podIPs":["10.0.0.1"],"n":3,"x":null}}');
    const obj = parse();
    assert.equal(table.internDeep(obj), obj);
    assert.deepEqual(obj, parse());
    // name, app label key's value, type, status, the IP: one entry each ("web", "a", "Ready", "True", "10.0.0.1").
    assert.equal(table.size, 5);
    table.internDeep(parse());
    assert.equal(table.size, 5, 'a second object with the same strings adds nothing');
  });

  it('does not keep strings longer than maxLength', () => {
    const table = new StringTable({ maxLength: 4 });
    table.internDeep({ short: 'abcd', long: 'abcde' });
    assert.equal(table.size, 1);
  });

  it('never holds more than maxEntries strings, however many it sees', () => {
    const table = new StringTable({ maxEntries: 3 });
    for (let i = 0; i < 10; i++) table.intern(`s${i}`);
    assert.ok(table.size <= 3, `size ${table.size}`);
    assert.equal(table.intern('s9'), 's9');
    const large = new StringTable({ maxEntries: 4096 });
    for (let i = 0; i < 100_000; i++) large.intern(`uid-${i}`);
    assert.ok(large.size <= 4096, `size ${large.size}`);
  });

  it('grows from a small table while it fills, keeping what it held', () => {
    const table = new StringTable();
    for (let i = 0; i < 3000; i++) table.intern(`name-${i}`);
    // 3,000 strings in 16,384 slots chosen by hash: about 2,750 slots taken (a string sharing a slot
    // replaces the one there); a growth that dropped what it held would leave far fewer.
    assert.ok(table.size > 2300 && table.size <= 3000, `size ${table.size}`);
  });

  it('skips a frozen object instead of throwing', () => {
    const table = new StringTable();
    const frozen = Object.freeze({ name: 'x', inner: { name: 'y' } });
    assert.doesNotThrow(() => table.internDeep({ outer: frozen }));
    assert.deepEqual(frozen, { name: 'x', inner: { name: 'y' } });
  });
});
