import assert from 'node:assert/strict';
import { explainPod, podConditions } from '../src/index.js';
import { event, ms, pod } from './fixtures.js';

describe('conditions of 1.35 to 1.37 (issue 13)', () => {
  it('the condition table has first and stable versions from the v1.37.2 feature gates', () => {
    const row = (t: string) => podConditions.find((c) => c.type === t);
    assert.deepEqual([row('PodReadyToStartContainers')?.since, row('PodReadyToStartContainers')?.stable], ['1.28', '1.37']);
    assert.deepEqual([row('PodResizePending')?.stable, row('PodResizeInProgress')?.stable, row('DisruptionTarget')?.stable], ['1.35', '1.35', '1.31']);
    assert.deepEqual([row('AllContainersRestarting')?.since, row('AllContainersRestarting')?.stable, row('AllContainersRestarting')?.writtenBy], ['1.35', undefined, 'kubelet']);
    for (const c of podConditions) if (c.stable !== undefined) assert.ok(Number(c.stable.split('.')[1]) >= Number(c.since.split('.')[1]), c.type);
  });

  it('AllContainersRestarting True: the pod is being restarted in place, and which exit did it', () => {
    const p = pod().container('app').container('proxy').scheduled(1).condition('PodReadyToStartContainers', 'True', 3).condition('AllContainersRestarting', 'True', 100).build();
    p.status!.containerStatuses![0]!.state = { terminated: { exitCode: 3, reason: 'Error' } };
    const d = explainPod(p, [], ms(110));
    assert.deepEqual([d.cause, d.subject], ['RestartingInPlace', 'app']);
    assert.match(d.sentence, /restarting every container of the pod in place \(AllContainersRestarting for 10s\); container app exited with code 3, which its RestartAllContainers restart rule matches/);
  });

  it('AllContainersRestarting False is not a problem', () => {
    const p = pod().container('app').scheduled(1).condition('AllContainersRestarting', 'False', 5).build();
    assert.notEqual(explainPod(p, [], ms(10)).cause, 'RestartingInPlace');
  });

  it('PodReadyToStartContainers False says no cause (1.37: PodSandboxNotReady, no pod sandbox exists): the cause comes from the Events', () => {
    const p = pod().container('app').scheduled(1).condition('PodReadyToStartContainers', 'False', 2, 'PodSandboxNotReady', 'no pod sandbox exists').build();
    const plain = explainPod(p, [], ms(60));
    assert.equal(plain.cause, 'SandboxPending');
    const fromEvent = explainPod(p, [event('NetworkNotReady', 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady', 50)], ms(60));
    assert.equal(fromEvent.cause, 'FailedCreatePodSandBox');
    assert.match(fromEvent.sentence, /NetworkPluginNotReady/);
  });
});
