/**
 * The real-node soak's observations (test/soak/busybox.ts, node-records.ts): the busybox scripts
 * run by this host's busybox record what a container sees, and what the node shows becomes the
 * records the soak's tally counts. No API server.
 *
 * @releases newest — no API server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep } from '@podlife/core';
import { busyboxScript, RECORD_MOUNT } from '../../soak/busybox.js';
import { nodeRecords, parseKubeletKills, parseOwnRecord, type ContainerSeen, type PodSeen } from '../../soak/node-records.js';
import { parseSoakArgs } from '../../soak/plan.js';
import { repeatedStopEvents, tally, type EventSeen } from '../../soak/tally.js';
import { klogLineMs, makeTempDir, readKubeletLog, removeTempDir } from '@podlife/testbed';

/** Runs a container's script under this host's busybox, recording into `dir`; resolves with its exit code. */
function runScript(script: string, dir: string): { pid: number; exited: Promise<number | null> } {
  const child = spawn('/bin/busybox', ['sh', '-c', script.replaceAll(`${RECORD_MOUNT}/`, `${dir}/`)], {
    env: { POD_UID: 'uid-1' }, detached: true, stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL'); // its background sleep
    } catch {
      // Already gone.
    }
    resolve(code);
  }));
  return { pid: child.pid as number, exited };
}

const container = (name: string, over: Partial<ContainerSeen> = {}): ContainerSeen => ({ name, own: [], kubeletKillsMs: [], ...over });
const pod = (name: string, containers: ContainerSeen[], over: Partial<PodSeen> = {}): PodSeen => ({ uid: name, name, namespace: 'soak', containers, ...over });

describe('real-node soak observations (test/soak/busybox.ts, node-records.ts)', () => {
  describe('busybox containers', () => {
    let dir: string;
    before(function () {
      if (!existsSync('/bin/busybox')) throw new Error('/bin/busybox is missing: node scripts/node-assets.mjs installs busybox-static');
      dir = makeTempDir('podlife-soak-busybox-');
    });
    after(() => removeTempDir(dir));

    it('a main sleeps, records its exit and exits with its code', async () => {
      const run = runScript(busyboxScript('app', { runMs: 200, exitCode: 3 }), dir);
      assert.equal(await run.exited, 3);
      const lines = parseOwnRecord(readFileSync(join(dir, 'uid-1.app'), 'utf8'), 0);
      assert.deepEqual(lines.map((l) => [l.what, l.exitCode]), [['exit', 3]]);
    });

    it('a sidecar records each TERM at once (a second one during its delay too), then exits with its TERM code', async () => {
      const run = runScript(busyboxScript('proxy', { exitOnSignal: { TERM: 0 }, signalExitDelayMs: 600 }), dir);
      await sleep(300);
      process.kill(run.pid, 'SIGTERM');
      await sleep(200);
      process.kill(run.pid, 'SIGTERM');
      assert.equal(await run.exited, 0);
      const lines = parseOwnRecord(readFileSync(join(dir, 'uid-1.proxy'), 'utf8'), 0);
      assert.deepEqual(lines.map((l) => l.what), ['TERM', 'TERM', 'exit']);
      assert.ok((lines[1]?.atMs ?? 0) - (lines[0]?.atMs ?? 0) < 500, 'the second TERM is recorded before the first one\'s delay ends');
    });

    it('without a TERM code the container exits 143, as a simulated one does', async () => {
      const run = runScript(busyboxScript('side', {}), dir);
      await sleep(300);
      process.kill(run.pid, 'SIGTERM');
      assert.equal(await run.exited, 143);
    });

    it('refuses what a busybox container cannot do', () => {
      assert.throws(() => busyboxScript('proxy', { exitOnSignal: { TERM: null } }), /cannot ignore TERM/);
      assert.throws(() => busyboxScript('a;b', {}), /not a DNS label/);
    });
  });

  it('reads the kubelet\'s kill lines (klog, local time)', () => {
    const log = [
      'I1201 18:14:27.863447    6281 kuberuntime_container.go:912] "Killing container with a grace period" pod="soak/p" podUID="u-1" containerName="proxy" containerID="containerd://ab" gracePeriod=20',
      'I1201 18:14:28.000000    6281 kubelet.go:1] "SyncLoop DELETE" pods=["soak/p"]',
    ].join('\n');
    assert.deepEqual(parseKubeletKills(log, new Date(2026, 11, 1, 18, 0).getTime()), [{ atMs: new Date(2026, 11, 1, 18, 14, 27, 863).getTime(), podUid: 'u-1', container: 'proxy' }]);
  });

  it('reads a klog line across New Year in the year nearest the run', () => {
    const lateDecember = new Date(2026, 11, 31, 23, 59, 50).getTime();
    assert.equal(klogLineMs('I0101 00:00:05.250000    6281 kubelet.go:1] "x"', lateDecember), new Date(2027, 0, 1, 0, 0, 5, 250).getTime());
    assert.equal(klogLineMs('I1231 23:59:40.000000    6281 kubelet.go:1] "x"', new Date(2027, 0, 1, 0, 0, 10).getTime()), new Date(2026, 11, 31, 23, 59, 40).getTime());
    assert.equal(klogLineMs('not a klog line', lateDecember), undefined);
  });

  it('reads container deaths (the first PLEG report) and pod updates (in order) from the kubelet log, from a moment on', () => {
    const at = (h: number, m: number, s: number, ms = 0): number => new Date(2026, 11, 4, h, m, s, ms).getTime();
    const died = (time: string, id: string) => `I1204 ${time}    6281 kubelet.go:2461] "SyncLoop (PLEG): event for pod" pod="bench/job-1" event={"ID":"u-1","Type":"ContainerDied","Data":"${id}"}`;
    const update = (time: string, pods: string) => `I1204 ${time}    6281 kubelet.go:2420] "SyncLoop UPDATE" source="api" pods=[${pods}]`;
    const log = [
      died('05:59:59.000000', 'aa01'), // before the moment: not read
      update('05:59:59.500000', '"bench/job-1"'),
      died('06:00:01.250000', 'aa01'),
      died('06:00:02.000000', 'aa01'), // a repeated report: the first counts
      `I1204 06:00:01.300000    6281 kubelet.go:2461] "SyncLoop (PLEG): event for pod" pod="bench/job-1" event={"ID":"u-1","Type":"ContainerStarted","Data":"bb02"}`,
      update('06:00:01.400000', '"bench/job-1", "bench/job-2"'),
      update('06:00:03.000000', '"bench/job-1"'),
      'a line without a klog header',
      '',
    ].join('\n');
    const read = readKubeletLog(log, at(6, 0, 0));
    assert.deepEqual([...read.died], [['aa01', at(6, 0, 1, 250)]]);
    assert.deepEqual([...read.updates], [
      ['bench/job-1', [at(6, 0, 1, 400), at(6, 0, 3)]],
      ['bench/job-2', [at(6, 0, 1, 400)]],
    ]);
  });

  it('a TERM after the kubelet logged killing the container is the kubelet\'s; one before is a stop', () => {
    const records = nodeRecords([
      pod('soak-rule-s-0000-aaaaa', [
        container('app', { own: [{ atMs: 1000, what: 'exit', exitCode: 0 }] }),
        container('proxy', { own: [{ atMs: 1200, what: 'TERM' }, { atMs: 3000, what: 'TERM' }, { atMs: 3100, what: 'exit', exitCode: 0 }], kubeletKillsMs: [2990] }),
      ]),
    ]);
    const signals = records.filter((r) => r.kind === 'signal');
    assert.deepEqual(signals.map((s) => s.kind === 'signal' && [s.atMs, s.from]), [[1200, 'exec'], [3000, 'kubelet']]);
    assert.deepEqual(records.find((r) => r.kind === 'ending')?.atMs, 2990);
    assert.equal(records.at(-1)?.kind, 'finished');
    const t = tally({ records, jobs: [], events: [], drainMs: 90_000, shutdownsMs: [] });
    assert.equal(t.rows.find((r) => r.label.startsWith('stops repeated'))?.value, '0');
  });

  it('two stops before the kubelet acts are a repeated stop', () => {
    const records = nodeRecords([
      pod('soak-rule-s-0001-bbbbb', [
        container('app', { own: [{ atMs: 1000, what: 'exit', exitCode: 0 }] }),
        container('proxy', { own: [{ atMs: 1200, what: 'TERM' }, { atMs: 1500, what: 'TERM' }, { atMs: 1600, what: 'exit', exitCode: 0 }] }),
      ]),
    ]);
    const t = tally({ records, jobs: [], events: [], drainMs: 90_000, shutdownsMs: [] });
    assert.equal(t.rows.find((r) => r.label.startsWith('stops repeated'))?.value, '1');
    assert.equal(t.passed, false);
  });

  it('exit 137 is a KILL; a container gone with no exit code anywhere exits -1; the pod finishes when every container has exited', () => {
    const records = nodeRecords([
      pod('soak-rule-k-0002-ccccc', [
        container('main', { own: [{ atMs: 1000, what: 'exit', exitCode: 0 }] }),
        container('worker', { runtimeExit: { exitCode: 137, atMs: 5000 } }),
        container('proxy', { vanishedAtMs: 6000 }),
      ], { deletionAtMs: 4000 }),
    ]);
    const kill = records.find((r) => r.kind === 'signal');
    assert.ok(kill?.kind === 'signal' && kill.signal === 'KILL' && kill.atMs === 5000);
    assert.deepEqual(records.filter((r) => r.kind === 'exit').map((r) => r.kind === 'exit' && [r.container, r.exitCode]), [['main', 0], ['worker', 137], ['proxy', -1]]);
    const finished = records.find((r) => r.kind === 'finished');
    assert.ok(finished?.kind === 'finished' && finished.atMs === 6000 && finished.phase === 'Failed' && finished.cause === 'deleted');
    const t = tally({ records, jobs: [], events: [], drainMs: 90_000, shutdownsMs: [] });
    // The worker KILLed with no stop; the worker and the proxy still ran, never stopped, when the deletion began.
    assert.equal(t.rows.find((r) => r.label.startsWith('early KILLs'))?.value, '3');
  });

  it('a phase made terminal while a container still runs, under the minimum share after its stop, is an early escalation', () => {
    const records = nodeRecords([
      pod('soak-sidecar-143-0004-eeeee', [
        container('app', { own: [{ atMs: 1000, what: 'exit', exitCode: 0 }] }),
        container('proxy', { own: [{ atMs: 2000, what: 'TERM' }, { atMs: 3400, what: 'exit', exitCode: 143 }] }),
      ], { phaseTerminalAtMs: 3000 }),
    ]);
    const t = tally({ records, jobs: [], events: [], drainMs: 90_000, shutdownsMs: [] });
    assert.deepEqual(t.rows.find((r) => r.label.startsWith('early KILLs'))?.examples, ['soak-sidecar-143-0004-eeeee: proxy ended by the kubelet (phase made terminal) 1000 ms after its TERM']);
  });

  it('a pod whose rule fired and whose sidecar has no exit yet is not finished (stuck if it stays so)', () => {
    const records = nodeRecords([pod('soak-rule-s-0003-ddddd', [container('app', { own: [{ atMs: 1000, what: 'exit', exitCode: 0 }] }), container('proxy')])]);
    assert.equal(records.some((r) => r.kind === 'finished'), false);
    const t = tally({ records, jobs: [], events: [], drainMs: 90_000, shutdownsMs: [] });
    assert.equal(t.rows.find((r) => r.label.startsWith('pods stuck'))?.value, '1');
  });

  it('takes --real-node with --quick, --seed, --rate and --strategy', () => {
    const parsed = parseSoakArgs(['--', '--real-node', '--quick', '--seed', '4']);
    assert.ok(parsed.ok);
    assert.deepEqual([parsed.options.realNode, parsed.options.minutes, parsed.options.seed], [true, 3, 4]);
    const plain = parseSoakArgs([]);
    assert.ok(plain.ok && !plain.options.realNode && plain.options.jobsPerMinute === undefined);
    const rate = parseSoakArgs(['--real-node', '--rate', '24']);
    assert.ok(rate.ok && rate.options.jobsPerMinute === 24);
    const eph = parseSoakArgs(['--real-node', '--strategy', 'ephemeral']);
    assert.ok(eph.ok && eph.options.strategy === 'ephemeral');
    assert.deepEqual(parseSoakArgs(['--strategy', 'ephemeral']), { ok: false, problems: ['--strategy: only with --real-node (the simulated kubelet runs no exec; it uses ephemeral stop containers)'] });
    assert.deepEqual(parseSoakArgs(['--real-node', '--strategy', 'delete']), { ok: false, problems: ['--strategy: "delete" is not exec or ephemeral'] });
    assert.deepEqual(parseSoakArgs(['--rate', '2.5']), { ok: false, problems: ['--rate: "2.5" is not a whole number of Jobs a minute between 1 and 600'] });
  });

  it('counts StoppingContainer Events per container across replicas, a series in full', () => {
    const ev = (instance: string, note: string, count = 1): EventSeen => ({ uid: 'u', pod: 'p', reason: 'StoppingContainer', note, type: 'Normal', instance, count });
    assert.deepEqual(repeatedStopEvents([
      ev('replica-a-1', 'stopping container proxy with signal:TERM via exec'),
      ev('replica-b-1', 'stopping container proxy with signal:TERM via exec (3.0s late, the controller was unavailable: ...)'),
      ev('replica-a-1', 'stopping container worker with signal:TERM via exec'),
      ev('replica-a-1', 'container worker outlived its share of the grace period after signal:TERM; ending it through the kubelet (...)'),
    ]), ['p: proxy x2 (replica-a-1, replica-b-1)']);
    assert.deepEqual(repeatedStopEvents([ev('replica-a-1', 'stopping container app with signal:TERM via exec', 2)]), ['p: app x2 (replica-a-1)']);
  });
});
