import assert from 'node:assert/strict';
import fc from 'fast-check';
import { explainPod, podExplanation, renderExplanation } from '../src/index.js';
import type { Diagnosis, PodEvent } from '../src/index.js';
import { at, event, ms, pod, startedPod, type PodBuilder } from './fixtures.js';

const now = ms(120);
/** Every sentence is one sentence: it ends with a period and has none in the middle followed by a capital. */
function assertOneSentence(d: Diagnosis): void {
  assert.match(d.sentence, /\.$/);
  assert.doesNotMatch(d.sentence.slice(0, -1), /\.\s+[A-Z]/);
}

describe('explainPod', () => {
  it('says a ready pod is ready', () => {
    const d = explainPod(startedPod().build(), [], now);
    assert.deepEqual([d.stage, d.cause, d.sentence], ['ready', 'Ready', 'The pod is ready.']);
  });

  describe('scheduling', () => {
    it('explains FailedScheduling from the PodScheduled condition', () => {
      const p = pod().container('app').condition('PodScheduled', 'False', 0, 'Unschedulable', '0/3 nodes are available: 3 Insufficient cpu.').build();
      const d = explainPod(p, [], now);
      assert.deepEqual([d.stage, d.cause], ['scheduled', 'FailedScheduling']);
      assert.match(d.sentence, /cannot place the pod for 2m00s: 0\/3 nodes are available: 3 Insufficient cpu; free capacity/);
      assertOneSentence(d);
    });

    it('explains FailedScheduling from the event when the condition has no message', () => {
      const p = pod().container('app').build();
      const d = explainPod(p, [event('FailedScheduling', '0/1 nodes are available: 1 node(s) had untolerated taint.', 30)], now);
      assert.equal(d.cause, 'FailedScheduling');
      assert.match(d.sentence, /untolerated taint/);
    });

    it('points at the scheduler when nothing has looked at the pod', () => {
      const d = explainPod(pod().container('app').build(), [], now);
      assert.equal(d.cause, 'WaitingForScheduler');
      assert.match(d.sentence, /scheduler "default-scheduler" is running/);
    });
  });

  describe('sandbox', () => {
    const scheduled = () => pod().container('app').scheduled(1).condition('PodReadyToStartContainers', 'False', 1);

    it('explains FailedCreatePodSandBox as a network plugin problem on the node', () => {
      const msg = 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": plugin type="calico" failed (add): connection refused';
      const d = explainPod(scheduled().build(), [event('FailedCreatePodSandBox', msg, 40)], now);
      assert.deepEqual([d.stage, d.cause, d.subject], ['sandbox', 'FailedCreatePodSandBox', 'node-a']);
      assert.match(d.sentence, /on node node-a cannot create the pod sandbox: .*calico.*; check the network plugin \(CNI\)/);
      assertOneSentence(d);
    });

    it('explains FailedMount naming the volume', () => {
      const msg = 'MountVolume.SetUp failed for volume "config" : configmap "web-config" not found';
      const d = explainPod(scheduled().build(), [event('FailedMount', msg, 50)], now);
      assert.deepEqual([d.cause, d.subject], ['FailedMount', 'config']);
      assert.match(d.sentence, /^Volume "config" cannot be mounted on node node-a: .*web-config.*; check that the Secret, ConfigMap/);
      assertOneSentence(d);
    });

    it('uses the most recent of mount and sandbox failures', () => {
      const evs = [event('FailedMount', 'MountVolume.SetUp failed for volume "x"', 10), event('FailedCreatePodSandBox', 'cni down', 60)];
      assert.equal(explainPod(scheduled().build(), evs, now).cause, 'FailedCreatePodSandBox');
    });

    it('reports a sandbox that is not ready without any error event', () => {
      const d = explainPod(scheduled().build(), [], now);
      assert.equal(d.cause, 'SandboxPending');
      assert.match(d.sentence, /for 1m59s/);
    });

    it('diagnoses the sandbox on 1.25-1.27 clusters from PodHasNetwork', () => {
      const p = pod().container('app').scheduled(1).condition('PodHasNetwork', 'False', 1).build();
      assert.equal(explainPod(p, [event('FailedCreatePodSandBox', 'no IPs left', 5)], now).cause, 'FailedCreatePodSandBox');
    });

    it('still sees sandbox failures on clusters without the condition', () => {
      const p = pod().container('app').scheduled(1).build();
      assert.equal(explainPod(p, [event('FailedCreatePodSandBox', 'no IPs left', 5)], now).cause, 'FailedCreatePodSandBox');
    });
  });

  describe('containers', () => {
    const up = () => pod().scheduled(1).ips('10.0.0.2').condition('PodReadyToStartContainers', 'True', 2).condition('Initialized', 'True', 2);

    it('explains an image pull back-off naming the image', () => {
      const p = up().container('app', { image: 'example.com/app:typo' }).waiting('app', 'ImagePullBackOff', 'Back-off pulling image "example.com/app:typo"').build();
      const d = explainPod(p, [], now);
      assert.deepEqual([d.stage, d.cause, d.subject], ['containersReady', 'ImagePullBackOff', 'app']);
      assert.match(d.sentence, /Image "example\.com\/app:typo" of container app cannot be pulled .*imagePullSecrets\.$/);
      assertOneSentence(d);
    });

    it('explains CrashLoopBackOff with the last exit code and the logs command', () => {
      const p = up().container('app').waiting('app', 'CrashLoopBackOff', 'back-off 40s').lastTerminated('app', 1, 'Error', 4).build();
      const d = explainPod(p, [], now);
      assert.equal(d.cause, 'CrashLoopBackOff');
      assert.deepEqual([d.restarts, d.exitCode], [4, 1]);
      assert.equal(d.sentence, 'Container app keeps crashing: it last exited with code 1 (Error) after running 1.0s and has restarted 4 times; the kubelet waits 40s before the next restart, see kubectl logs -n default web -c app --previous.');
    });

    it('the kubectl command it suggests quotes each name for the shell', () => {
      const p = pod('a; curl x | sh #', "team's").scheduled(1).ips('10.0.0.2').condition('PodReadyToStartContainers', 'True', 2).condition('Initialized', 'True', 2).container('a b').waiting('a b', 'CrashLoopBackOff', 'back-off 40s').lastTerminated('a b', 1, 'Error', 4).build();
      assert.match(explainPod(p, [], now).sentence, /see kubectl logs -n 'team'\\''s' 'a; curl x \| sh #' -c 'a b' --previous\.$/);
    });

    it('explains a failing readiness probe from the Unhealthy event', () => {
      const p = up().container('app', { readinessProbe: true }).running('app', 3).condition('ContainersReady', 'False', 2).build();
      const evs = [event('Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', 100, { container: 'app' })];
      const d = explainPod(p, evs, now);
      assert.deepEqual([d.cause, d.subject], ['ReadinessProbeFailing', 'app']);
      assert.match(d.sentence, /readiness probe fails \(Readiness probe failed: HTTP probe failed with statuscode: 503\)/);
      assertOneSentence(d);
    });

    it('ignores liveness probe failures when explaining readiness', () => {
      const p = up().container('app').running('app', 3).build();
      const evs = [event('Unhealthy', 'Liveness probe failed: timeout', 100, { container: 'app' })];
      assert.equal(explainPod(p, evs, now).cause, 'ContainersNotReady');
    });

    it('explains a readiness probe that has not passed yet', () => {
      const p = up().container('app', { readinessProbe: true }).running('app', 60).build();
      const d = explainPod(p, [], now);
      assert.equal(d.cause, 'ReadinessProbeFailing');
      assert.match(d.sentence, /running for 1m00s but its readiness probe has not passed yet/);
    });

    it('explains a missing ConfigMap key', () => {
      const p = up().container('app').waiting('app', 'CreateContainerConfigError', 'configmap "x" not found').build();
      assert.equal(explainPod(p, [], now).cause, 'CreateContainerConfigError');
    });

    it('explains an init container that keeps crashing before the app containers', () => {
      const p = pod().scheduled(1).ips('10.0.0.2').condition('PodReadyToStartContainers', 'True', 2).condition('Initialized', 'False', 2)
        .initContainer('migrate').container('app').waiting('migrate', 'CrashLoopBackOff').lastTerminated('migrate', 2).build();
      const d = explainPod(p, [], now);
      assert.deepEqual([d.stage, d.cause, d.subject], ['initialized', 'CrashLoopBackOff', 'migrate']);
      assert.match(d.sentence, /^Init container migrate keeps crashing/);
    });

    it('explains a running init container', () => {
      const p = pod().scheduled(1).ips('10.0.0.2').condition('PodReadyToStartContainers', 'True', 2).condition('Initialized', 'False', 2)
        .initContainer('migrate').container('app').running('migrate', 3).build();
      assert.equal(explainPod(p, [], now).cause, 'InitContainerRunning');
    });
  });

  describe('readiness gates', () => {
    it('explains a gate whose condition is missing', () => {
      const p = startedPod().gate('example.com/lb-registered').condition('Ready', 'False', 6, 'ReadinessGatesNotReady').build();
      const d = explainPod(p, [], now);
      assert.deepEqual([d.stage, d.cause, d.subject], ['ready', 'ReadinessGateMissing', 'example.com/lb-registered']);
      assert.match(d.sentence, /the controller that owns it is not running or does not watch this pod\.$/);
      assertOneSentence(d);
    });

    it('explains a gate that is False with its reason', () => {
      const p = startedPod().gate('example.com/lb-registered').condition('Ready', 'False', 6)
        .condition('example.com/lb-registered', 'False', 7, 'TargetUnhealthy', 'target 10.1.0.7 draining').build();
      const d = explainPod(p, [], now);
      assert.equal(d.cause, 'ReadinessGateFalse');
      assert.match(d.sentence, /"example\.com\/lb-registered" is False \(TargetUnhealthy: target 10\.1\.0\.7 draining\) for 1m53s/);
    });
  });

  describe('ends of life', () => {
    it('explains a failed pod with the failing container', () => {
      const p = pod().container('app').scheduled(1).terminated('app', 137, 2, 9, 'OOMKilled').phase('Failed').build();
      const d = explainPod(p, [], now);
      assert.equal(d.cause, 'Failed');
      assert.match(d.sentence, /container app exited with code 137/);
    });

    it('explains a pod being deleted', () => {
      assert.equal(explainPod(startedPod().deleting(100).build(), [], now).cause, 'Terminating');
    });

    it('never throws on an empty object', () => {
      assert.equal(explainPod({}, undefined, now).cause, 'WaitingForScheduler');
    });
  });
});

describe('explain agrees with itself: the diagnosis names the stage the timeline shows in progress', () => {
  const waitingStage = (p: ReturnType<PodBuilder['build']>, evs: PodEvent[] = []) => podExplanation(p, evs, now).timeline.stages.find((s) => s.state === 'waiting')?.key;

  it('no sandbox condition, no Events, the container still ContainerCreating: both say sandbox', () => {
    const p = pod().container('app').scheduled(1).condition('Initialized', 'True', 2).build();
    const x = podExplanation(p, [], now);
    assert.equal(waitingStage(p), 'sandbox');
    assert.deepEqual([x.diagnosis.stage, x.diagnosis.cause, x.diagnosis.subject], ['sandbox', 'SandboxPending', 'node-a']);
    assert.match(x.diagnosis.sentence, /has not started a container of the pod for 1m59s, and this cluster does not report the sandbox condition/);
    assert.match(renderExplanation(x), /stuck at: sandbox \(SandboxPending\)/);
  });

  it('no sandbox condition, but a container waits on its image: the sandbox exists, both say containersReady', () => {
    const p = pod().container('app').scheduled(1).condition('Initialized', 'True', 2).waiting('app', 'ImagePullBackOff', 'Back-off pulling image').build();
    assert.equal(waitingStage(p), 'containersReady');
    assert.deepEqual([explainPod(p, [], now).stage, explainPod(p, [], now).cause], ['containersReady', 'ImagePullBackOff']);
  });

  it('no sandbox condition, but the image is being pulled (an Event): the sandbox exists since, both say containersReady', () => {
    const p = pod().container('app').scheduled(1).condition('Initialized', 'True', 2).build();
    const evs = [event('Pulling', 'Pulling image "example.com/app:1"', 3, { type: 'Normal', container: 'app' })];
    assert.equal(waitingStage(p, evs), 'containersReady');
    assert.equal(explainPod(p, evs, now).stage, 'containersReady');
  });

  it('property: for any start state, the diagnosis of a pod not done is at the stage the timeline shows in progress', () => {
    const types = ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'] as const;
    fc.assert(
      fc.property(
        fc.record({
          // The kubelet reaches its stages in order: the first `passed` are True, the next is False
          // or absent, the later ones False or absent (Initialized may come before the sandbox).
          passed: fc.integer({ min: 0, max: 4 }),
          next: fc.constantFrom<'False' | undefined>('False', undefined),
          later: fc.array(fc.constantFrom<'False' | undefined>('False', undefined), { minLength: 5, maxLength: 5 }),
          initializedEarly: fc.boolean(),
          ip: fc.boolean(),
          state: fc.constantFrom('creating', 'pull', 'running', 'runningReady', 'crashed'),
          pulling: fc.boolean(),
          gate: fc.boolean(),
        }),
        (s) => {
          const b = pod().container('app');
          if (s.passed > 0) b.node();
          types.forEach((type, i) => {
            const status = i < s.passed || (type === 'Initialized' && s.initializedEarly && s.passed >= 1) ? 'True' : i === s.passed ? s.next : s.later[i];
            if (status !== undefined) b.condition(type, status, i + 1);
          });
          if (s.gate) b.gate('example.com/lb');
          if (s.ip && s.passed > 0) b.ips('10.0.0.2');
          if (s.state === 'pull') b.waiting('app', 'ErrImagePull');
          if (s.state === 'running' || s.state === 'runningReady') b.running('app', 6, s.state === 'runningReady');
          if (s.state === 'crashed') b.waiting('app', 'CrashLoopBackOff', 'back-off 40s').lastTerminated('app', 1);
          const p = b.build();
          const evs = s.pulling && s.passed > 0 ? [event('Pulling', 'Pulling image', 4, { type: 'Normal', container: 'app' })] : [];
          const x = podExplanation(p, evs, now);
          assert.equal(x.diagnosis.stage, waitingStage(p, evs) ?? 'ready', `${x.diagnosis.cause}: ${x.diagnosis.sentence}`);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('a crash loop between crashes (running, ready, restarted, last exit non-zero)', () => {
  /** What the real node showed for `echo boom; exit 3` under restartPolicy Always, in the seconds it ran again. */
  function upBetweenCrashes(restarts: number) {
    const p = startedPod().build();
    const status = p.status!.containerStatuses![0]!;
    status.restartCount = restarts;
    status.ready = true;
    status.started = true;
    status.state = { running: { startedAt: at(118) as unknown as Date } };
    status.lastState = { terminated: { exitCode: 3, reason: 'Error', startedAt: at(110) as unknown as Date, finishedAt: at(110) as unknown as Date } };
    return p;
  }

  for (const restarts of [2, 3]) {
    it(`restartCount ${restarts}: up now and crashing, naming the last exit, not "The pod is ready."`, () => {
      const d = explainPod(upBetweenCrashes(restarts), [], now);
      assert.deepEqual([d.stage, d.cause, d.subject, d.restarts, d.exitCode], ['ready', 'ReadyAfterCrashes', 'app', restarts, 3]);
      assert.equal(
        d.sentence,
        `The pod is ready now, but container app has been crashing: it last exited with code 3 (Error) after running <1s and has restarted ${restarts} times; it is up again for 2.0s, see kubectl logs -n default web -c app --previous.`,
      );
      assertOneSentence(d);
    });
  }

  it('a container that crashed once long ago and has run since is simply ready', () => {
    const p = upBetweenCrashes(1);
    p.status!.containerStatuses![0]!.state = { running: { startedAt: at(-700) as unknown as Date } };
    assert.equal(explainPod(p, [], now).cause, 'Ready');
  });

  it('a container whose last run ended with exit 0 under OnFailure was not crashing', () => {
    const p = upBetweenCrashes(2);
    p.spec!.restartPolicy = 'OnFailure';
    p.status!.containerStatuses![0]!.lastState = { terminated: { exitCode: 0, reason: 'Completed', startedAt: at(100) as unknown as Date, finishedAt: at(110) as unknown as Date } };
    assert.equal(explainPod(p, [], now).cause, 'Ready');
  });
});
