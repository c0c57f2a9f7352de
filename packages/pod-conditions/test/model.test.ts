import assert from 'node:assert/strict';
import { podCondition, podConditions } from '../src/index.js';
import { podConditionStatus, conditionAliases, readinessGateTypes } from '../src/model.js';
import { pod } from './fixtures.js';

describe('the pod condition model', () => {
  it('lists every built-in pod condition type with a meaning and a first version', () => {
    const types = podConditions.map((c) => c.type);
    for (const t of ['PodScheduled', 'PodReadyToStartContainers', 'PodHasNetwork', 'Initialized', 'ContainersReady', 'Ready', 'DisruptionTarget', 'PodResizePending', 'PodResizeInProgress']) {
      assert.ok(types.includes(t as never), t);
    }
    for (const c of podConditions) {
      assert.ok(c.meaning.length > 10, `${c.type} has a meaning`);
      assert.match(c.since, /^1\.\d+$/);
    }
  });

  it('records PodHasNetwork as the 1.25-1.27 name of PodReadyToStartContainers', () => {
    const alpha = podConditions.find((c) => c.type === 'PodHasNetwork');
    assert.deepEqual([alpha?.since, alpha?.until, alpha?.aliasOf], ['1.25', '1.27', 'PodReadyToStartContainers']);
  });

  it('reads PodHasNetwork when asked for PodReadyToStartContainers', () => {
    const p = pod().condition('PodHasNetwork', 'True', 2).build();
    assert.equal(podCondition(p, 'PodReadyToStartContainers')?.type, 'PodHasNetwork');
    assert.equal(podConditionStatus(p, 'PodReadyToStartContainers'), 'True');
  });

  it('reads PodReadyToStartContainers when asked for PodHasNetwork', () => {
    const p = pod().condition('PodReadyToStartContainers', 'False', 2).build();
    assert.equal(podConditionStatus(p, 'PodHasNetwork'), 'False');
  });

  it('prefers the exact name when a pod carries both sandbox conditions', () => {
    const p = pod().condition('PodHasNetwork', 'False', 1).condition('PodReadyToStartContainers', 'True', 2).build();
    assert.equal(podConditionStatus(p, 'PodReadyToStartContainers'), 'True');
    assert.equal(podConditionStatus(p, 'PodHasNetwork'), 'False');
  });

  it('does not alias other condition types', () => {
    assert.deepEqual(conditionAliases('Ready'), ['Ready']);
    assert.equal(podCondition(pod().condition('Ready', 'True', 1).build(), 'ContainersReady'), undefined);
  });

  it('reads nothing from a pod without status', () => {
    assert.equal(podConditionStatus({ metadata: { name: 'x' } }, 'Ready'), undefined);
  });

  it('lists readiness gate types from the spec', () => {
    assert.deepEqual(readinessGateTypes(pod().gate('example.com/lb').gate('example.com/dns').build()), ['example.com/lb', 'example.com/dns']);
  });
});
