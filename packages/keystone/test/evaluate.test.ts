import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import { evaluatePod, type Decision, type EvaluateOptions, type StopDecision } from '../src/index.js';
import { pod, T0, type PodBuilder } from './fixtures.js';

/** A decision in one line: what a reader of the table needs to check. */
function summary(d: Decision): string {
  switch (d.action) {
    case 'none':
      return `none:${d.why}`;
    case 'invalid':
      return `invalid:${[...new Set(d.errors.map((e) => e.key))].sort().join(',')}`;
    case 'delete':
      return `delete:${d.why} grace=${d.gracePeriodSeconds}`;
    case 'phase':
      return `phase:${d.rule}:${d.phase}`;
    case 'stop': {
      const steps = d.steps.map((s) => `${s.container}@${s.stage}${s.escalate ? '!' : ''}${s.issued ? '*' : ''}`);
      return `stop:${d.rule} [${steps.join(' ')}]${d.failed.length ? ` failed=${d.failed.join(',')}` : ''}`;
    }
  }
}

interface Case {
  readonly name: string;
  readonly pod: PodBuilder;
  readonly want: string;
  readonly now?: number;
  readonly options?: Partial<EvaluateOptions>;
}

function run(c: Pick<Case, 'pod' | 'now' | 'options'>): Decision {
  return evaluatePod(c.pod.build(), { nowMs: c.now ?? T0 + 1000, ...c.options });
}

function table(cases: readonly Case[]): void {
  for (const c of cases) {
    it(`${c.name} -> ${c.want}`, () => assert.equal(summary(run(c)), c.want));
  }
}

describe('evaluatePod', () => {
  describe('pods it leaves alone', () => {
    table([
      { name: 'no annotations', pod: pod().container('app').finished('app', 0), want: 'none:not-ours' },
      { name: 'only a non-keystone podlife annotation', pod: pod().container('app').annotate('podlife.dev/network-conditions', 'true').finished('app', 0), want: 'none:not-ours' },
      { name: 'only the webhook key', pod: pod().container('app').annotate('podlife.dev/native-sidecars', 'true').finished('app', 0), want: 'none:not-ours' },
      { name: 'terminating (deletionTimestamp)', pod: pod().container('app').sidecar('proxy').finished('app', 0).deleting(), want: 'none:terminating' },
      { name: 'phase Succeeded', pod: pod().container('app').sidecar('proxy').finished('app', 0).phase('Succeeded'), want: 'none:terminal' },
      { name: 'phase Failed', pod: pod().keystone('app').sidecar('proxy').finished('app', 1).phase('Failed'), want: 'none:terminal' },
      { name: 'invalid and terminating', pod: pod().container('app').annotate('role.podlife.dev/nope', 'sidecar').deleting(), want: 'none:terminating' },
    ]);
  });

  describe('rule S: sidecars stop when every main container has finished', () => {
    table([
      { name: 'main still running', pod: pod().container('app').sidecar('proxy'), want: 'none:waiting' },
      { name: 'Never, main exited 0', pod: pod().container('app').sidecar('proxy').finished('app', 0), want: 'stop:S [proxy@0]' },
      { name: 'Never, main exited 1 (failed mains finish too)', pod: pod().container('app').sidecar('proxy').finished('app', 1), want: 'stop:S [proxy@0]' },
      { name: 'one of two mains still running', pod: pod().container('a').container('b').sidecar('proxy').finished('a', 0), want: 'none:waiting' },
      { name: 'both mains finished', pod: pod().container('a').container('b').sidecar('proxy').finished('a', 0).finished('b', 0), want: 'stop:S [proxy@0]' },
      { name: 'sidecars one at a time in reverse spec order', pod: pod().sidecar('log').container('app').sidecar('proxy').finished('app', 0), want: 'stop:S [proxy@0 log@1]' },
      { name: 'OnFailure, main exited 1 (will restart)', pod: pod().restartPolicy('OnFailure').container('app').sidecar('proxy').finished('app', 1), want: 'none:waiting' },
      { name: 'OnFailure, main exited 0', pod: pod().restartPolicy('OnFailure').container('app').sidecar('proxy').finished('app', 0), want: 'stop:S [proxy@0]' },
      { name: 'Always never finishes a main', pod: pod().restartPolicy('Always').container('app').sidecar('proxy').restarted('app', 0), want: 'none:restart-always' },
      { name: 'restartPolicy unset means Always', pod: pod().restartPolicy(undefined).container('app').sidecar('proxy').finished('app', 0), want: 'none:restart-always' },
      { name: 'main has no status yet', pod: pod().container('app').sidecar('proxy').waiting('app'), want: 'none:waiting' },
      { name: 'sidecar already exited on its own', pod: pod().container('app').sidecar('proxy').finished('app', 0).finished('proxy', 0), want: 'none:done' },
      { name: 'a stopped sidecar is skipped, the next one stopped', pod: pod().sidecar('log').container('app').sidecar('proxy').finished('app', 0).finished('proxy', 0, T0 + 500), want: 'stop:S [log@1]' },
      { name: 'only native sidecars: left to the kubelet', pod: pod().container('app').nativeSidecar('proxy').finished('app', 0), want: 'none:native-sidecars' },
      { name: 'annotations but no roles', pod: pod().container('app').annotate('podlife.dev/completion', 'phase').finished('app', 0), want: 'none:no-sidecars' },
      { name: 'completion: phase, mains succeeded', pod: pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0), want: 'phase:S:Succeeded' },
      { name: 'completion: phase, a main failed', pod: pod().container('a').container('b').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('a', 0).finished('b', 3), want: 'phase:S:Failed' },
    ]);
  });

  describe('rule K: a finished keystone stops every other container', () => {
    table([
      { name: 'keystone running', pod: pod().keystone('app').container('worker').sidecar('proxy'), want: 'none:waiting' },
      { name: 'Never: mains together, then sidecars', pod: pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0), want: 'stop:K [worker@0 proxy@1]' },
      { name: 'non-zero keystone exit still fires', pod: pod().keystone('app').container('worker').finished('app', 2), want: 'stop:K [worker@0]' },
      { name: 'order: mains in parallel, sidecars reversed', pod: pod().sidecar('s1').keystone('app').container('w1').sidecar('s2').container('w2').finished('app', 0), want: 'stop:K [w1@0 w2@0 s2@1 s1@2]' },
      { name: 'OnFailure, keystone exited 1 (will restart)', pod: pod().restartPolicy('OnFailure').keystone('app').container('worker').finished('app', 1), want: 'none:waiting' },
      { name: 'OnFailure, keystone exited 0', pod: pod().restartPolicy('OnFailure').keystone('app').container('worker').finished('app', 0), want: 'stop:K [worker@0]' },
      { name: 'TerminatePod deletes with the pod grace period', pod: pod().keystone('app').sidecar('proxy').annotate('podlife.dev/on-keystone-exit', 'TerminatePod').finished('app', 0), want: 'delete:TerminatePod grace=30' },
      { name: 'TerminatePod honours terminationGracePeriodSeconds', pod: pod().keystone('app').sidecar('proxy').grace(45).annotate('podlife.dev/on-keystone-exit', 'TerminatePod').finished('app', 0), want: 'delete:TerminatePod grace=45' },
      { name: 'Always: a keystone termination deletes the pod', pod: pod().restartPolicy('Always').keystone('app').sidecar('proxy').restarted('app', 1), want: 'delete:RestartPolicyAlways grace=30' },
      { name: 'Always: a keystone that never terminated', pod: pod().restartPolicy('Always').keystone('app').sidecar('proxy'), want: 'none:waiting' },
      { name: 'completion: phase from a keystone exit 0', pod: pod().keystone('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0), want: 'phase:K:Succeeded' },
      { name: 'completion: phase from a keystone exit 2', pod: pod().keystone('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 2), want: 'phase:K:Failed' },
      { name: 'others already stopped', pod: pod().keystone('app').sidecar('proxy').finished('app', 0).finished('proxy', 143), want: 'none:done' },
      { name: 'keystone with only native sidecars', pod: pod().keystone('app').nativeSidecar('proxy').finished('app', 0), want: 'none:done' },
      { name: 'the alias key marks roles too', pod: pod().container('app').container('proxy').annotate('sidecars.alpha.kubernetes.io/proxy', 'sidecar').finished('app', 0), want: 'stop:S [proxy@0]' },
    ]);
  });

  describe('a pod with many containers whose status list is changed in place', () => {
    // Past 8 statuses the lookup keeps an index per list; the list object is the same after an
    // in-place change, so the index must not answer from what the list held before.
    const many = (): V1Pod => {
      let b = pod().keystone('app');
      for (let i = 0; i < 9; i++) b = b.container(`w${i}`);
      return b.sidecar('proxy').build();
    };
    const statuses = (p: V1Pod): V1ContainerStatus[] => p.status?.containerStatuses as V1ContainerStatus[];
    const terminated = (name: string, exitCode: number): V1ContainerStatus =>
      ({ name, ready: false, restartCount: 0, image: `${name}:1`, imageID: '', state: { terminated: { exitCode, finishedAt: new Date(T0) } } }) as V1ContainerStatus;
    const now = { nowMs: T0 + 1000 };

    it('a status replaced in the list is read as it is now', () => {
      const p = many();
      assert.equal(summary(evaluatePod(p, now)), 'none:waiting');
      const list = statuses(p);
      list[list.findIndex((s) => s.name === 'app')] = terminated('app', 0);
      assert.equal(evaluatePod(p, now).action, 'stop');
    });

    it('statuses reordered in the list are still found by name', () => {
      const p = many();
      const list = statuses(p);
      list[list.findIndex((s) => s.name === 'app')] = terminated('app', 0);
      assert.equal(evaluatePod(p, now).action, 'stop');
      list.reverse();
      const d = evaluatePod(p, now) as StopDecision;
      assert.equal(d.action, 'stop');
      assert.equal(d.trigger, 'app');
      assert.equal(d.steps.length, 10);
    });

    it('a status added to the list after the first reading is found', () => {
      const p = many();
      const list = statuses(p);
      const at = list.findIndex((s) => s.name === 'app');
      list.splice(at, 1);
      assert.equal(summary(evaluatePod(p, now)), 'none:waiting');
      list.push(terminated('app', 0));
      assert.equal(evaluatePod(p, now).action, 'stop');
    });
  });

  describe('budget: terminationGracePeriodSeconds from when the rule fired, shared by stages', () => {
    const k = () => pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0, T0);
    const issued = (list: string) => `stopping worker, proxy; issued: ${list}`;
    const stopping = (b: PodBuilder, list: string) => b.condition('podlife.dev/SidecarsStopped', 'False', issued(list));
    table([
      { name: 'first stage within its share', pod: stopping(k(), `worker@${T0}`), now: T0 + 14_999, want: 'stop:K [worker@0* proxy@1]' },
      { name: 'first stage past its share escalates', pod: stopping(k(), `worker@${T0}`), now: T0 + 15_000, want: 'stop:K [worker@0!* proxy@1]' },
      { name: 'a late controller past the share still sends the stop spec first', pod: k(), now: T0 + 15_000, want: 'stop:K [worker@0 proxy@1]' },
      { name: 'an escalation that did not take is due again, not yet failed', pod: stopping(k(), `worker@${T0}, worker:KILL@${T0 + 15_000}`), now: T0 + 16_999, want: 'stop:K [worker@0!* proxy@1]' },
      { name: '... and reported failed once older than the minimum share', pod: stopping(k(), `worker@${T0}, worker:KILL@${T0 + 15_000}`), now: T0 + 17_000, want: 'stop:K [worker@0!* proxy@1] failed=worker' },
      { name: 'next stage gets what is left when the previous ended early', pod: stopping(k().finished('worker', 143, T0 + 4000), `worker@${T0}, proxy@${T0 + 4000}`), now: T0 + 29_999, want: 'stop:K [proxy@1*]' },
      { name: '... and escalates when that runs out', pod: stopping(k().finished('worker', 143, T0 + 4000), `worker@${T0}, proxy@${T0 + 4000}`), now: T0 + 30_000, want: 'stop:K [proxy@1!*]' },
      { name: 'a stage gets at least minStageMs', pod: stopping(k().grace(1), `worker@${T0 + 100}`), now: T0 + 2099, want: 'stop:K [worker@0* proxy@1]' },
      { name: '... then escalates', pod: stopping(k().grace(1), `worker@${T0 + 100}`), now: T0 + 2100, want: 'stop:K [worker@0!* proxy@1]' },
      { name: 'a late controller past the whole budget: the stop spec first, never a failure', pod: pod().container('app').sidecar('proxy').grace(10).finished('app', 0), now: T0 + 12_000, want: 'stop:S [proxy@0]' },
    ]);

    it('reports the budget and what is left of it', () => {
      const d = run({ pod: stopping(k(), `worker@${T0}`), now: T0 + 5000 }) as StopDecision;
      assert.equal(d.firedAtMs, T0);
      assert.equal(d.budgetMs, 30_000);
      assert.equal(d.remainingMs, 25_000);
      assert.equal(d.stageDeadlineMs, T0 + 15_000);
      assert.equal(d.nextEvaluationAtMs, T0 + 15_000);
      assert.equal(d.stagesLeft, 2);
      assert.deepEqual(d.targets, ['worker', 'proxy']);
      assert.equal(d.lateByMs, undefined);
    });

    it('a late controller shares what is left from now, and knows it is late', () => {
      const d = run({ pod: k(), now: T0 + 26_000 }) as StopDecision;
      assert.deepEqual(d.issue.map((s) => s.container), ['worker']);
      assert.equal(d.escalation, undefined);
      assert.equal(d.lateByMs, 26_000);
      // 4 s left for two stages: 2 s each (also the minimum).
      assert.equal(d.nextEvaluationAtMs, T0 + 28_000);
      assert.deepEqual(d.failed, []);
    });

    it('a late controller with nothing left gives each stage its minimum', () => {
      const d = run({ pod: k(), now: T0 + 40_000 }) as StopDecision;
      assert.equal(d.nextEvaluationAtMs, T0 + 42_000);
    });

    it('the stage after a late one is late only if it starts late itself', () => {
      const p = stopping(k().finished('worker', 143, T0 + 27_000), `worker@${T0 + 26_000}`);
      assert.equal((run({ pod: p, now: T0 + 27_100 }) as StopDecision).lateByMs, undefined);
    });

    it('escalation keeps the stop spec (no SIGKILL from inside) and carries the result to record first', () => {
      const d = run({ pod: stopping(k(), `worker@${T0}`), now: T0 + 15_000 }) as StopDecision;
      assert.deepEqual(d.escalation, { why: 'share', containers: ['worker'], gracePeriodSeconds: 15, thenDelete: true });
      assert.equal(d.steps[0]?.escalate, true);
      assert.deepEqual(d.steps[0]?.stop, { kind: 'signal', signal: 'TERM' });
      assert.deepEqual(d.steps[1]?.stop, { kind: 'signal', signal: 'TERM' });
      assert.equal(d.result, 'Succeeded');
    });

    it('the result to record is judged by the main containers only', () => {
      const failedKeystone = pod().keystone('app').container('worker').sidecar('proxy').finished('app', 2, T0);
      assert.equal((run({ pod: failedKeystone, now: T0 + 15_000 }) as StopDecision).result, 'Failed');
      const ruleS = pod().container('app').sidecar('proxy').finished('app', 0, T0);
      assert.equal((run({ pod: ruleS, now: T0 + 15_000 }) as StopDecision).result, 'Succeeded');
    });

    it('fires at the progress condition time when the keystone has no finishedAt', () => {
      const p = k().condition('podlife.dev/KeystoneFinished', 'True', '', T0 + 7000).build();
      const terminated = p.status?.containerStatuses?.[0]?.state?.terminated;
      if (terminated) delete (terminated as { finishedAt?: unknown }).finishedAt;
      const d = evaluatePod(p, { nowMs: T0 + 8000 }) as StopDecision;
      assert.equal(d.firedAtMs, T0 + 7000);
    });

    it('rule S fires at the last main container finishedAt', () => {
      const p = pod().container('a').container('b').sidecar('proxy').finished('a', 0, T0).finished('b', 0, T0 + 3000);
      const d = run({ pod: p, now: T0 + 4000 }) as StopDecision;
      assert.equal(d.trigger, 'b');
      assert.equal(d.firedAtMs, T0 + 3000);
    });
  });

  describe('resuming from the progress conditions', () => {
    const issued = (list: string) => `stopping worker, proxy; issued: ${list}`;
    const k = () => pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0, T0);
    table([
      { name: 'a recorded stop is not repeated', pod: k().condition('podlife.dev/SidecarsStopped', 'False', issued('worker')), want: 'stop:K [worker@0* proxy@1]' },
      { name: 'a recorded plain stop (no time: the record start) is due its escalation at its share', pod: k().condition('podlife.dev/SidecarsStopped', 'False', issued('worker')), now: T0 + 15_000, want: 'stop:K [worker@0!* proxy@1]' },
      { name: 'a recorded escalation is not announced as new', pod: k().condition('podlife.dev/SidecarsStopped', 'False', issued('worker, worker:KILL')), now: T0 + 1_000, want: 'stop:K [worker@0!* proxy@1]' },
      { name: 'an ephemeral stop container already in the pod counts as issued, with no record', pod: k().ephemeral('podlife-stop-worker', 'worker'), want: 'stop:K [worker@0* proxy@1]' },
      { name: 'so does one beside a record that lacks it', pod: k().condition('podlife.dev/SidecarsStopped', 'False', 'stopping worker, proxy; issued: ').ephemeral('podlife-stop-worker', 'worker'), want: 'stop:K [worker@0* proxy@1]' },
      { name: 'an ephemeral SIGKILL container (older releases) counts as the escalation', pod: k().ephemeral('podlife-stop-worker', 'worker').ephemeral('podlife-kill-worker', 'worker'), now: T0 + 15_000, want: 'stop:K [worker@0!* proxy@1]' },
      { name: 'an ephemeral container of another name or target does not count', pod: k().ephemeral('debugger', 'worker').ephemeral('podlife-stop-worker', 'proxy'), want: 'stop:K [worker@0 proxy@1]' },
      { name: 'SidecarsStopped=True: done', pod: k().finished('worker', 0).finished('proxy', 0).condition('podlife.dev/SidecarsStopped', 'True', 'stopped'), want: 'none:done' },
    ]);

    it('a first firing records KeystoneFinished and SidecarsStopped=False', () => {
      const d = run({ pod: k() });
      assert.deepEqual(
        d.updates.map((u) => `${u.condition.type}=${u.condition.status}/${u.condition.reason}`),
        ['podlife.dev/KeystoneFinished=True/KeystoneTerminated', 'podlife.dev/SidecarsStopped=False/Stopping'],
      );
      assert.deepEqual(d.updates[0]?.events.map((e) => e.reason), ['KeystoneFinished']);
    });

    it('a resumed run writes nothing it already wrote', () => {
      const d = run({ pod: k().condition('podlife.dev/KeystoneFinished', 'True').condition('podlife.dev/SidecarsStopped', 'False', issued('worker')) });
      assert.deepEqual(d.updates, []);
    });

    it('the end records each stopped container exit code', () => {
      const d = run({ pod: k().finished('worker', 0).finished('proxy', 0) });
      const last = d.updates.at(-1);
      assert.equal(last?.condition.status, 'True');
      assert.equal(last?.condition.message, 'stopped: worker=0, proxy=0');
      assert.deepEqual(last?.events, []);
    });
  });

  describe('a pod that turned terminal while its stop was recorded in progress', () => {
    // The kubelet's write that shows the last container stopped may already carry the phase.
    const stopping = 'stopping worker, proxy; issued: worker, proxy';
    const k = () =>
      pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0)
        .condition('podlife.dev/KeystoneFinished', 'True').condition('podlife.dev/SidecarsStopped', 'False', stopping);

    it('closes the record with each stopped container exit code', () => {
      const d = run({ pod: k().finished('worker', 143).finished('proxy', 143).phase('Failed') });
      assert.equal(summary(d), 'none:terminal');
      const update = d.updates.find((u) => u.condition.type === 'podlife.dev/SidecarsStopped');
      assert.equal(update?.condition.status, 'True');
      assert.equal(update?.condition.message, 'stopped: worker=143, proxy=143');
      assert.deepEqual(update?.events.map((e) => e.reason), ['ContainerStopped', 'ContainerStopped', 'SidecarExitedNonZero', 'SidecarExitedNonZero']);
    });

    it('closes it under rule S too', () => {
      const s = pod().container('app').sidecar('proxy').finished('app', 0).finished('proxy', 0)
        .condition('podlife.dev/SidecarsStopped', 'False', 'stopping proxy; issued: proxy').phase('Succeeded');
      assert.deepEqual(run({ pod: s }).updates.map((u) => `${u.condition.type}=${u.condition.status}`), ['podlife.dev/SidecarsStopped=True']);
    });

    it('writes nothing while a target is still running', () => {
      assert.deepEqual(run({ pod: k().finished('worker', 143).phase('Failed') }).updates, []);
    });

    it('writes nothing when the record is already closed or was never opened', () => {
      const done = pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0).finished('worker', 143).finished('proxy', 143)
        .condition('podlife.dev/SidecarsStopped', 'True', 'stopped: worker=143, proxy=143').phase('Failed');
      const never = pod().container('app').sidecar('proxy').finished('app', 0).finished('proxy', 0).phase('Succeeded');
      assert.deepEqual(run({ pod: done }).updates, []);
      assert.deepEqual(run({ pod: never }).updates, []);
    });
  });

  describe('a pod whose phase podlife recorded while containers still run (the kubelet leaves them running)', () => {
    const byPhase = () => pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).grace(20);
    table([
      { name: 'completion: phase, sidecar still running', pod: byPhase().phase('Succeeded'), want: 'delete:PhaseRecorded grace=20' },
      { name: 'completion: phase, everything stopped', pod: byPhase().finished('proxy', 143).phase('Succeeded'), want: 'none:terminal' },
      { name: 'completion: phase, already being deleted', pod: byPhase().phase('Succeeded').deleting(), want: 'none:terminating' },
      {
        name: 'an escalation recorded the result (stop in progress), a sidecar still running',
        pod: pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0).finished('worker', 143)
          .condition('podlife.dev/SidecarsStopped', 'False', 'stopping worker, proxy; issued: worker, proxy, proxy:KILL').phase('Succeeded'),
        want: 'delete:PhaseRecorded grace=30',
      },
      {
        name: 'a terminal pod podlife never recorded a phase for is left alone',
        pod: pod().container('app').sidecar('proxy').finished('app', 0).phase('Failed'),
        want: 'none:terminal',
      },
    ]);

    it('waits while a Job has yet to count the recorded result (its tracking finalizer), then deletes', () => {
      const p = byPhase().phase('Succeeded').build();
      p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
      assert.equal(summary(evaluatePod(p, { nowMs: T0 })), 'none:terminal');
      p.metadata!.finalizers = [];
      assert.equal(summary(evaluatePod(p, { nowMs: T0 })), 'delete:PhaseRecorded grace=20');
    });

    it('names the container still running and the rule', () => {
      const d = run({ pod: byPhase().phase('Succeeded') });
      assert.equal(d.action === 'delete' && `${d.rule}:${d.trigger}`, 'S:proxy');
    });
  });

  describe('completion: phase ends the rest through the kubelet within what is left of the budget', () => {
    const byPhase = () => pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0, T0).grace(20);
    const grace = (d: Decision) => (d.action === 'phase' ? d.gracePeriodSeconds : undefined);
    it('the budget counts from the triggering exit', () => assert.equal(grace(run({ pod: byPhase(), now: T0 + 5_500 })), 15));
    it('at least one second, never 0 (which would force-delete without the kubelet)', () => assert.equal(grace(run({ pod: byPhase(), now: T0 + 60_000 })), 1));
    it('rule K the same', () => {
      const k = pod().keystone('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0, T0).grace(10);
      assert.equal(grace(run({ pod: k, now: T0 + 2_000 })), 8);
    });
  });

  describe('SidecarExitedNonZero', () => {
    it('warns, naming the remedies, when a sidecar exit code fails the pod under Never', () => {
      const d = run({ pod: pod().container('app').sidecar('proxy').finished('app', 0).finished('proxy', 143) });
      const update = d.updates.find((u) => u.condition.type === 'podlife.dev/SidecarsStopped');
      assert.equal(update?.condition.reason, 'StoppedWithNonZeroExit');
      const event = update?.events.find((e) => e.reason === 'SidecarExitedNonZero');
      assert.equal(event?.type, 'Warning');
      assert.match(event?.note ?? '', /proxy exited with code 143/);
      assert.match(event?.note ?? '', /native-sidecars/);
      assert.match(event?.note ?? '', /preset/);
      assert.match(event?.note ?? '', /completion: phase/);
    });

    it('does not warn under OnFailure', () => {
      const d = run({ pod: pod().restartPolicy('OnFailure').container('app').sidecar('proxy').finished('app', 0).finished('proxy', 143) });
      assert.deepEqual(d.updates.flatMap((u) => u.events), []);
    });
  });

  describe('invalid annotations: no action, LifecycleValid=False naming the key', () => {
    table([
      { name: 'unknown container', pod: pod().container('app').annotate('role.podlife.dev/proxy', 'sidecar'), want: 'invalid:role.podlife.dev/proxy' },
      { name: 'stop spec for an unknown container', pod: pod().container('app').sidecar('proxy').annotate('stop.podlife.dev/nope', 'signal:TERM'), want: 'invalid:stop.podlife.dev/nope' },
      { name: 'unknown role value', pod: pod().container('app').annotate('role.podlife.dev/app', 'main'), want: 'invalid:role.podlife.dev/app' },
      { name: 'two roles: primary and alias disagree', pod: pod().keystone('app').container('proxy').annotate('role.podlife.dev/proxy', 'keystone').annotate('sidecars.alpha.kubernetes.io/proxy', 'sidecar').finished('app', 0), want: 'invalid:role.podlife.dev/proxy,sidecars.alpha.kubernetes.io/proxy' },
      { name: 'two keystones over the default limit', pod: pod().keystone('a').keystone('b').finished('a', 0), want: 'invalid:role.podlife.dev/b' },
      { name: 'two keystones within a configured limit of 2', pod: pod().keystone('a').keystone('b').container('c').finished('a', 0), options: { keystoneLimit: 2 }, want: 'stop:K [b@0 c@0]' },
      { name: 'sidecars with no main container', pod: pod().sidecar('a').sidecar('b'), want: 'invalid:role.podlife.dev/a' },
      { name: 'malformed stop spec', pod: pod().container('app').sidecar('proxy', 'signal:FOO').finished('app', 0), want: 'invalid:stop.podlife.dev/proxy' },
      { name: 'stop spec port out of range', pod: pod().container('app').sidecar('proxy', 'http:70000/quit').finished('app', 0), want: 'invalid:stop.podlife.dev/proxy' },
      { name: 'unknown preset', pod: pod().container('app').sidecar('proxy', 'preset:consul').finished('app', 0), want: 'invalid:stop.podlife.dev/proxy' },
      { name: 'exec name not in the configured commands', pod: pod().container('app').sidecar('proxy', 'exec:drain').finished('app', 0), options: { execCommands: { flush: ['flush'] } }, want: 'invalid:stop.podlife.dev/proxy' },
      { name: 'exec name in the configured commands', pod: pod().container('app').sidecar('proxy', 'exec:drain').finished('app', 0), options: { execCommands: { drain: ['drain'] } }, want: 'stop:S [proxy@0]' },
      { name: 'bad on-keystone-exit', pod: pod().keystone('app').annotate('podlife.dev/on-keystone-exit', 'Explode'), want: 'invalid:podlife.dev/on-keystone-exit' },
      { name: 'bad completion', pod: pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'sometimes'), want: 'invalid:podlife.dev/completion' },
      { name: 'a plain init container', pod: pod().init('setup').container('app').annotate('role.podlife.dev/setup', 'sidecar'), want: 'invalid:role.podlife.dev/setup' },
      { name: 'a native sidecar as keystone', pod: pod().container('app').nativeSidecar('proxy', false).annotate('role.podlife.dev/proxy', 'keystone'), want: 'invalid:role.podlife.dev/proxy' },
      { name: 'key without a container name', pod: pod().container('app').annotate('role.podlife.dev/', 'sidecar'), want: 'invalid:role.podlife.dev/' },
      { name: 'signal stops with shareProcessNamespace', pod: pod().shareProcessNamespace().container('app').sidecar('proxy'), want: 'invalid:stop.podlife.dev/proxy' },
      { name: 'preset stops with shareProcessNamespace', pod: pod().shareProcessNamespace().container('app').sidecar('proxy', 'preset:istio').finished('app', 0), want: 'stop:S [proxy@0]' },
    ]);

    it('writes LifecycleValid=False with a message naming the key, and a Warning Event', () => {
      const d = run({ pod: pod().container('app').annotate('role.podlife.dev/proxy', 'sidecar') });
      assert.equal(d.updates.length, 1);
      const u = d.updates[0];
      assert.equal(u?.condition.type, 'podlife.dev/LifecycleValid');
      assert.equal(u?.condition.status, 'False');
      assert.match(u?.condition.message ?? '', /role\.podlife\.dev\/proxy/);
      assert.deepEqual(u?.events.map((e) => `${e.type}/${e.reason}`), ['Warning/InvalidLifecycleAnnotations']);
    });

    it('writes LifecycleValid=True once the annotations are fixed', () => {
      const d = run({ pod: pod().container('app').sidecar('proxy').condition('podlife.dev/LifecycleValid', 'False') });
      assert.equal(d.action, 'none');
      assert.deepEqual(d.updates.map((u) => `${u.condition.type}=${u.condition.status}`), ['podlife.dev/LifecycleValid=True']);
    });

    it('a conflict names the key that set the role first, primary or alias', () => {
      const messages = (p: PodBuilder): string[] => {
        const d = run({ pod: p });
        return d.action === 'invalid' ? d.errors.map((e) => e.message) : [];
      };
      const aliasFirst = pod().keystone('app').container('proxy').annotate('sidecars.alpha.kubernetes.io/proxy', 'sidecar').annotate('role.podlife.dev/proxy', 'keystone');
      assert.deepEqual(messages(aliasFirst), [
        'annotation "role.podlife.dev/proxy" = "keystone": conflicts with "sidecars.alpha.kubernetes.io/proxy" = "sidecar": a container has one role',
      ]);
      const primaryFirst = pod().keystone('app').container('proxy').annotate('role.podlife.dev/proxy', 'sidecar').annotate('sidecars.alpha.kubernetes.io/proxy', 'keystone');
      assert.deepEqual(messages(primaryFirst), [
        'annotation "sidecars.alpha.kubernetes.io/proxy" = "keystone": conflicts with "role.podlife.dev/proxy" = "sidecar": a container has one role',
      ]);
      const overLimit = pod().container('app').annotate('sidecars.alpha.kubernetes.io/b', 'keystone').keystone('a').container('b');
      assert.match(messages(overLimit).join('\n'), /^annotation "sidecars\.alpha\.kubernetes\.io\/b" = "keystone": more keystones/);
    });

    it('with shareProcessNamespace, a signal stop is quoted when a key set it, and not when it is the default', () => {
      const d = run({ pod: pod().shareProcessNamespace().container('app').sidecar('proxy', 'signal:TERM').sidecar('log') });
      assert.equal(d.action, 'invalid');
      const values = d.action === 'invalid' ? d.errors.map((e) => `${e.key}=${e.value ?? '(default)'}`) : [];
      assert.deepEqual(values, ['stop.podlife.dev/proxy=signal:TERM', 'stop.podlife.dev/log=(default)']);
    });

    it('agreeing primary and alias keys are one role', () => {
      const p = pod().container('app').sidecar('proxy').annotate('sidecars.alpha.kubernetes.io/proxy', 'sidecar').finished('app', 0);
      assert.equal(summary(run({ pod: p })), 'stop:S [proxy@0]');
    });
  });

  describe('strategy', () => {
    it('uses the configured delivery method for every step', () => {
      const d = run({ pod: pod().container('app').sidecar('proxy', 'preset:istio').finished('app', 0), options: { strategy: 'ephemeral' } }) as StopDecision;
      assert.equal(d.steps[0]?.method, 'ephemeral');
      assert.deepEqual(d.steps[0]?.stop, { kind: 'http', port: 15020, path: '/quitquitquit', preset: 'istio' });
    });
  });

  it('the nothing-to-do answers are shared constants (no allocation)', () => {
    const p = pod().container('app').sidecar('proxy').build();
    assert.equal(evaluatePod(p, { nowMs: T0 }), evaluatePod(p, { nowMs: T0 + 1 }));
  });
});
