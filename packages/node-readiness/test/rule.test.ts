import assert from 'node:assert/strict';
import { resolveRules } from '../src/index.js';
import { parseDuration, resolveRule } from '../src/rule.js';
import { selectorMatches, selectorsMayOverlap } from '../src/selector.js';
import type { NodeReadinessRule } from '../src/index.js';
import { T0, rule } from './builders.js';

const problemFields = (r: NodeReadinessRule): string[] => resolveRule(r).problems?.map((p) => p.field) ?? [];

describe('resolveRule: the checks the CRD also makes', () => {
  it('applies defaults to a minimal rule', () => {
    const r = resolveRule(rule().build()).rule;
    assert.equal(r?.match, 'allOf');
    assert.equal(r?.conditions[0]?.requiredStatus, 'True');
    assert.equal(r?.debounceMs, 30_000);
    assert.equal(r?.maxTaintedPercent, 50);
    assert.equal(r?.dryRun, false);
  });

  it('rejects a taint key outside readiness.k8s.io/', () => {
    assert.deepEqual(problemFields(rule().taint('example.com/gpu').build()), ['spec.taint.key']);
  });

  it('rejects a taint key that is not a qualified name', () => {
    assert.deepEqual(problemFields(rule().taint('readiness.k8s.io/-bad-').build()), ['spec.taint.key']);
  });

  it('rejects an unknown effect', () => {
    assert.deepEqual(problemFields(rule().with({ taint: { key: 'readiness.k8s.io/x', effect: 'Evict' as 'NoSchedule' } }).build()), ['spec.taint.effect']);
  });

  it('rejects NoExecute without the explicit opt-in', () => {
    assert.deepEqual(problemFields(rule().taint('readiness.k8s.io/x', 'NoExecute').build()), ['spec.allowNoExecute']);
    assert.deepEqual(problemFields(rule().taint('readiness.k8s.io/x', 'NoExecute').with({ allowNoExecute: true }).build()), []);
  });

  it('rejects an empty nodeSelector', () => {
    assert.deepEqual(problemFields(rule().with({ nodeSelector: {} }).build()), ['spec.nodeSelector']);
  });

  it('rejects anyOf and defaultStatus on bootstrap-only rules', () => {
    assert.deepEqual(problemFields(rule().anyOf().build()), ['spec.match']);
    assert.deepEqual(problemFields(rule().conditions({ type: 'A', defaultStatus: 'True' }).build()), ['spec.conditions']);
  });

  it('rejects a malformed duration, naming the field', () => {
    assert.deepEqual(problemFields(rule().maxAge('five minutes').build()), ['spec.maxConditionAge']);
  });

  it('rejects a selector every node satisfies: Exists on labels the kubelet sets on every node', () => {
    const exists = (...keys: string[]) => rule().with({ nodeSelector: { matchExpressions: keys.map((key) => ({ key, operator: 'Exists' })) } }).build();
    assert.deepEqual(problemFields(exists('kubernetes.io/hostname')), ['spec.nodeSelector']);
    assert.deepEqual(problemFields(exists('kubernetes.io/os', 'kubernetes.io/arch')), ['spec.nodeSelector']);
    assert.match(resolveRule(exists('kubernetes.io/hostname')).problems?.[0]?.message ?? '', /every node in the cluster/);
  });

  it('accepts Exists on a kubelet label next to a term that narrows the selector', () => {
    const narrowed = rule().with({ nodeSelector: { matchLabels: { pool: 'gpu' }, matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'Exists' }] } }).build();
    assert.deepEqual(problemFields(narrowed), []);
    assert.deepEqual(problemFields(rule().with({ nodeSelector: { matchExpressions: [{ key: 'example.com/gpu', operator: 'Exists' }] } }).build()), []);
    assert.deepEqual(problemFields(rule().with({ nodeSelector: { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] } }).build()), []);
  });

  it('rejects a debounce or maxConditionAge over 24h, naming the field; 24h itself is accepted', () => {
    const debounce = resolveRule(rule().continuous('1000h').build()).problems ?? [];
    assert.deepEqual(debounce.map((p) => p.field), ['spec.debounce']);
    assert.match(debounce[0]?.message ?? '', /at most 24h, got 1000h/);
    assert.deepEqual(problemFields(rule().maxAge('24h0m0.001s').build()), ['spec.maxConditionAge']);
    assert.deepEqual(problemFields(rule().continuous('24h').maxAge('1440m').build()), []);
  });

  it('rejects a duration that is not a string, naming the field', () => {
    assert.deepEqual(problemFields(rule().with({ debounce: 30 as unknown as string }).build()), ['spec.debounce']);
  });

  it('never throws on a rule without a spec', () => {
    assert.deepEqual(problemFields({ metadata: { name: 'x' } }), ['spec']);
  });
});

describe('parseDuration', () => {
  it('reads Go duration notation', () => {
    assert.equal(parseDuration('1m30s'), 90_000);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('1.5h'), 5_400_000);
    assert.equal(parseDuration('-1s'), undefined);
  });
});

describe('label selectors', () => {
  it('matches matchLabels and every operator', () => {
    const labels = { pool: 'gpu', zone: 'a' };
    assert.equal(selectorMatches({ matchLabels: { pool: 'gpu' } }, labels), true);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }, labels), true);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }, labels), true);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'pool', operator: 'DoesNotExist' }] }, labels), false);
    assert.equal(selectorMatches({ matchExpressions: [{ key: 'pool', operator: 'Gt' }] }, labels), false);
  });

  it('calls selectors disjoint only when a label key proves it', () => {
    assert.equal(selectorsMayOverlap({ matchLabels: { pool: 'gpu' } }, { matchLabels: { pool: 'cpu' } }), false);
    assert.equal(selectorsMayOverlap({ matchLabels: { pool: 'gpu' } }, { matchLabels: { zone: 'a' } }), true);
    assert.equal(selectorsMayOverlap({ matchLabels: { pool: 'gpu' } }, { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['gpu'] }] }), false);
    assert.equal(selectorsMayOverlap({ matchExpressions: [{ key: 'a', operator: 'Exists' }] }, { matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }), false);
    assert.equal(selectorsMayOverlap({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '2'] }] }, { matchExpressions: [{ key: 'a', operator: 'In', values: ['2', '3'] }] }), true);
  });
});

describe('resolveRules: overlapping rules', () => {
  it('rejects the newer of two rules with the same taint and overlapping selectors, naming the older', () => {
    const set = resolveRules([rule('b').createdAt(T0).build(), rule('a').createdAt(T0 - 1).selector({ zone: 'x' }).build()]);
    assert.deepEqual(set.active.map((r) => r.name), ['a']);
    assert.equal(set.rejected.get('b')?.reason, 'Overlapping');
    assert.equal(set.rejected.get('b')?.overlapsWith, 'a');
  });

  it('accepts rules with the same taint on disjoint selectors', () => {
    const set = resolveRules([rule('a').selector({ pool: 'a' }).build(), rule('b').selector({ pool: 'b' }).build()]);
    assert.equal(set.active.length, 2);
  });

  it('accepts rules with the same key but different effects', () => {
    const set = resolveRules([rule('a').build(), rule('b').taint('readiness.k8s.io/gpu', 'PreferNoSchedule').build()]);
    assert.equal(set.active.length, 2);
  });

  it('reaches the same verdict whatever the input order', () => {
    const rules = [rule('a').createdAt(T0).build(), rule('b').createdAt(T0).build(), rule('c').createdAt(T0 - 5).build()];
    assert.deepEqual(resolveRules(rules).active.map((r) => r.name), resolveRules([...rules].reverse()).active.map((r) => r.name));
  });

  it('keeps a rule being deleted out of overlap checks and out of force', () => {
    const set = resolveRules([rule('old').createdAt(T0 - 10).beingDeleted().build(), rule('new').build()]);
    assert.deepEqual(set.active.map((r) => r.name), ['new']);
    assert.deepEqual(set.deleting.map((r) => r.name), ['old']);
  });
});
