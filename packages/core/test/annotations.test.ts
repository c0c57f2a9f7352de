import assert from 'node:assert/strict';
import { dns1123LabelProblem, InvalidAnnotationError, parseEnumAnnotation, qualifiedNameProblem } from '@podlife/core';
import { annotationsWithPrefix, isQualifiedName } from '../src/annotations.js';

describe('annotations: qualified names, as the API server validates them', () => {
  const valid = [
    'a',
    'A',
    '1',
    'MyName',
    'my.name',
    '123-abc',
    'a_b',
    'role.podlife.dev/app',
    'sidecars.alpha.kubernetes.io/istio-proxy',
    'example.com/MyName',
    'a'.repeat(63),
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}/x`, // prefix of 253
  ];
  const invalid = [
    '',
    '-a',
    'a-',
    '_a',
    'a.',
    'a b',
    'a'.repeat(64),
    '/a',
    'a/',
    'a/b/c',
    'Example.com/a', // prefix must be lower case
    'exa_mple.com/a',
    '-example.com/a',
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}/x`, // prefix of 254
    'ünï/a',
    'a/ü',
  ];
  for (const name of valid) {
    it(`accepts ${JSON.stringify(name.length > 40 ? `${name.slice(0, 20)}…(${name.length})` : name)}`, () => {
      assert.equal(qualifiedNameProblem(name), undefined);
      assert.equal(isQualifiedName(name), true);
    });
  }
  for (const name of invalid) {
    it(`rejects ${JSON.stringify(name.length > 40 ? `${name.slice(0, 20)}…(${name.length})` : name)}`, () => {
      assert.equal(typeof qualifiedNameProblem(name), 'string');
      assert.equal(isQualifiedName(name), false);
    });
  }
  it('says which part is wrong', () => {
    assert.match(qualifiedNameProblem('Example.com/a') ?? '', /^prefix part/);
    assert.match(qualifiedNameProblem('example.com/-a') ?? '', /^name part/);
    assert.match(qualifiedNameProblem('a'.repeat(64)) ?? '', /no more than 63/);
  });
});

describe('annotations: DNS-1123 labels (container names)', () => {
  it('accepts lower-case alphanumerics and inner dashes up to 63', () => {
    assert.equal(dns1123LabelProblem('istio-proxy'), undefined);
    assert.equal(dns1123LabelProblem('a'.repeat(63)), undefined);
  });
  it('rejects upper case, dots, edge dashes, empty and over-long names', () => {
    for (const name of ['App', 'a.b', '-a', 'a-', '', 'a'.repeat(64)]) {
      assert.equal(typeof dns1123LabelProblem(name), 'string', name);
    }
  });
});

describe('annotations: per-container keys by prefix', () => {
  it('maps the rest of each matching key to its key and value', () => {
    const found = annotationsWithPrefix(
      { 'role.podlife.dev/app': 'keystone', 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'signal:INT' },
      'role.podlife.dev/',
    );
    assert.deepEqual([...found], [
      ['app', { key: 'role.podlife.dev/app', value: 'keystone' }],
      ['proxy', { key: 'role.podlife.dev/proxy', value: 'sidecar' }],
    ]);
  });
  it('is empty for absent annotations', () => {
    assert.equal(annotationsWithPrefix(undefined, 'x/').size, 0);
    assert.equal(annotationsWithPrefix(null, 'x/').size, 0);
  });
});

describe('annotations: enumerated values', () => {
  const key = 'podlife.dev/on-keystone-exit';
  const allowed = ['StopContainers', 'TerminatePod'] as const;

  it('returns the value when allowed', () => {
    assert.equal(parseEnumAnnotation({ [key]: 'TerminatePod' }, key, allowed, 'StopContainers'), 'TerminatePod');
  });
  it('returns the default when absent', () => {
    assert.equal(parseEnumAnnotation({}, key, allowed, 'StopContainers'), 'StopContainers');
    assert.equal(parseEnumAnnotation(undefined, key, allowed, 'StopContainers'), 'StopContainers');
  });
  it('does not read inherited properties as annotations', () => {
    assert.equal(parseEnumAnnotation({}, 'constructor', allowed, 'StopContainers'), 'StopContainers');
  });
  it('throws an InvalidAnnotationError naming the key, the value and the allowed values', () => {
    assert.throws(
      () => parseEnumAnnotation({ [key]: 'terminatepod' }, key, allowed, 'StopContainers'),
      (err: unknown) => {
        assert.ok(err instanceof InvalidAnnotationError);
        assert.equal(err.key, key);
        assert.equal(err.value, 'terminatepod');
        assert.equal(
          err.message,
          'annotation "podlife.dev/on-keystone-exit" = "terminatepod": must be one of "StopContainers", "TerminatePod"',
        );
        return true;
      },
    );
  });
  it('formats an error without a value', () => {
    const err = new InvalidAnnotationError('k', undefined, 'is required');
    assert.equal(err.message, 'annotation "k": is required');
    assert.equal(err.name, 'InvalidAnnotationError');
  });
});
