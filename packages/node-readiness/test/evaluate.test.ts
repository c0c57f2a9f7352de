import assert from 'node:assert/strict';
import { evaluateNode } from '../src/index.js';
import type { NodeDecision } from '../src/index.js';
import { GPU, T0, gpuNode, node, rule } from './builders.js';

const ops = (d: NodeDecision): string[] => d.changes.map((c) => `${c.op} ${c.taint.key}:${c.taint.effect}`);
const gate = (d: NodeDecision, name = 'gpu') => {
  const g = d.gates.find((x) => x.gate === name);
  assert.ok(g, `gate ${name} evaluated`);
  return g;
};

describe('evaluateNode: the four condition states', () => {
  it('True satisfies the gate and removes its taint', () => {
    const d = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'True').build(), [rule().build()], T0);
    assert.deepEqual(ops(d), [`remove ${GPU}:NoSchedule`]);
    assert.equal(gate(d).state, 'satisfied');
  });

  it('False (agent failing) holds the taint and says the agent is failing', () => {
    const d = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'False').build(), [rule().build()], T0);
    const g = gate(d);
    assert.equal(g.state, 'failing');
    assert.equal(g.holding, true);
    assert.match(g.message, /agent failing/);
    assert.ok(!ops(d).some((o) => o.startsWith('remove')));
  });

  it('Unknown holds the taint as unknown, not failing', () => {
    const d = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'Unknown').build(), [rule().build()], T0);
    assert.equal(gate(d).state, 'unknown');
    assert.equal(gate(d).failing, false);
    assert.equal(gate(d).holding, true);
  });

  it('a True condition whose heartbeat is older than maxConditionAge counts as Unknown (stale)', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True', { since: T0 - 600_000, heartbeat: T0 - 300_000 }).build();
    const d = evaluateNode(n, [rule().maxAge('2m').build()], T0);
    assert.equal(gate(d).state, 'unknown');
    assert.equal(gate(d).conditions[0]?.stale, true);
    assert.match(gate(d).message, /stale: heartbeat 300s old/);
    assert.deepEqual(d.changes.filter((c) => c.op === 'remove'), []);
  });

  it('a True condition with a heartbeat within maxConditionAge is satisfied', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True', { since: T0 - 600_000, heartbeat: T0 - 30_000 }).build();
    assert.deepEqual(ops(evaluateNode(n, [rule().maxAge('2m').build()], T0)), [`remove ${GPU}:NoSchedule`]);
  });

  it('Missing (agent absent) holds the taint and says the agent is absent', () => {
    const d = evaluateNode(gpuNode().taint(GPU).build(), [rule().build()], T0);
    assert.equal(gate(d).state, 'missing');
    assert.match(gate(d).message, /agent absent/);
    assert.equal(gate(d).holding, true);
  });

  it('Missing counts as defaultStatus when the rule sets one', () => {
    const r = rule().continuous().conditions({ type: 'GPUReady', defaultStatus: 'True' }).build();
    const d = evaluateNode(gpuNode().taint(GPU).build(), [r], T0);
    assert.deepEqual(ops(d), [`remove ${GPU}:NoSchedule`]);
    assert.equal(gate(d).conditions[0]?.state, 'Missing');
  });

  it('requiredStatus False is satisfied by a False condition', () => {
    const r = rule().conditions({ type: 'GPUDegraded', requiredStatus: 'False' }).build();
    assert.deepEqual(ops(evaluateNode(gpuNode().taint(GPU).condition('GPUDegraded', 'False').build(), [r], T0)), [`remove ${GPU}:NoSchedule`]);
  });
});

describe('evaluateNode: allOf and anyOf', () => {
  const two = [{ type: 'GPUReady' }, { type: 'DriverReady' }];

  it('allOf holds while any condition is unsatisfied', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').condition('DriverReady', 'Unknown').build();
    assert.equal(gate(evaluateNode(n, [rule().conditions(...two).build()], T0)).holding, true);
  });

  it('allOf releases when every condition is satisfied', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').condition('DriverReady', 'True').build();
    assert.deepEqual(ops(evaluateNode(n, [rule().conditions(...two).build()], T0)), [`remove ${GPU}:NoSchedule`]);
  });

  it('anyOf releases when one condition is satisfied', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'False').condition('DriverReady', 'True').build();
    const r = rule().continuous().anyOf().conditions(...two).build();
    assert.deepEqual(ops(evaluateNode(n, [r], T0)), [`remove ${GPU}:NoSchedule`]);
  });

  it('anyOf re-taints only when every condition is explicitly failing', () => {
    const r = rule().continuous('0s').anyOf().conditions(...two).build();
    const oneUnknown = gpuNode().condition('GPUReady', 'False').condition('DriverReady', 'Unknown').build();
    const bothFalse = gpuNode().condition('GPUReady', 'False').condition('DriverReady', 'False').build();
    assert.deepEqual(ops(evaluateNode(oneUnknown, [r], T0)), []);
    assert.deepEqual(ops(evaluateNode(bothFalse, [r], T0)), [`add ${GPU}:NoSchedule`]);
  });
});

describe('evaluateNode: bootstrap-only', () => {
  it('records the pass in the same change that removes the taint', () => {
    const [c] = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'True', { since: T0 - 2000 }).build(), [rule().build()], T0).changes;
    assert.equal(c?.complete, true);
    assert.equal(c?.satisfiedSinceMs, T0 - 2000);
  });

  it('never adds its taint, however long the condition fails', () => {
    const n = gpuNode().condition('GPUReady', 'False', { since: T0 - 86_400_000 }).build();
    assert.deepEqual(evaluateNode(n, [rule().build()], T0).changes, []);
  });

  it('never acts again on a node that passed, even if the taint is back', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').completed({ gpu: '2025-06-01T11:00:00Z' }).build();
    const d = evaluateNode(n, [rule().build()], T0);
    assert.deepEqual(d.changes, []);
    assert.equal(gate(d).state, 'completed');
  });
});

describe('evaluateNode: continuous', () => {
  const r = rule().continuous('30s').build();

  it('re-taints after an explicit False has lasted the debounce', () => {
    const n = gpuNode().condition('GPUReady', 'False', { since: T0 - 31_000 }).build();
    assert.deepEqual(ops(evaluateNode(n, [r], T0)), [`add ${GPU}:NoSchedule`]);
  });

  it('waits out the debounce and asks to be evaluated when it ends', () => {
    const d = evaluateNode(gpuNode().condition('GPUReady', 'False', { since: T0 - 10_000 }).build(), [r], T0);
    assert.deepEqual(d.changes, []);
    assert.equal(d.nextEvaluationAtMs, T0 + 20_000);
    assert.equal(gate(d).addDueAtMs, T0 + 20_000);
  });

  for (const [what, n] of [
    ['Unknown', gpuNode().condition('GPUReady', 'Unknown', { since: T0 - 600_000 })],
    ['Missing', gpuNode()],
    ['stale', gpuNode().condition('GPUReady', 'False', { since: T0 - 600_000, heartbeat: T0 - 600_000 })],
  ] as const) {
    it(`never re-taints on ${what}`, () => {
      assert.deepEqual(evaluateNode(n.build(), [rule().continuous('0s').maxAge('1m').build()], T0).changes, []);
    });
  }

  it('removes the taint when satisfied without recording a pass', () => {
    const [c] = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'True').managed({ [`${GPU}:NoSchedule`]: 'gpu' }).build(), [r], T0).changes;
    assert.equal(c?.op, 'remove');
    assert.equal(c?.complete, false);
  });

  it('a flapping condition restarts the debounce (False again 5 s ago is not due)', () => {
    // False for minutes, True briefly, then False again: lastTransitionTime is the latest flip.
    const n = gpuNode().condition('GPUReady', 'False', { since: T0 - 5_000 }).build();
    const d = evaluateNode(n, [r], T0);
    assert.deepEqual(d.changes, []);
    assert.equal(d.nextEvaluationAtMs, T0 + 25_000);
  });

  it('a lastTransitionTime in the future (year 2999) counts as now: evaluated again after the debounce, not in 2999', () => {
    const n = gpuNode().condition('GPUReady', 'False', { since: Date.parse('2999-01-01T00:00:00Z') }).build();
    const d = evaluateNode(n, [r], T0);
    assert.deepEqual(d.changes, []);
    assert.equal(d.nextEvaluationAtMs, T0 + 30_000);
    assert.equal(gate(d).conditions[0]?.transitionMs, T0);
  });

  it('a heartbeat from the future does not make a condition fresh for ever: it counts as now', () => {
    const n = gpuNode().condition('GPUReady', 'False', { since: T0 - 600_000, heartbeat: Date.parse('2999-01-01T00:00:00Z') }).build();
    const o = gate(evaluateNode(n, [rule().continuous('0s').maxAge('1m').build()], T0)).conditions[0];
    assert.equal(o?.heartbeatMs, T0);
    assert.equal(o?.stale, false);
  });

  it('a condition that recovers within the debounce never taints', () => {
    const recovered = gpuNode().condition('GPUReady', 'True', { since: T0 - 1_000 }).build();
    assert.deepEqual(evaluateNode(recovered, [r], T0 + 60_000).changes, []);
  });
});

describe('evaluateNode: adoption and ownership', () => {
  it('adopts a taint that was on the node when first seen instead of adding it again', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'False', { since: T0 - 600_000 }).build();
    const d = evaluateNode(n, [rule().continuous('0s').build()], T0);
    assert.deepEqual(ops(d), [`adopt ${GPU}:NoSchedule`]);
  });

  it('does not adopt again once ownership is recorded', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'False').managed({ [`${GPU}:NoSchedule`]: 'gpu' }).build();
    assert.deepEqual(evaluateNode(n, [rule().continuous('0s').build()], T0).changes, []);
  });

  it('never touches taints it does not manage', () => {
    const n = gpuNode()
      .taint('node.kubernetes.io/not-ready')
      .taint('example.com/dedicated')
      .taint(GPU, 'NoExecute')
      .condition('GPUReady', 'True')
      .build();
    assert.deepEqual(evaluateNode(n, [rule().build()], T0, { zeroConfig: false }).changes, []);
  });

  it('leaves the taint alone on nodes the rule does not select', () => {
    const n = node().labels({ pool: 'cpu' }).taint(GPU).condition('GPUReady', 'True').build();
    assert.deepEqual(evaluateNode(n, [rule().build()], T0).changes, []);
  });

  it('a rejected (overlapping) rule changes nothing', () => {
    const older = rule('older').createdAt(T0 - 10_000).continuous().conditions({ type: 'Other' }).build();
    const newer = rule('newer').createdAt(T0 - 5_000).build();
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').condition('Other', 'False').managed({ [`${GPU}:NoSchedule`]: 'older' }).build();
    assert.deepEqual(evaluateNode(n, [newer, older], T0).changes, []);
  });
});

describe('evaluateNode: dry run', () => {
  it('reports would-be changes apart and writes nothing', () => {
    const d = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'True').build(), [rule().dryRun().build()], T0);
    assert.deepEqual(d.changes, []);
    assert.deepEqual(d.dryRun.map((c) => c.op), ['remove']);
  });

  it('never adopts, so a dry-run rule never owns a taint', () => {
    const d = evaluateNode(gpuNode().taint(GPU).condition('GPUReady', 'False').build(), [rule().continuous().dryRun().build()], T0);
    assert.deepEqual(d.changes, []);
  });
});

describe('evaluateNode: zero-config mode', () => {
  it('removes readiness.k8s.io/<Type> once condition <Type> is True and records the pass', () => {
    const n = node().taint('readiness.k8s.io/NetworkReady').condition('NetworkReady', 'True').build();
    const [c] = evaluateNode(n, [], T0).changes;
    assert.equal(c?.op, 'remove');
    assert.equal(c?.source, 'zero-config');
    assert.equal(c?.gate, 'readiness.k8s.io/NetworkReady');
    assert.equal(c?.complete, true);
  });

  it('holds while the condition is not True', () => {
    const n = node().taint('readiness.k8s.io/NetworkReady').condition('NetworkReady', 'False').build();
    assert.deepEqual(evaluateNode(n, [], T0).changes, []);
  });

  it('leaves a taint that was put back after the pass alone', () => {
    const n = node().taint('readiness.k8s.io/NetworkReady').condition('NetworkReady', 'True').completed({ 'readiness.k8s.io/NetworkReady': 'x' }).build();
    assert.deepEqual(evaluateNode(n, [], T0).changes, []);
  });

  it('keeps off taint keys a rule names, even on nodes that rule does not select', () => {
    const n = node().labels({ pool: 'cpu' }).taint('readiness.k8s.io/GPUReady').condition('GPUReady', 'True').build();
    assert.deepEqual(evaluateNode(n, [rule().taint('readiness.k8s.io/GPUReady').build()], T0).changes, []);
  });

  it('can be turned off', () => {
    const n = node().taint('readiness.k8s.io/NetworkReady').condition('NetworkReady', 'True').build();
    assert.deepEqual(evaluateNode(n, [], T0, { zeroConfig: false }).changes, []);
  });
});

describe('evaluateNode: races reported against existing controllers', () => {
  const owned = { [`${GPU}:NoSchedule`]: 'gpu' };

  it('rule deleted while a node reconciles: a taint owned by a rule being deleted is removed', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'False').managed(owned).build();
    const d = evaluateNode(n, [rule().continuous().beingDeleted().build()], T0);
    assert.deepEqual(ops(d), [`remove ${GPU}:NoSchedule`]);
    assert.equal(d.changes[0]?.source, 'cleanup');
  });

  it('rule deleted while a node reconciles: a taint written from a stale cache after the rule is gone is removed as an orphan', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'False').managed(owned).build();
    const d = evaluateNode(n, [], T0);
    assert.deepEqual(ops(d), [`remove ${GPU}:NoSchedule`]);
    assert.match(d.changes[0]?.reason ?? '', /no longer manages/);
  });

  it('a new rule for the same taint takes over a deleting rule\'s taint instead of removing it', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'False').managed({ [`${GPU}:NoSchedule`]: 'old' }).build();
    const d = evaluateNode(n, [rule('old').continuous().beingDeleted().build(), rule('new').continuous().build()], T0);
    assert.deepEqual(ops(d), [`adopt ${GPU}:NoSchedule`]);
  });

  it('node relabelled out of the selector: the taint the rule owns is removed', () => {
    const n = node().labels({ pool: 'cpu' }).taint(GPU).condition('GPUReady', 'False').managed(owned).build();
    const d = evaluateNode(n, [rule().continuous().build()], T0);
    assert.deepEqual(ops(d), [`remove ${GPU}:NoSchedule`]);
    assert.match(d.changes[0]?.reason ?? '', /left the selector/);
  });

  it('node relabelled out of the selector: a taint the rule never owned stays', () => {
    const n = node().labels({ pool: 'cpu' }).taint(GPU).condition('GPUReady', 'False').build();
    assert.deepEqual(evaluateNode(n, [rule().continuous().build()], T0).changes, []);
  });

  it('completion annotation write failing: the same node yields the same decision on retry', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').build();
    assert.deepEqual(evaluateNode(n, [rule().build()], T0), evaluateNode(n, [rule().build()], T0));
  });

  it('a dry-run-only rule deleted strips nothing', () => {
    const n = gpuNode().taint(GPU).condition('GPUReady', 'True').build();
    assert.deepEqual(evaluateNode(n, [rule().dryRun().beingDeleted().build()], T0).changes, []);
  });

  it('node joining with its taint before its condition exists is held, never released', () => {
    const d = evaluateNode(gpuNode('new').taint(GPU).build(), [rule().build()], T0);
    assert.equal(gate(d).holding, true);
    assert.deepEqual(ops(d), [`adopt ${GPU}:NoSchedule`]);
  });
});
