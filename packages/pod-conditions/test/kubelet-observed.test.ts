import assert from 'node:assert/strict';
import { crashLoop, explainPod, sandboxReady, networkReady } from '../src/index.js';
import type { Diagnosis } from '../src/index.js';
import { observed, observedEvents } from './kubelet-observed.js';

/** Some seconds after the status was written, as `podlife explain` would run. */
function after(p: (typeof observed)[keyof typeof observed], seconds: number): number {
  const times = [...(p.status?.containerStatuses ?? [])].flatMap((cs) => [cs.state?.terminated?.finishedAt, cs.state?.running?.startedAt, cs.lastState?.terminated?.finishedAt]);
  const latest = Math.max(...times.filter(Boolean).map((t) => Date.parse(String(t))), Date.parse(String(p.status?.startTime)));
  return latest + seconds * 1000;
}

function assertOneSentence(d: Diagnosis): void {
  assert.match(d.sentence, /\.$/);
  assert.doesNotMatch(d.sentence.slice(0, -1), /\.\s+[A-Z]/);
}

describe('explainPod on statuses the real kubelet (v1.35) wrote', () => {
  describe('a crash loop (restartPolicy Always, exit 3)', () => {
    it('is a crash loop while terminated between restarts (restartCount 2)', () => {
      const p = observed.crashExited2;
      const d = explainPod(p, observedEvents.crashy, after(p, 3));
      assert.deepEqual([d.stage, d.cause, d.subject, d.restarts, d.exitCode], ['containersReady', 'CrashLoopBackOff', 'crashy', 2, 3]);
      assert.equal(
        d.sentence,
        'Container crashy keeps crashing: it exited with code 3 (Error) after running <1s and has restarted 2 times; the kubelet restarts it after a back-off, see kubectl logs -n cap crashy -c crashy.',
      );
      assertOneSentence(d);
    });

    it('is the same crash loop while the kubelet backs off, with the back-off it announced', () => {
      const p = observed.crashBackOff2;
      const d = explainPod(p, observedEvents.crashy, after(p, 5));
      assert.deepEqual([d.cause, d.subject, d.restarts, d.exitCode], ['CrashLoopBackOff', 'crashy', 2, 3]);
      assert.equal(
        d.sentence,
        'Container crashy keeps crashing: it last exited with code 3 (Error) after running <1s and has restarted 2 times; the kubelet waits 20s before the next restart, see kubectl logs -n cap crashy -c crashy --previous.',
      );
    });

    it('is a crash loop after the first restart, before any back-off was written', () => {
      const d = explainPod(observed.crashExited1, observedEvents.crashy, after(observed.crashExited1, 1));
      assert.deepEqual([d.cause, d.restarts, d.exitCode], ['CrashLoopBackOff', 1, 3]);
      assert.match(d.sentence, /has restarted 1 time;/);
    });

    it('says the first exit is about to be restarted, not that the container is merely not ready', () => {
      const d = explainPod(observed.crashExited0, [], after(observed.crashExited0, 1));
      assert.deepEqual([d.cause, d.restarts, d.exitCode], ['ContainerExited', 0, 3]);
      assert.equal(d.sentence, 'Container crashy exited with code 3 (Error) after running <1s and the kubelet restarts it (restartPolicy Always); see kubectl logs -n cap crashy -c crashy.');
    });

    it('dates the loop from the earliest exit the kubelet still reports', () => {
      const p = observed.crashExited2;
      const d = explainPod(p, [], after(p, 3));
      assert.equal(d.sinceMs, Date.parse(String(p.status?.containerStatuses?.[0]?.lastState?.terminated?.finishedAt)));
    });
  });

  describe('a crash loop under restartPolicy OnFailure', () => {
    it('is a crash loop in both states', () => {
      for (const p of [observed.onFailureExited2, observed.onFailureBackOff2]) {
        const d = explainPod(p, [], after(p, 2));
        assert.deepEqual([d.cause, d.subject, d.restarts, d.exitCode], ['CrashLoopBackOff', 'app', 2, 3]);
      }
    });
  });

  describe('crashLoop', () => {
    const cs = (p: (typeof observed)[keyof typeof observed]) => p.status!.containerStatuses![0]!;
    const spec = (p: (typeof observed)[keyof typeof observed]) => p.spec!.containers[0]!;

    it('reads the phase, restarts and both exits from a terminated status', () => {
      const p = observed.crashExited2;
      const loop = crashLoop(p, spec(p), cs(p), { nowMs: after(p, 1) });
      assert.equal(loop?.phase, 'exited');
      assert.equal(loop?.restarts, 2);
      assert.equal(loop?.last.exitCode, 3);
      assert.equal(loop?.previous?.exitCode, 3);
      assert.ok((loop?.previous?.finishedAtMs ?? 0) < (loop?.last.finishedAtMs ?? 0));
    });

    it('reads the back-off from the waiting message', () => {
      const p = observed.crashBackOff2;
      const loop = crashLoop(p, spec(p), cs(p), { nowMs: after(p, 1) });
      assert.deepEqual([loop?.phase, loop?.backOff, loop?.last.exitCode], ['backingOff', '20s', 3]);
    });

    it('sees no loop in a pod that completed, a running pod or a pull failure', () => {
      for (const p of [observed.succeeded, observed.probeFailing, observed.gateMissing, observed.imagePullBackOff]) {
        assert.equal(crashLoop(p, spec(p), cs(p), { nowMs: after(p, 1) }), undefined, p.metadata?.name);
      }
    });
  });

  describe('images', () => {
    it('explains ErrImagePull with the runtime error', () => {
      const d = explainPod(observed.errImagePull, observedEvents.pull, after(observed.errImagePull, 1));
      assert.deepEqual([d.cause, d.subject], ['ImagePullBackOff', 'app']);
      assert.match(d.sentence, /^Image "registry\.example\/podlife\/missing:1" of container app cannot be pulled \(ErrImagePull: failed to pull and unpack image .*connection refused\); check the image name/);
    });

    it('explains ImagePullBackOff with the runtime error', () => {
      const d = explainPod(observed.imagePullBackOff, observedEvents.pull, after(observed.imagePullBackOff, 1));
      assert.equal(d.cause, 'ImagePullBackOff');
      assert.match(d.sentence, /\(ImagePullBackOff: Back-off pulling image "registry\.example\/podlife\/missing:1": ErrImagePull: /);
      assertOneSentence(d);
    });

    it('explains ErrImageNeverPull as an image missing on the node', () => {
      const d = explainPod(observed.errImageNeverPull, [], after(observed.errImageNeverPull, 1));
      assert.equal(d.cause, 'ImagePullBackOff');
      assert.equal(d.sentence, 'Image "registry.example/podlife/missing:1" of container app is not on node node-1 and its imagePullPolicy is Never (ErrImageNeverPull); load the image onto that node or allow the kubelet to pull it.');
    });
  });

  describe('readiness', () => {
    it('explains a failing readiness probe from the Unhealthy event', () => {
      const d = explainPod(observed.probeFailing, observedEvents.probe, after(observed.probeFailing, 30));
      assert.deepEqual([d.cause, d.subject], ['ReadinessProbeFailing', 'app']);
      assert.equal(d.sentence, 'Container app is running but its readiness probe fails (Readiness probe failed: not warm); fix what the probe checks or the probe itself.');
    });

    it('explains a readiness gate nobody has set', () => {
      const d = explainPod(observed.gateMissing, [], after(observed.gateMissing, 5));
      assert.deepEqual([d.stage, d.cause, d.subject], ['ready', 'ReadinessGateMissing', 'example.com/warm']);
    });
  });

  describe('the sandbox condition', () => {
    it('is False, from the condition, while the containers are being created', () => {
      const r = sandboxReady(observed.creating);
      assert.deepEqual([r.status, r.source], ['False', 'condition']);
      assert.equal(explainPod(observed.creating, [], after(observed.creating, 1)).cause, 'SandboxPending');
    });

    it('is True with the pod IP once containers run', () => {
      const p = observed.probeFailing;
      assert.deepEqual([sandboxReady(p).status, sandboxReady(p).source], ['True', 'condition']);
      assert.equal(networkReady(p, 'IPv4').status, 'True');
      assert.equal(networkReady(p, 'IPv6').reason, 'NoAddressOfFamily');
    });

    it('turns False again once the pod has completed and its sandbox is gone', () => {
      const r = sandboxReady(observed.succeeded);
      assert.deepEqual([r.status, r.source], ['False', 'condition']);
      assert.equal(explainPod(observed.succeeded, [], after(observed.succeeded, 1)).cause, 'Succeeded');
    });
  });
});

describe('explainPod on more crash loops the real kubelet (v1.35) wrote', () => {
  it('explains a container that crashes after running a few seconds, between restarts', () => {
    const d = explainPod(observed.slowCrashExited2, [], after(observed.slowCrashExited2, 2));
    assert.deepEqual([d.cause, d.restarts, d.exitCode], ['CrashLoopBackOff', 2, 3]);
    assert.match(d.sentence, /^Container app keeps crashing: it exited with code 3 \(Error\) after running 4\.0s and has restarted 2 times;/);
  });

  it('says a ready pod whose crashing container runs again is up now and has been crashing (the kubelet reports it Ready)', () => {
    const d = explainPod(observed.slowCrashRunning2, [], after(observed.slowCrashRunning2, 1));
    assert.deepEqual([d.stage, d.cause, d.restarts, d.exitCode], ['ready', 'ReadyAfterCrashes', 2, 3]);
    assert.match(d.sentence, /^The pod is ready now, but container app has been crashing: it last exited with code 3 \(Error\) after running 4\.0s and has restarted 2 times;/);
  });

  it('explains exit 0 under restartPolicy Always as a loop of a container that must keep running', () => {
    const d = explainPod(observed.exitZeroExited2, [], after(observed.exitZeroExited2, 1));
    assert.deepEqual([d.cause, d.exitCode], ['CrashLoopBackOff', 0]);
    assert.equal(d.sentence, 'Container app keeps crashing: it exited with code 0 (Completed) after running <1s and has restarted 2 times; a container under restartPolicy Always must keep running (use a Job for work that ends), the kubelet restarts it after a back-off, see kubectl logs -n cap exit0 -c app.');
  });

  it('explains a command that does not exist, with the runtime error kept to its root cause', () => {
    const d = explainPod(observed.startErrorBackOff, [], after(observed.startErrorBackOff, 1));
    assert.deepEqual([d.cause, d.exitCode], ['CrashLoopBackOff', 128]);
    assert.match(d.sentence, /last exited with code 128 \(StartError: failed to create containerd task: .*\/no\/such\/binary/);
    const run = explainPod(observed.runContainerError, [], after(observed.runContainerError, 1));
    assert.equal(run.cause, 'CreateContainerConfigError');
    assert.match(run.sentence, /^Container app cannot start \(RunContainerError: failed to create containerd task: .*no such file or directory: unknown\) and has been retried 3 times; fix its command/);
  });

  it('explains an init container crash loop in both of its states', () => {
    for (const p of [observed.initCrashExited2, observed.initCrashBackOff2]) {
      const d = explainPod(p, [], after(p, 1));
      assert.deepEqual([d.stage, d.cause, d.subject, d.restarts, d.exitCode], ['initialized', 'CrashLoopBackOff', 'migrate', 2, 2]);
      assert.match(d.sentence, /^Init container migrate keeps crashing: it (last )?exited with code 2 \(Error\)/);
    }
  });
});

describe('crashLoop on hand-made statuses', () => {
  const base = { ...observed.crashExited2, spec: { ...observed.crashExited2.spec!, restartPolicy: 'Never' } };

  it('never reports a container the kubelet will not restart', () => {
    const cs = base.status!.containerStatuses![0]!;
    assert.equal(crashLoop(base, base.spec.containers[0], cs, { nowMs: Date.now() }), undefined);
  });

  it('reports a running, unready container that restarted within the back-off reset window, and not after it', () => {
    const started = Date.parse('2026-12-01T12:00:00Z');
    const p = structuredClone(observed.crashExited2);
    const cs = p.status!.containerStatuses![0]!;
    cs.lastState = { terminated: { exitCode: 1, reason: 'Error' } };
    cs.state = { running: { startedAt: new Date(started).toISOString() as unknown as Date } };
    cs.ready = false;
    assert.equal(crashLoop(p, p.spec!.containers[0], cs, { nowMs: started + 9 * 60_000 })?.phase, 'runningAgain');
    assert.equal(crashLoop(p, p.spec!.containers[0], cs, { nowMs: started + 11 * 60_000 }), undefined);
    const d = explainPod(p, [], started + 5_000);
    assert.match(d.sentence, /it is running again for 5\.0s, see kubectl logs -n cap crashy -c crashy --previous\.$/);
  });
});
