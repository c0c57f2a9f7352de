import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import sinon from 'sinon';
import { evaluatePod, actOn, stopByExec, type ActContext, type ActionReport, type ExecResult, type PodApi, type PodExecApi, type StopDecision } from '../src/index.js';
import { KILLED_WITH_NAMESPACE_EXIT } from '../src/strategies/exec.js';
import { LINGERING_SIGNAL_SCRIPT, POST_SCRIPT, SIGNAL_SCRIPT, execCommands } from '../src/strategies/commands.js';
import { NO_HANDLER_EXIT, ephemeralName } from '../src/stop-containers.js';
import { deletePod } from '../src/strategies/delete.js';
import { markPhase } from '../src/strategies/phase.js';
import { actionEvent, passRecord } from '../src/records.js';
import { stopByEphemeral } from '../src/strategies/ephemeral.js';
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
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
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

describe('actOn: one pass of what a stop decision says is due', () => {
  function context(extra: Partial<ActContext> = {}, nowMs = T0 + 1000) {
    const exec = execApi();
    const reports: ActionReport[] = [];
    const pods = podApi();
    const ctx: ActContext = { pods, exec, nowMs, report: (r) => reports.push(r), ...extra };
    return { ctx, exec, pods, reports, stopped: () => exec.exec.getCalls().map((c) => `${c.args[1]}:${c.args[2][4]}`) };
  }
  const decide = (b = pod().keystone('app').container('worker').sidecar('log').sidecar('proxy').finished('app', 0, T0), nowMs = T0 + 1000) => {
    const p = b.build();
    return { p, d: evaluatePod(p, { nowMs }) as StopDecision };
  };

  it('issues only the current stage: the mains, never a sidecar while a main runs', async () => {
    const { p, d } = decide();
    const t = context();
    const r = await actOn(p, d, t.ctx);
    assert.deepEqual(t.stopped(), ['worker:TERM']);
    assert.deepEqual({ issued: r.issued, ok: r.ok }, { issued: [{ container: 'worker', escalated: false, atMs: T0 + 1000 }], ok: true });
  });

  it('dates each stop when its attempt returned, not when the decision was made', async () => {
    const { p, d } = decide();
    const clock = { now: T0 + 1000 };
    const t = context({ now: () => clock.now });
    t.exec.exec.callsFake(async () => {
      clock.now += 1300;
      return { exitCode: 0, stdout: '', stderr: '' };
    });
    const r = await actOn(p, d, t.ctx);
    assert.deepEqual(r.issued, [{ container: 'worker', escalated: false, atMs: T0 + 2300 }]);
  });

  it('Event notes name the stop spec and the method, never the script run (the log has it)', async () => {
    const { p, d } = decide(pod().keystone('app').sidecar('proxy', 'http:8080/quit').finished('app', 0, T0));
    const ok = context();
    await actOn(p, d, ok.ctx);
    assert.equal(actionEvent(ok.reports.find((r) => r.kind === 'stop-issued')!, d)?.note, 'stopping container proxy with http:8080/quit via exec');
    const failing = context();
    failing.exec.exec.callsFake(async () => ({ exitCode: 127, stdout: '', stderr: 'sh: not found' }));
    await actOn(p, d, failing.ctx);
    const report = failing.reports.find((r) => r.kind === 'stop-issued')!;
    assert.match(report.detail, /\/bin\/sh -c .{100,}/, 'the report, which the log shows, keeps the whole script');
    const note = actionEvent(report, d)?.note ?? '';
    assert.equal(note, 'could not deliver http:8080/quit to container proxy: exec: curl: sh: not found; wget: sh: not found; /bin/sh script: sh: not found');
  });

  it('an ephemeral stop is named by its container, not its command', () => {
    const report = { kind: 'stop-issued', container: 'proxy', stop: 'signal:TERM', method: 'ephemeral', ok: true, detail: 'ephemeral container podlife-stop-proxy (/bin/sh -c trap "" TERM; kill -s TERM 1; sleep 1)' } as const;
    assert.equal(actionEvent(report)?.note, 'stopping container proxy with signal:TERM via ephemeral container podlife-stop-proxy');
  });

  it('a stop that goes out late says so in its Event, with what is left of the budget', async () => {
    const { p, d } = decide(undefined, T0 + 26_000);
    const t = context({}, T0 + 26_000);
    await actOn(p, d, t.ctx);
    const note = actionEvent(t.reports.find((r) => r.kind === 'stop-issued')!, d)?.note ?? '';
    assert.match(note, /^stopping container worker with signal:TERM via .* \(26\.0s late, the controller was unavailable: 4\.0s of the budget left for 3 stage\(s\), at least 2\.0s each\)$/);
  });

  it('then each sidecar alone, in reverse spec order', async () => {
    const { p, d } = decide(pod().keystone('app').container('worker').sidecar('log').sidecar('proxy').finished('app', 0, T0).finished('worker', 143, T0 + 500));
    const t = context();
    await actOn(p, d, t.ctx);
    assert.deepEqual(t.stopped(), ['proxy:TERM']);
  });

  it('escalates from outside when a stop outlived its share: the result recorded first, then the kubelet ends the pod', async () => {
    const issued = `stopping worker, proxy, log; issued: worker@${T0 + 1000}`;
    const { p, d } = decide(pod().keystone('app').container('worker').sidecar('log').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', issued), T0 + 11_000);
    const t = context({}, T0 + 11_000);
    const r = await actOn(p, d, t.ctx);
    assert.equal(t.exec.exec.callCount, 0, 'never a SIGKILL from inside, never the stop again');
    assert.ok(t.pods.patchStatus.calledBefore(t.pods.deletePod));
    assert.deepEqual(t.pods.patchStatus.firstCall.args[1].at(-1), { op: 'replace', path: '/status/phase', value: 'Succeeded' });
    // 30 s from T0; 19 s are left.
    assert.equal(t.pods.deletePod.firstCall.args[1], 19);
    const escalated = t.reports.find((x) => x.kind === 'escalated');
    assert.equal(escalated?.kind === 'escalated' && escalated.why, 'share');
    assert.equal(actionEvent(escalated!, d)?.reason, 'StoppingContainer');
    assert.deepEqual(r.issued, [{ container: 'worker', escalated: true, atMs: T0 + 11_000 }]);
    assert.match(passRecord(d, r).updates.at(-1)?.condition.message ?? '', new RegExp(`issued: worker@${T0 + 1000}, worker:KILL@${T0 + 11_000}$`));
  });

  it('an escalated Job pod gets its result recorded; the deletion waits for the Job to count it', async () => {
    const p = pod().container('app').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', `stopping proxy; issued: proxy@${T0}`).build();
    p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
    const d = evaluatePod(p, { nowMs: T0 + 31_000 }) as StopDecision;
    const t = context({}, T0 + 31_000);
    await actOn(p, d, t.ctx);
    assert.equal(t.pods.patchStatus.callCount, 1);
    assert.equal(t.pods.deletePod.callCount, 0);
    const escalated = t.reports.find((r) => r.kind === 'escalated');
    assert.match(escalated?.kind === 'escalated' ? escalated.detail : '', /once its Job has counted it/);
  });

  it('escalates on the next pass when PID 1 has no handler for the signal (the record says so), and says why', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    const exec = execApi({ exitCode: NO_HANDLER_EXIT, stdout: '', stderr: '' });
    const t = context({ exec });
    const r = await actOn(p, d, t.ctx);
    assert.equal(t.pods.deletePod.callCount, 0, 'acting decides nothing: what the exec found goes into the record');
    const record = passRecord(d, r).updates.find((u) => u.condition.type === 'podlife.dev/SidecarsStopped')!;
    assert.match(record.condition.message, new RegExp(`issued: proxy!nohandler@${T0 + 1000}$`));
    // The record written, the next evaluation reads it back and decides the escalation.
    p.status!.conditions = [...(p.status!.conditions ?? []), { ...record.condition, lastTransitionTime: new Date(T0 + 1000) }];
    const next = evaluatePod(p, { nowMs: T0 + 1100 }) as StopDecision;
    assert.equal(next.escalation?.why, 'no-handler');
    const r2 = await actOn(p, next, t.ctx);
    assert.equal(t.pods.deletePod.callCount, 1);
    assert.equal(exec.exec.callCount, 1, 'the stop is not sent again');
    assert.deepEqual([...r.issued, ...r2.issued].map((s) => `${s.container}${s.escalated ? ':KILL' : ''}`), ['proxy', 'proxy:KILL']);
    const event = actionEvent(t.reports.find((x) => x.kind === 'escalated')!, next);
    assert.equal(event?.type, 'Warning');
    assert.match(event?.note ?? '', /PID 1 has no handler.*ending it through the kubelet/);
  });

  it('escalates when the ephemeral stop container reports no handler', async () => {
    const b = pod().container('app').sidecar('proxy').finished('app', 0, T0).ephemeral('podlife-stop-proxy', 'proxy');
    const p = b.build();
    p.status!.ephemeralContainerStatuses = [{ name: 'podlife-stop-proxy', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: NO_HANDLER_EXIT } } }];
    const d = evaluatePod(p, { nowMs: T0 + 1000 }) as StopDecision;
    const t = context();
    await actOn(p, d, t.ctx);
    const escalated = t.reports.find((r) => r.kind === 'escalated');
    assert.equal(escalated?.kind === 'escalated' && escalated.why, 'no-handler');
    assert.equal(t.pods.deletePod.callCount, 1);
  });

  it('escalates at once, with a Warning naming the exit code, when the stop container failed without delivering its stop', async () => {
    const withStopExit = (exitCode: number) => {
      const p = pod().container('app').sidecar('proxy').finished('app', 0, T0).ephemeral('podlife-stop-proxy', 'proxy').build();
      p.status!.ephemeralContainerStatuses = [{ name: 'podlife-stop-proxy', image: '', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode } } }];
      return p;
    };
    // kill refused (EPERM: the stop container's user may not signal the target's): exit 1.
    const p = withStopExit(1);
    const d = evaluatePod(p, { nowMs: T0 + 1000 }) as StopDecision;
    assert.equal(d.escalation?.why, 'not-delivered', 'not after the share: nothing is on its way');
    const t = context();
    await actOn(p, d, t.ctx);
    assert.equal(t.pods.deletePod.callCount, 1);
    const event = actionEvent(t.reports.find((r) => r.kind === 'escalated')!, d);
    assert.equal(event?.type, 'Warning');
    assert.match(event?.note ?? '', /^the stop container of proxy exited 1 without delivering signal:TERM .*ending it through the kubelet instead/);
    // 0 delivered; 137 is a lingering stop container ended with its target's PID namespace.
    for (const code of [0, 137]) assert.equal((evaluatePod(withStopExit(code), { nowMs: T0 + 1000 }) as StopDecision).escalation, undefined, `exit ${code}`);
  });

  it('does not delete the pod when its result cannot be recorded, and says so', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', `stopping proxy; issued: proxy@${T0}`), T0 + 31_000);
    const t = context({}, T0 + 31_000);
    t.pods.patchStatus.rejects(new Error('the server is unavailable'));
    const r = await actOn(p, d, t.ctx);
    assert.equal(r.ok, false, 'retried by the caller');
    assert.equal(t.pods.deletePod.callCount, 0, "a Job would count the kubelet's view of a killed sidecar");
    assert.equal(actionEvent(t.reports.find((x) => x.kind === 'escalated')!, d)?.reason, 'StopFailed');
  });

  it('past the budget, the least grace is 1 s, never 0', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', `stopping proxy; issued: proxy@${T0 + 29_000}`), T0 + 31_000);
    const t = context({}, T0 + 31_000);
    await actOn(p, d, t.ctx);
    assert.equal(t.exec.exec.callCount, 0);
    assert.equal(t.pods.deletePod.firstCall.args[1], 1);
  });

  it('does not repeat a stop the progress record already holds', async () => {
    const { p, d } = decide(pod().keystone('app').container('worker').sidecar('proxy').finished('app', 0, T0).condition('podlife.dev/SidecarsStopped', 'False', 'stopping worker, proxy; issued: worker'));
    const t = context();
    await actOn(p, d, t.ctx);
    assert.deepEqual(t.stopped(), []);
  });

  it('falls back to an ephemeral container when exec cannot run', async () => {
    const { p, d } = decide(pod().container('app').sidecar('proxy').finished('app', 0, T0));
    const t = context({ exec: { exec: sinon.stub().resolves(notFound) }, config: { ephemeralImage: 'busybox:1.36' } });
    await actOn(p, d, t.ctx);
    assert.equal(t.pods.addEphemeralContainer.callCount, 1);
    const issued = t.reports.find((r) => r.kind === 'stop-issued');
    assert.equal(issued?.kind === 'stop-issued' && issued.method, 'ephemeral');
  });
});

describe('actOn: delete and phase', () => {
  const ctx = (pods: PodApi): ActContext => ({ pods, nowMs: T0 });

  it('deletes for TerminatePod', async () => {
    const p = pod().keystone('app').sidecar('proxy').annotate('podlife.dev/on-keystone-exit', 'TerminatePod').finished('app', 0).build();
    const pods = podApi();
    const r = await actOn(p, evaluatePod(p, { nowMs: T0 }), ctx(pods));
    assert.equal(r.ok, true);
    assert.equal(pods.deletePod.firstCall.args[1], 30);
  });

  it('marks the phase for completion: phase, then deletes the pod so that the kubelet ends the rest', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    const pods = podApi();
    const r = await actOn(p, evaluatePod(p, { nowMs: T0 + 4_000 }), ctx(pods));
    assert.equal(r.ok, true);
    assert.equal(pods.patchStatus.firstCall.args[1].at(-1).value, 'Succeeded');
    assert.ok(pods.patchStatus.calledBefore(pods.deletePod));
    assert.equal(pods.deletePod.firstCall.args[1], 26);
  });

  it('leaves the deletion of a Job pod until the Job has counted the result', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    p.metadata!.finalizers = ['batch.kubernetes.io/job-tracking'];
    const pods = podApi();
    const r = await actOn(p, evaluatePod(p, { nowMs: T0 }), ctx(pods));
    assert.equal(r.ok, true);
    assert.equal(pods.patchStatus.callCount, 1);
    assert.equal(pods.deletePod.callCount, 0);
  });

  it('does not delete when the phase could not be recorded (retried on a fresh pod)', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).build();
    const pods = podApi();
    pods.patchStatus.rejects(new Error('the server is unavailable'));
    const r = await actOn(p, evaluatePod(p, { nowMs: T0 }), ctx(pods));
    assert.equal(r.ok, false);
    assert.equal(pods.deletePod.callCount, 0);
  });

  it('deletes a pod whose recorded phase left containers running (resumed after a crash)', async () => {
    const p = pod().container('app').sidecar('proxy').annotate('podlife.dev/completion', 'phase').finished('app', 0).phase('Succeeded').build();
    const pods = podApi();
    await actOn(p, evaluatePod(p, { nowMs: T0 }), ctx(pods));
    assert.equal(pods.patchStatus.callCount, 0);
    assert.equal(pods.deletePod.callCount, 1);
  });

  it('does nothing for none and invalid', async () => {
    const p = pod().container('app').annotate('role.podlife.dev/x', 'sidecar').build();
    const pods = podApi();
    await actOn(p, evaluatePod(p, { nowMs: T0 }), ctx(pods));
    assert.equal(pods.deletePod.callCount + pods.patchStatus.callCount + pods.addEphemeralContainer.callCount, 0);
  });
});
