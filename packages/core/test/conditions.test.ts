import assert from 'node:assert/strict';
import type { V1NodeCondition, V1PodCondition } from '@kubernetes/client-node';
import { findCondition, setCondition, timeMs, type ConditionLike } from '@podlife/core';
import { conditionStatus, isConditionTrue, sameCondition } from '../src/conditions.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const T1 = T0 + 60_000;

function cond(type: string, status: string, extra: Partial<ConditionLike> = {}): ConditionLike {
  return { type, status, lastTransitionTime: new Date(T0).toISOString(), ...extra };
}

describe('conditions: reading', () => {
  const list = [cond('Ready', 'True'), cond('PodScheduled', 'False'), cond('Odd', 'maybe')];

  it('finds a condition by type', () => {
    assert.equal(findCondition(list, 'PodScheduled')?.status, 'False');
  });
  it('finds nothing in an absent or null list', () => {
    assert.equal(findCondition(undefined, 'Ready'), undefined);
    assert.equal(findCondition(null, 'Ready'), undefined);
  });
  it('reports the status, undefined when the condition is absent', () => {
    assert.equal(conditionStatus(list, 'Ready'), 'True');
    assert.equal(conditionStatus(list, 'Initialized'), undefined);
  });
  it('reads a status outside True/False/Unknown as Unknown', () => {
    assert.equal(conditionStatus(list, 'Odd'), 'Unknown');
  });
  it('is true only for status True', () => {
    assert.equal(isConditionTrue(list, 'Ready'), true);
    assert.equal(isConditionTrue(list, 'PodScheduled'), false);
    assert.equal(isConditionTrue(list, 'Initialized'), false);
  });
  it('compares type, status, reason and message, ignoring times', () => {
    const a = cond('Ready', 'True', { reason: 'R', message: 'm' });
    assert.equal(sameCondition(a, { ...a, lastTransitionTime: new Date(T1) }), true);
    assert.equal(sameCondition(a, { ...a, reason: 'Other' }), false);
    assert.equal(sameCondition(a, { ...a, message: undefined }), false);
  });
});

describe('conditions: setCondition keeps lastTransitionTime meaningful', () => {
  it('sets lastTransitionTime to now (whole seconds) for a new type, appended last', () => {
    const { conditions, condition, changed } = setCondition([cond('Ready', 'True')], { type: 'X', status: 'True' }, T1 + 999);
    assert.equal(changed, true);
    assert.deepEqual(conditions.map((c) => c.type), ['Ready', 'X']);
    assert.equal(timeMs(condition.lastTransitionTime), T1);
  });
  it('moves lastTransitionTime when the status changes', () => {
    const { condition } = setCondition([cond('Ready', 'True')], { type: 'Ready', status: 'False' }, T1);
    assert.equal(timeMs(condition.lastTransitionTime), T1);
  });
  it('keeps lastTransitionTime when only reason or message change', () => {
    const { condition, changed } = setCondition(
      [cond('Ready', 'True', { reason: 'A' })],
      { type: 'Ready', status: 'True', reason: 'B', message: 'now B' },
      T1,
    );
    assert.equal(changed, true);
    assert.equal(condition.reason, 'B');
    assert.equal(timeMs(condition.lastTransitionTime), T0);
  });
  it('reports no change, and returns an equal copy, when nothing a reader sees differs', () => {
    const input = [cond('Ready', 'True', { reason: 'A' })];
    const result = setCondition(input, { type: 'Ready', status: 'True', reason: 'A' }, T1);
    assert.equal(result.changed, false);
    assert.notEqual(result.conditions, input);
    assert.deepEqual(result.conditions, input);
    assert.equal(result.condition, input[0]);
  });
  it('never mutates the input list', () => {
    const input = [cond('A', 'True'), cond('B', 'False')];
    const snapshot = structuredClone(input);
    setCondition(input, { type: 'B', status: 'True' }, T1);
    setCondition(input, { type: 'C', status: 'True' }, T1);
    assert.deepEqual(input, snapshot);
  });
  it('keeps the order of the other conditions', () => {
    const { conditions } = setCondition([cond('A', 'True'), cond('B', 'False'), cond('C', 'True')], { type: 'B', status: 'True' }, T1);
    assert.deepEqual(conditions.map((c) => `${c.type}=${c.status}`), ['A=True', 'B=True', 'C=True']);
  });
  it('starts a list from null or undefined', () => {
    assert.equal(setCondition(null, { type: 'A', status: 'True' }, T1).conditions.length, 1);
    assert.equal(setCondition(undefined, { type: 'A', status: 'True' }, T1).conditions.length, 1);
  });
  it('works with pod and node condition types', () => {
    const pod: V1PodCondition[] = [{ type: 'Ready', status: 'False' }];
    const podResult: V1PodCondition = setCondition(pod, { type: 'Ready', status: 'True' }, T1).condition;
    const node: V1NodeCondition[] = [];
    const nodeResult: V1NodeCondition = setCondition(node, { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: new Date(T1) }, T1).condition;
    assert.equal(podResult.status, 'True');
    assert.equal(timeMs(nodeResult.lastHeartbeatTime), T1);
  });
  it('stamps a time on an unchanged-status condition that never had one', () => {
    const { condition } = setCondition<ConditionLike>([{ type: 'Ready', status: 'True' }], { type: 'Ready', status: 'True', reason: 'R' }, T1);
    assert.equal(timeMs(condition.lastTransitionTime), T1);
  });
});
