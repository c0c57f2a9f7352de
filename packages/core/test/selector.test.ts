import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { labelSelectorMatches } from '../src/index.js';

describe('labelSelectorMatches: metav1.LabelSelector as the API server reads it', () => {
  const labels = { team: 'batch', tier: 'jobs' };

  it('matchLabels and every expression must hold', () => {
    assert.equal(labelSelectorMatches({ matchLabels: { team: 'batch' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['jobs', 'web'] }] }, labels), true);
    assert.equal(labelSelectorMatches({ matchLabels: { team: 'batch' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['jobs'] }] }, labels), false);
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }, { key: 'team', operator: 'Exists' }] }, labels), true);
  });

  it('an empty selector matches everything; an unknown operator or a non-object nothing', () => {
    assert.equal(labelSelectorMatches({}, {}), true);
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'team', operator: 'Gt', values: ['1'] }] }, labels), false);
    assert.equal(labelSelectorMatches(null as never, labels), false);
  });

  it('only own properties count: "constructor" is not a label', () => {
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'constructor', operator: 'Exists' }] }, {}), false);
    assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'toString', operator: 'DoesNotExist' }] }, {}), true);
  });

  it('property: In and NotIn on one key are each other\'s opposite when the key is present', () => {
    fc.assert(
      fc.property(fc.constantFrom('a', 'b', 'c'), fc.subarray(['a', 'b', 'c'], { minLength: 1 }), (value, values) => {
        const l = { k: value };
        assert.equal(labelSelectorMatches({ matchExpressions: [{ key: 'k', operator: 'In', values }] }, l), !labelSelectorMatches({ matchExpressions: [{ key: 'k', operator: 'NotIn', values }] }, l));
      }),
    );
  });
});
