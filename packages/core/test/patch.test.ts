import assert from 'node:assert/strict';
import { ContentType, conditionsPatch, jsonPointer, resourceVersionTest } from '@podlife/core';
import { escapePointerToken, removeAnnotationOps, setAnnotationOps, testOp } from '../src/patch.js';

describe('patch: JSON pointers (RFC 6901)', () => {
  it("escapes '/' as ~1", () => {
    assert.equal(escapePointerToken('role.podlife.dev/app'), 'role.podlife.dev~1app');
  });
  it("escapes '~' as ~0", () => {
    assert.equal(escapePointerToken('a~b'), 'a~0b');
  });
  it("escapes '~' before '/', so '~1' in a key stays distinct from '/'", () => {
    assert.equal(escapePointerToken('a~1b'), 'a~01b');
    assert.equal(escapePointerToken('~/'), '~0~1');
    assert.notEqual(escapePointerToken('a~1b'), escapePointerToken('a/b'));
  });
  it('joins escaped tokens, numbers included', () => {
    assert.equal(jsonPointer('metadata', 'annotations', 'a/b'), '/metadata/annotations/a~1b');
    assert.equal(jsonPointer('spec', 'containers', 0, 'name'), '/spec/containers/0/name');
  });
  it('points at the whole document with no tokens, and at the empty key with an empty token', () => {
    assert.equal(jsonPointer(), '');
    assert.equal(jsonPointer(''), '/');
  });
});

describe('patch: annotation operations (RFC 6902)', () => {
  it('creates /metadata/annotations when the object has none', () => {
    assert.deepEqual(setAnnotationOps({}, 'role.podlife.dev/app', 'keystone'), [
      { op: 'add', path: '/metadata/annotations', value: { 'role.podlife.dev/app': 'keystone' } },
    ]);
  });
  it('creates /metadata/annotations when it is null or metadata is missing', () => {
    assert.equal(setAnnotationOps({ annotations: null }, 'k', 'v')[0]?.path, '/metadata/annotations');
    assert.equal(setAnnotationOps(undefined, 'k', 'v')[0]?.path, '/metadata/annotations');
  });
  it('adds one escaped member when annotations exist', () => {
    assert.deepEqual(setAnnotationOps({ annotations: { other: 'x' } }, 'stop.podlife.dev/proxy', 'signal:TERM'), [
      { op: 'add', path: '/metadata/annotations/stop.podlife.dev~1proxy', value: 'signal:TERM' },
    ]);
  });
  it('removes a present annotation by its escaped path', () => {
    assert.deepEqual(removeAnnotationOps({ annotations: { 'a/b~c': 'x' } }, 'a/b~c'), [
      { op: 'remove', path: '/metadata/annotations/a~1b~0c' },
    ]);
  });
  it('removes nothing when the annotation is absent', () => {
    assert.deepEqual(removeAnnotationOps({ annotations: { other: 'x' } }, 'k'), []);
    assert.deepEqual(removeAnnotationOps({}, 'k'), []);
    assert.deepEqual(removeAnnotationOps({ annotations: {} }, 'constructor'), []);
  });
});

describe('patch: optimistic locking', () => {
  it('builds a test op', () => {
    assert.deepEqual(testOp('/spec/x', 1), { op: 'test', path: '/spec/x', value: 1 });
  });
  it('tests metadata.resourceVersion', () => {
    assert.deepEqual(resourceVersionTest('42'), { op: 'test', path: '/metadata/resourceVersion', value: '42' });
  });
});

describe('patch: strategic merge of status.conditions', () => {
  it('wraps conditions under status for a merge by type', () => {
    const conditions = [{ type: 'podlife.dev/LifecycleValid', status: 'True', reason: 'Valid' }];
    assert.deepEqual(conditionsPatch(conditions), { status: { conditions } });
  });
  it('copies the conditions, so later edits to the input do not leak into the body', () => {
    const input = [{ type: 'A', status: 'True' }];
    const body = conditionsPatch(input);
    input[0]!.status = 'False';
    assert.equal(body.status.conditions[0]?.status, 'True');
  });
  it('serialises times as RFC 3339', () => {
    const body = conditionsPatch([{ type: 'A', status: 'True', lastTransitionTime: new Date(Date.UTC(2026, 0, 1)) }]);
    assert.match(JSON.stringify(body), /"lastTransitionTime":"2026-01-01T00:00:00.000Z"/);
  });
});

describe('patch: content types', () => {
  it('names the media type for each patch kind', () => {
    assert.equal(ContentType.JsonPatch, 'application/json-patch+json');
    assert.equal(ContentType.MergePatch, 'application/merge-patch+json');
    assert.equal(ContentType.StrategicMergePatch, 'application/strategic-merge-patch+json');
    assert.equal(ContentType.ApplyPatch, 'application/apply-patch+yaml');
  });
});
