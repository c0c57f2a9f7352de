import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import sinon from 'sinon';
import {
  KILLED_WITH_NAMESPACE_EXIT,
  LINGERING_SIGNAL_SCRIPT,
  NO_HANDLER_EXIT,
  POST_SCRIPT,
  SIGNAL_SCRIPT,
  deletePod,
  ephemeralName,
  evaluatePod,
  execCommands,
  markPhase,
  reportEvent,
  runDecision,
  runStop,
  stopByEphemeral,
  stopByExec,
  type ActionReport,
  type DispatchContext,
  type ExecResult,
  type PodApi,
  type PodExecApi,
  type StatusUpdate,
  type StopDecision,
} from '../src/index.js';
import { pod, T0 } from './fixtures.js';

const ok: ExecResult = { exitCode: 0, stdout: '', stderr: '' };
const notFound: ExecResult = { exitCode: undefined, stdout: '', stderr: '', error: 'executable file not found in $PATH' };

function podApi(): PodApi & { [K in keyof PodApi]: sinon.SinonStub } {
  return {
    addEphemeralContainer: sinon.stub().resolves(),
    deletePod: sinon.stub().resolves('deleted'),
    patchStatus: sinon.stub().resolves(),
  };
}
function execApi(...results: ExecResult[]): PodExecApi & { exec: sinon.SinonStub } {
  const exec = sinon.stub();
  results.forEach((r, i) => exec.onCall(i).resolves(r));
  exec.resolves(ok);
  return { exec };
}
const ref = { namespace: 'default', name: 'job-abc' };

describe('exec strategy', () => {
  it('signals PID 1 through the constant signal script, name and number as arguments', async () => {
    const api = execApi(ok);
    const r = await stopByExec(api, ref, 'proxy', { kind: 'signal', signal: 'TERM' });
    assert.equal(r.ok, true);
    assert.equal(r.noHandler, undefined);
    assert.deepEqual(api.exec.firstCall.args.slice(1, 3), ['proxy', ['/bin/sh', '-c', SIGNAL_SCRIPT, 'podlife-stop', 'TERM', '15']]);
  });

  it('falls back to kill -s in images without a shell', async () => {
    const api = execApi(notFound, ok);
    const r = await stopByExec(api, ref, 'proxy', { kind: 'signal', signal: 'INT' });
    assert.equal(r.ok, true);
    assert.deepEqual(api.exec.secondCall.args[2], ['kill', '-s', 'INT', '1']);
  });

  it('reports a PID 1 without a handler for the signal (the script sent it, the kernel dropped it)', async () => {
    const api = execApi({ exitCode: NO_HANDLER_EXIT, stdout: 'PID 1 has no handler for SIGTERM', stderr: '' });
    const r = await stopByExec(api, ref, 'proxy', { kind: 'signal', signal: 'TERM' });
    assert.equal(r.ok, true);
    assert.equal(r.noHandler, true);
    assert.equal(api.exec.callCount, 1);
  });

  it('counts a signal script killed with the PID namespace (PID 1 exited first) as delivered, without a second try', async () => {
    // What the API server answers when the sidecar's PID 1 exits on the signal before `kill` does.
    const api = execApi({ exitCode: KILLED_WITH_NAMESPACE_EXIT, stdout: '', stderr: '', error: 'command terminated with exit code 137' });
    const r = await stopByExec(api, ref, 'proxy', { kind: 'signal', signal: 'TERM' });
    assert.deepEqual([r.ok, r.noHandler, r.error], [true, undefined, undefined]);
    assert.equal(api.exec.callCount, 1);
  });

  it('counts the plain kill killed with the PID namespace as delivered too', async () => {
    const api = execApi(notFound, { exitCode: KILLED_WITH_NAMESPACE_EXIT, stdout: '', stderr: '' });
    const r = await stopByExec(api, ref, 'proxy', { kind: 'signal', signal: 'TERM' });
    assert.equal(r.ok, true);
    assert.equal(api.exec.callCount, 2);
  });

  it('does not read exit code 137 of an http or named stop as a delivered signal', async () => {
    const killed: ExecResult = { exitCode: KILLED_WITH_NAMESPACE_EXIT, stdout: '', stderr: '' };
    const r = await stopByExec(execApi(killed, killed, killed), ref, 'proxy', { kind: 'http', port: 15020, path: '/quitquitquit' });
    assert.equal(r.ok, false);
    const named = await stopByExec(execApi(killed), ref, 'proxy', { kind: 'exec', name: 'drain' }, { drain: ['/bin/drain'] });
    assert.equal(named.ok, false);
  });

  it('never sends a signal from a shell line built from the spec', () => {
    for (const signal of ['TERM', 'INT', 'QUIT', 'HUP', 'USR1', 'USR2', 'KILL'] as const) {
      const [script] = execCommands({ kind: 'signal', signal });
      assert.equal(script?.[2], SIGNAL_SCRIPT);
      assert.match(script?.[5] ?? '', /^(1|2|3|9|10|12|15)$/);
    }
  });

  it('posts to the preset endpoint with curl, then wget told not to follow redirects, then the sh+nc script', async () => {
    const api = execApi(notFound, notFound, ok);
    await stopByExec(api, ref, 'istio-proxy', { kind: 'http', port: 15020, path: '/quitquitquit', preset: 'istio' });
    assert.deepEqual(api.exec.firstCall.args[2], ['curl', '-fsS', '-X', 'POST', '--max-time', '5', 'http://127.0.0.1:15020/quitquitquit']);
    assert.deepEqual(api.exec.secondCall.args[2], ['wget', '-q', '-O-', '--post-data=', '--max-redirect=0', '-T', '5', 'http://127.0.0.1:15020/quitquitquit']);
    assert.deepEqual(api.exec.thirdCall.args[2], ['/bin/sh', '-c', POST_SCRIPT, 'podlife-stop', '15020', '/quitquitquit']);
  });

  it('runs a named command exactly as configured', () => {
    assert.deepEqual(execCommands({ kind: 'exec', name: 'drain' }, { drain: ['/bin/drain', '--now'] }), [['/bin/drain', '--now']]);
  });

  it('refuses an exec name the configuration does not have', async () => {
    const api = execApi();
    const r = await stopByExec(api, ref, 'proxy', { kind: 'exec', name: 'drain' }, {});
    assert.equal(r.ok, false);
    assert.equal(api.exec.callCount, 0);
  });

  it('reports every failed attempt', async () => {
    const api = execApi(notFound, { exitCode: 1, stdout: '', stderr: 'no such process' });
    const r = await stopByExec(api, ref, 'proxy', { kind: 'signal', signal: 'TERM' });
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /not found.*no such process/);
  });
});

describe('ephemeral strategy', () => {
  const p = () => pod().container('app').sidecar('proxy').finished('app', 0).build();

  it('adds a container targeting the sidecar with the configured image', async () => {
    const api = podApi();
    const r = await stopByEphemeral(api, p(), 'proxy', { kind: 'signal', signal: 'TERM' }, false, 'busybox:1.36');
    assert.equal(r.ok, true);
    const [, container] = api.addEphemeralContainer.firstCall.args;
    assert.equal(container.name, 'podlife-stop-proxy');
    assert.equal(container.image, 'busybox:1.36');
    assert.equal(container.targetContainerName, 'proxy');
    assert.deepEqual(container.command, ['/bin/sh', '-c', LINGERING_SIGNAL_SCRIPT, 'podlife-stop', 'TERM', '15']);
    assert.match(LINGERING_SIGNAL_SCRIPT, /kill -s "\$1" 1 \|\| exit \$\?; exec sleep 2147483647$/, 'stays until the target ends it');
    assert.ok(LINGERING_SIGNAL_SCRIPT.startsWith(SIGNAL_SCRIPT.slice(0, SIGNAL_SCRIPT.lastIndexOf('exec kill'))));
  });

  it('POSTs to 127.0.0.1 with the sh+nc script (never following a redirect) for http stops', async () => {
    const api = podApi();
    await stopByEphemeral(api, p(), 'proxy', { kind: 'http', port: 4191, path: '/shutdown' }, false, 'busybox:1.36');
    assert.deepEqual(api.addEphemeralContainer.firstCall.args[1].command, ['/bin/sh', '-c', POST_SCRIPT, 'podlife-stop', '4191', '/shutdown']);
  });

  it('is not added twice', async () => {
    const api = podApi();
    const withIt = p();
    withIt.spec!.ephemeralContainers = [{ name: 'podlife-stop-proxy', image: 'busybox:1.36' }];
    const r = await stopByEphemeral(api, withIt, 'proxy', { kind: 'signal', signal: 'TERM' }, false, 'busybox:1.36');
    assert.equal(r.already, true);
    assert.equal(api.addEphemeralContainer.callCount, 0);
  });

  it('needs an image from the controller configuration', async () => {
    const r = await stopByEphemeral(podApi(), p(), 'proxy', { kind: 'signal', signal: 'TERM' }, false, undefined);
    assert.equal(r.ok, false);
  });

  it('keeps names within 63 characters, deterministically', () => {
    const long = 'x'.repeat(63);
    assert.ok(ephemeralName(long, false).length <= 63);
    assert.equal(ephemeralName(long, false), ephemeralName(long, false));
    assert.notEqual(ephemeralName(long, false), ephemeralName(long, true));
  });
});

describe('delete and phase strategies', () => {
  it('deletes with the grace period', async () => {
    const api = podApi();
    const r = await deletePod(api, pod().container('a').build(), 45);
    assert.equal(r.outcome, 'done');
    assert.deepEqual(api.deletePod.firstCall.args, [{ namespace: 'default', name: 'job-abc', uid: 'uid-1' }, 45]);
  });

  it('does not delete a terminating pod again', async () => {
    const api = podApi();
    assert.equal((await deletePod(api, pod().container('a').deleting().build(), 30)).outcome, 'already');
    assert.equal(api.deletePod.callCount, 0);
  });

  it('reports an API failure instead of throwing', async () => {
    const api = podApi();
    api.deletePod.rejects(new Error('forbidden'));
    const r = await deletePod(api, pod().container('a').build(), 30);
    assert.equal(r.outcome, 'failed');
    assert.equal(r.error, 'forbidden');
  });

  it('patches status.phase guarded by a test of the phase it read', async () => {
    const api = podApi();
    await markPhase(api, pod().container('a').build(), 'Succeeded');
    assert.deepEqual(api.patchStatus.firstCall.args[1], [
      { op: 'test', path: '/status/phase', value: 'Running' },
      { op: 'replace', path: '/status/phase', value: 'Succeeded' },
    ]);
  });

  it('leaves a terminal phase alone', async () => {
    const api = podApi();
    assert.equal((await markPhase(api, pod().container('a').phase('Failed').build(), 'Succeeded')).outcome, 'already');
    assert.equal(api.patchStatus.callCount, 0);
  });
});

describe('runStop: the stop sequence with budget and escalation', () => {
  /** A context whose containers stop after the given signals; time advances to each deadline. */
  function context(stopsOn: Record<string, 'TERM' | 'never'>, extra: Partial<DispatchContext> = {}) {
    let now = T0 + 1000;
    const exec = sinon.stub<Parameters<PodExecApi['exec']>, Promise<ExecResult>>().resolves(ok);
    const received = new Map<string, string[]>();
    exec.callsFake(async (_pod, container, command) => {
      const sig = (command[0] === '/bin/sh' ? command[4] : command[2]) ?? '';
      received.set(container, [...(received.get(container) ?? []), sig]);
      return ok;
    });
    const reports: ActionReport[] = [];
    const progress: StatusUpdate[] = [];
    const ctx: DispatchContext = {
      pods: podApi(),
      exec: { exec },
      now: () => now,
      waitForStopped: async (container, untilMs) => {
        const want = stopsOn[container];
        const got = received.get(container) ?? [];
        if (want !== 'never' && want !== undefined && got.includes(want)) return true;
        now = Math.max(now, untilMs);
        return false;
      },
      report: (r) => reports.push(r),
      progress: (u) => void progress.push(u),
      ...extra,
    };
    const pods = ctx.pods as ReturnType<typeof podApi>;
    return { ctx, exec, pods, received, reports, progress, order: () => exec.getCalls().map((c) => `${c.args[1]}:${c.args[2][4]}`) };
  }
  const decide = (b = pod().keystone('app').container('worker').sidecar('log').sidecar('proxy').finished('app', 0, T0)) => {
    const p = b.build();
    return { p, d: evaluatePod(p, { nowMs: T0 + 1000 }) as StopDecision };
  };

  it('stops mains first, then sidecars one at a time in reverse spec order', async () => {
    const { p, d } = decide();
    const t = context({ worker: 'TERM', log: 'TERM', proxy: 'TERM' });
    const result = await runStop(p, d, t.ctx);
    assert.deepEqual(t.order(), ['worker:TERM', 'proxy:TERM', 'log:TERM']);
    assert.deepEqual(result, { stopped: ['worker', 'proxy', 'log'], failed: [], ok: true });
  });

  it('escalates from outside when a stop outlives its share: the result recorded first, then the kubelet ends the pod', async () => {
    const { p, d } = decide();
    const t = context({ worker: 'never', log: 'TERM', proxy: 'TERM' });
    // The pod's deletion is what ends the worker.
    t.pods.deletePod.callsFake(async () => {
      t.received.set('worker', ['TERM', 'deleted']);
      return 'deleted';
    });
    const waitForStopped = t.ctx.waitForStopped;
    const result = await runStop(p, d, { ...t.ctx, waitForStopped: async (c, until) => (t.received.get(c)?.includes('deleted') ? true : waitForStopped(c, until)) });
    assert.deepEqual(t.received.get('worker'), ['TERM', 'deleted'], 'never a SIGKILL from inside');
    assert.ok(t.pods.patchStatus.calledBefore(t.pods.deletePod));
    assert.deepEqual(t.pods.patchStatus.firstCall.args[1].at(-1), { op: 'replace', path: '/status/phase', value: 'Succeeded' });
    // The budget: 30 s from T0 for three stages; the worker's share (10 s) is spent.
    assert.equal(t.pods.deletePod.firstCall.args[1], 20);
    assert.deepEqual(t.order(), ['worker:TERM'], 'later stages are left to the kubelet');
    assert.deepEqual(result, { stopped: ['worker'], failed: [], ok: true });
    const escalated = t.reports.find((r) => r.kind === 'escalated');
    assert.equal(escalated?.kind === 'escalated' && escalated.why, 'share');
    assert.equal(reportEvent(escalated!)?.reason, 'StoppingContainer');
    assert.match(t.progress.at(-1)?.condition.message ?? '', /issued: worker, worker:KILL$/);
  });

  it('an escalated Job pod gets its result recorded; the deletion waits for the Job to count it', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
    const t = context({ proxy: 'never' });
    let waits = 0;
    await runStop(p, d, { ...t.ctx, waitForStopped: async () => waits++ > 0 });
    assert.equal(t.pods.patchStatus.callCount, 1);
    assert.equal(t.pods.deletePod.callCount, 0);
    const escalated = t.reports.find((r) => r.kind === 'escalated');
    assert.match(escalated?.kind === 'escalated' ? escalated.detail : '', /once its Job has counted it/);
  });

  it('escalates at once when PID 1 has no handler for the signal, and says why', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    const t = context({ proxy: 'never' });
    t.exec.callsFake(async () => ({ exitCode: NO_HANDLER_EXIT, stdout: '', stderr: '' }));
    const began = t.ctx.now();
    await runStop(p, d, { ...t.ctx, waitForStopped: async (_c, until) => (t.pods.deletePod.called ? true : Promise.reject(new Error(`waited until ${until}`))) });
    assert.equal(t.ctx.now(), began, 'no share spent waiting for a signal that cannot arrive');
    assert.equal(t.pods.deletePod.callCount, 1);
    const event = reportEvent(t.reports.find((r) => r.kind === 'escalated')!);
    assert.equal(event?.type, 'Warning');
    assert.match(event?.note ?? '', /PID 1 has no handler.*ending it through the kubelet/);
  });

  it('escalates at once when the ephemeral stop container reports no handler', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    const t = context({ proxy: 'never' });
    let waits = 0;
    await runStop(p, d, { ...t.ctx, waitForStopped: async () => (waits++ === 0 ? 'no-handler' : true) });
    const escalated = t.reports.find((r) => r.kind === 'escalated');
    assert.equal(escalated?.kind === 'escalated' && escalated.why, 'no-handler');
    assert.equal(t.pods.deletePod.callCount, 1);
  });

  it('does not delete the pod when its result cannot be recorded, and reports the container failed', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    const t = context({ proxy: 'never' });
    t.pods.patchStatus.rejects(new Error('the server rejected our request (422)'));
    const result = await runStop(p, d, t.ctx);
    assert.equal(t.pods.deletePod.callCount, 0, 'a Job would count the kubelet\'s view of a killed sidecar');
    assert.deepEqual(result.failed, ['proxy']);
    const escalated = t.reports.find((r) => r.kind === 'escalated');
    assert.equal(reportEvent(escalated!)?.reason, 'StopFailed');
    const failure = t.progress.find((u) => u.condition.reason === 'StopFailed');
    assert.deepEqual(failure?.events.map((e) => `${e.type}/${e.reason}`), ['Warning/StopFailed']);
  });

  it('a resumed controller past the deadline escalates without sending the stop again', async () => {
    const p = pod().container('app').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', 'stopping proxy; issued: proxy').build();
    const d = evaluatePod(p, { nowMs: T0 + 31_000 }) as StopDecision;
    const t = context({ proxy: 'never' });
    await runStop(p, d, { ...t.ctx, now: () => T0 + 31_000, waitForStopped: async () => t.pods.deletePod.called });
    assert.equal(t.exec.callCount, 0);
    assert.equal(t.pods.deletePod.firstCall.args[1], 1, 'nothing left of the budget: the least grace, never 0');
  });

  it('records each issued stop before waiting, in the progress condition', async () => {
    const { p, d } = decide();
    const t = context({ worker: 'TERM', log: 'TERM', proxy: 'TERM' });
    await runStop(p, d, t.ctx);
    assert.deepEqual(
      t.progress.map((u) => u.condition.message),
      [
        'stopping worker, proxy, log; issued: worker',
        'stopping worker, proxy, log; issued: worker, proxy',
        'stopping worker, proxy, log; issued: worker, proxy, log',
      ],
    );
  });

  it('does not repeat a stop the progress record already holds', async () => {
    const { p, d } = decide(
      pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', 'stopping worker, proxy; issued: worker'),
    );
    const t = context({ worker: 'TERM', proxy: 'TERM' });
    t.received.set('worker', ['TERM']);
    await runStop(p, d, t.ctx);
    assert.deepEqual(t.order(), ['proxy:TERM']);
  });

  it('falls back to an ephemeral container when exec cannot run', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    const pods = podApi();
    const t = context({ proxy: 'TERM' }, { pods, exec: { exec: sinon.stub().resolves(notFound) }, config: { ephemeralImage: 'busybox:1.36' } });
    await runStop(p, d, { ...t.ctx, waitForStopped: async () => true });
    assert.equal(pods.addEphemeralContainer.callCount, 1);
    const issued = t.reports.find((r) => r.kind === 'stop-issued');
    assert.equal(issued?.kind === 'stop-issued' && issued.method, 'ephemeral');
  });
});

describe('runDecision', () => {
  it('deletes for TerminatePod', async () => {
    const p = pod().keystone('app').sidecar('proxy').annotate('podlife.dev/on-keystone-exit', 'TerminatePod').finished('app', 0).build();
    const pods = podApi();
    const r = await runDecision(p, evaluatePod(p, { nowMs: T0 }), { pods, now: () => T0, waitForStopped: async () => true });
    assert.equal(r.ok, true);
    assert.equal(pods.deletePod.firstCall.args[1], 30);
  });

  it('marks the phase for completion: phase, then deletes the pod so that the kubelet ends the rest', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    const pods = podApi();
    const r = await runDecision(p, evaluatePod(p, { nowMs: T0 + 4_000 }), { pods, now: () => T0, waitForStopped: async () => true });
    assert.equal(r.ok, true);
    assert.equal(pods.patchStatus.firstCall.args[1].at(-1).value, 'Succeeded');
    assert.ok(pods.patchStatus.calledBefore(pods.deletePod));
    assert.equal(pods.deletePod.firstCall.args[1], 26);
  });

  it('leaves the deletion of a Job pod until the Job has counted the result', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
    const pods = podApi();
    const r = await runDecision(p, evaluatePod(p, { nowMs: T0 }), { pods, now: () => T0, waitForStopped: async () => true });
    assert.equal(r.ok, true);
    assert.equal(pods.patchStatus.callCount, 1);
    assert.equal(pods.deletePod.callCount, 0);
  });

  it('does not delete when the phase could not be recorded (retried on a fresh pod)', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    const pods = podApi();
    pods.patchStatus.rejects(new Error('422'));
    const r = await runDecision(p, evaluatePod(p, { nowMs: T0 }), { pods, now: () => T0, waitForStopped: async () => true });
    assert.equal(r.ok, false);
    assert.equal(pods.deletePod.callCount, 0);
  });

  it('deletes a pod whose recorded phase left containers running (resumed after a crash)', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).phase('Succeeded').build();
    const pods = podApi();
    await runDecision(p, evaluatePod(p, { nowMs: T0 }), { pods, now: () => T0, waitForStopped: async () => true });
    assert.equal(pods.patchStatus.callCount, 0);
    assert.equal(pods.deletePod.callCount, 1);
  });

  it('does nothing for none and invalid', async () => {
    const p = pod().container('app').annotate('role.podlife.dev/x', 'sidecar').build();
    const pods = podApi();
    await runDecision(p, evaluatePod(p, { nowMs: T0 }), { pods, now: () => T0, waitForStopped: async () => true });
    assert.equal(pods.deletePod.callCount + pods.patchStatus.callCount + pods.addEphemeralContainer.callCount, 0);
  });
});
