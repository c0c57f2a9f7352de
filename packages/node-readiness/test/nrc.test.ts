import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { MigratedFromAnnotation, NrcFinalizer, evaluateNode, fromNrcRule, planNrcMigration } from '../src/index.js';
import type { NodeReadinessRule, NrcRule } from '../src/index.js';
import { T0, iso, node } from './builders.js';

const examples = (): NrcRule[] =>
  parseAllDocuments(readFileSync(new URL('./nrc-examples.yaml', import.meta.url), 'utf8')).map((d, i) => {
    const r = d.toJS() as NrcRule;
    r.metadata = { ...r.metadata, uid: `uid-${i}`, resourceVersion: '5', finalizers: [NrcFinalizer] };
    return r;
  });
const example = (name: string): NrcRule => {
  const r = examples().find((e) => e.metadata?.name === name);
  assert.ok(r, name);
  return r;
};

/** What the API server hands back after creating `rule`: name, creation time, CRD defaults applied. */
function stored(rule: NodeReadinessRule, createdMs = T0 - 1000): NodeReadinessRule {
  const spec = rule.spec;
  assert.ok(spec);
  return {
    ...rule,
    metadata: { ...rule.metadata, resourceVersion: '9', generation: 1, creationTimestamp: iso(createdMs) as unknown as Date },
    spec: { match: 'allOf', allowNoExecute: false, dryRun: false, debounce: '30s', guardrails: { maxTaintedPercent: 50, additionsPerMinute: 60, additionBurst: 10 }, ...spec },
  };
}

/** Applies a plan the way `podlife migrate nrc --apply` does, on in-memory copies. */
function apply(nrc: NrcRule[], mine: NodeReadinessRule[]): { nrc: NrcRule[]; mine: NodeReadinessRule[] } {
  const plan = planNrcMigration(nrc, mine);
  const after = { nrc: structuredClone(nrc), mine: [...mine] };
  for (const s of plan.steps) {
    if (s.op === 'create-rule') after.mine.push(stored(s.rule));
    if (s.op === 'remove-finalizer') {
      const r = after.nrc.find((x) => x.metadata?.name === s.nrcRule);
      if (r?.metadata) r.metadata.finalizers = s.finalizers;
    }
  }
  return after;
}

describe('NRC rules read as podlife rules (fromNrcRule)', () => {
  it('NRC example rules convert field by field: conditionPolicy is match, NRC rule recorded', () => {
    const r = fromNrcRule(example('dns-cache-preview')).rule;
    assert.equal(r?.spec?.match, 'anyOf');
    assert.equal(r?.spec?.dryRun, true);
    assert.equal(r?.spec?.taint.effect, 'PreferNoSchedule');
    assert.equal(r?.metadata?.annotations?.[MigratedFromAnnotation], 'dns-cache-preview/uid-3');
    const gpu = fromNrcRule(example('gpu-driver')).rule;
    assert.deepEqual(gpu?.spec?.taint, { key: 'readiness.k8s.io/gpu-driver', effect: 'NoSchedule', value: 'pending' });
    assert.deepEqual(gpu?.spec?.nodeSelector, { matchExpressions: [{ key: 'accelerator', operator: 'In', values: ['nvidia'] }] });
    assert.deepEqual(fromNrcRule(example('storage-plugin')).rule?.spec?.conditions, [{ type: 'example.com/CSINodeReady', requiredStatus: 'True', defaultStatus: 'False' }]);
  });

  it('every NRC example converts with no problem', () => {
    for (const e of examples()) assert.equal(fromNrcRule(e).problems, undefined, e.metadata?.name);
  });

  it('NoExecute chosen in NRC becomes the explicit opt-in podlife asks for', () => {
    const e = example('network-readiness');
    (e.spec as { taint: { effect: string } }).taint.effect = 'NoExecute';
    assert.equal(fromNrcRule(e).rule?.spec?.allowNoExecute, true);
  });

  it('a field podlife does not know: not converted at all, the field named', () => {
    const e = example('network-readiness');
    (e.spec as Record<string, unknown>).gracePeriod = '5m';
    (e.spec as { conditions: Record<string, unknown>[] }).conditions[0]!.probe = 'http';
    const out = fromNrcRule(e);
    assert.equal(out.rule, undefined);
    assert.deepEqual(out.problems?.map((p) => p.field), ['spec.gracePeriod', 'spec.conditions[0].probe']);
  });

  it('a rule podlife would reject (a selector every node satisfies) is not converted', () => {
    const e = example('network-readiness');
    (e.spec as Record<string, unknown>).nodeSelector = { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'Exists' }] };
    assert.deepEqual(fromNrcRule(e).problems?.map((p) => p.field), ['spec.nodeSelector']);
  });

  it('no enforcementMode: refused, since nothing says what NRC would do', () => {
    const e = example('network-readiness');
    delete (e.spec as Record<string, unknown>).enforcementMode;
    assert.deepEqual(fromNrcRule(e).problems?.map((p) => p.field), ['spec.enforcementMode']);
  });
});

describe('planNrcMigration: what podlife migrate nrc changes', () => {
  it('creates one podlife rule per NRC rule, then removes NRC finalizers', () => {
    const plan = planNrcMigration(examples(), []);
    assert.equal(plan.changes, 8);
    const ops = plan.steps.map((s) => `${s.op} ${s.nrcRule}`);
    // Each rule's podlife rule comes before its finalizer removal.
    for (const name of ['gpu-driver', 'network-readiness']) assert.ok(ops.indexOf(`create-rule ${name}`) < ops.indexOf(`remove-finalizer ${name}`));
  });

  it('idempotent: planning against what the plan produced changes nothing', () => {
    const once = apply(examples(), []);
    const again = planNrcMigration(once.nrc, once.mine);
    assert.equal(again.changes, 0);
    assert.ok(again.steps.every((s) => s.op === 'up-to-date'));
  });

  it('property: any subset of the examples, applied twice, changes nothing the second time', () => {
    fc.assert(
      fc.property(fc.subarray(examples()), fc.boolean(), (subset, keepFinalizer) => {
        const nrc = subset.map((r) => (keepFinalizer ? r : { ...r, metadata: { ...r.metadata, finalizers: [] } }));
        const once = apply(nrc, []);
        assert.equal(planNrcMigration(once.nrc, once.mine).changes, 0);
      }),
    );
  });

  it('a podlife rule of the same name not migrated from it: not migrated, NRC finalizer kept', () => {
    const other = stored({ ...fromNrcRule(example('gpu-driver')).rule!, metadata: { name: 'gpu-driver' } });
    const plan = planNrcMigration([example('gpu-driver')], [other]);
    assert.deepEqual(plan.steps.map((s) => s.op), ['not-migrated']);
    assert.equal(plan.changes, 0);
  });

  it('an NRC rule overlapping a podlife rule on the same taint: not migrated, the overlap named', () => {
    const mine = stored({ ...fromNrcRule(example('network-readiness')).rule!, metadata: { name: 'workers-network' } });
    const plan = planNrcMigration([example('network-readiness')], [mine]);
    assert.equal(plan.steps[0]?.op, 'not-migrated');
    assert.match(plan.steps[0]?.message ?? '', /workers-network/);
  });

  it('an unknown field is reported and nothing of that rule is planned, the others are', () => {
    const bad = example('network-readiness');
    (bad.spec as Record<string, unknown>).gracePeriod = '5m';
    const plan = planNrcMigration([bad, example('gpu-driver')], []);
    assert.deepEqual(plan.steps.map((s) => `${s.op} ${s.nrcRule}`), ['create-rule gpu-driver', 'remove-finalizer gpu-driver', 'not-migrated network-readiness']);
  });
});

describe('a migrated bootstrap-only rule honours NRC completion annotations', () => {
  const migrated = (): NodeReadinessRule => stored(fromNrcRule(example('gpu-driver')).rule!);
  const gpuNode = () => node().labels({ accelerator: 'nvidia' }).taint('readiness.k8s.io/gpu-driver');

  it('by rule uid (NRC today): the gate is passed, the taint is not NRC-released again nor touched', () => {
    const d = evaluateNode(gpuNode().annotate('readiness.k8s.io/bootstrap-completed-uid-1', '{"rule-name":"gpu-driver"}').build(), [migrated()], T0);
    assert.equal(d.gates[0]?.state, 'completed');
    assert.match(d.gates[0]?.message ?? '', /bootstrap-completed-uid-1/);
    assert.deepEqual(d.changes, []);
  });

  it('by rule name (older NRC releases)', () => {
    const d = evaluateNode(gpuNode().annotate('readiness.k8s.io/bootstrap-completed-gpu-driver', 'true').build(), [migrated()], T0);
    assert.equal(d.gates[0]?.state, 'completed');
  });

  it("another rule's uid does not count", () => {
    const d = evaluateNode(gpuNode().annotate('readiness.k8s.io/bootstrap-completed-uid-9', 'x').build(), [migrated()], T0);
    assert.equal(d.gates[0]?.state, 'missing');
    assert.equal(d.gates[0]?.holding, true);
  });

  it('a rule not migrated from NRC ignores NRC annotations', () => {
    const plain = stored({ ...migrated(), metadata: { name: 'gpu-driver' } });
    const d = evaluateNode(gpuNode().annotate('readiness.k8s.io/bootstrap-completed-gpu-driver', 'true').build(), [plain], T0);
    assert.notEqual(d.gates[0]?.state, 'completed');
  });
});
