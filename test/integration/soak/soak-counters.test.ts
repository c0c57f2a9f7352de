/**
 * The chaos soak's counters (test/soak/tally.ts), on hand-made kubelet records: each figure the
 * soak asserts can fail, and counts what it says it counts. Pure; no API server.
 *
 * @releases newest — pure: no API server.
 */
import assert from 'node:assert/strict';
import { type KubeletRecord, seededRandom } from '@podlife/testbed';
import { JOB_KINDS, kindOfPod, type JobKind } from '../../soak/jobs.js';
import { faultCounts, faultSchedule, parseSoakArgs } from '../../soak/plan.js';
import { tally, type EventSeen, type JobOutcome, type Tally } from '../../soak/tally.js';

const kind = (name: string): JobKind => {
  const k = JOB_KINDS.find((j) => j.name === name);
  if (!k) throw new Error(`no kind ${name}`);
  return k;
};

/** Records of one pod, built in time order. */
function pod(name: string, uid = name) {
  const records: KubeletRecord[] = [];
  const base = { uid, namespace: 'soak', pod: name };
  const b = {
    records,
    exit(container: string, atMs: number, exitCode = 0) {
      records.push({ kind: 'exit', atMs, container, exitCode, ...base });
      return b;
    },
    signal(container: string, atMs: number, signal: 'TERM' | 'KILL', from = `ephemeral:podlife-stop-${container}`) {
      records.push({ kind: 'signal', atMs, container, signal, from, running: true, ...base });
      return b;
    },
    finished(atMs: number) {
      records.push({ kind: 'finished', atMs, phase: 'Succeeded', cause: 'completed', ...base });
      return b;
    },
  };
  return b;
}

function row(t: Tally, label: string): { value: string; pass?: boolean; examples?: string[] } {
  const found = t.rows.find((r) => r.label.startsWith(label));
  if (!found) throw new Error(`no row ${label}`);
  return found;
}

function run(records: KubeletRecord[], jobs: JobOutcome[] = [], events: EventSeen[] = []): Tally {
  return tally({ records, jobs, events, drainMs: 90_000, shutdownsMs: [] });
}

describe('chaos soak counters (test/soak/tally.ts)', () => {
  it('reads a pod\'s kind and Job from its name', () => {
    assert.equal(kindOfPod('soak-rule-k-0007-x4k2p')?.kind.name, 'rule-k');
    assert.equal(kindOfPod('soak-sidecar-143-0012-abcde')?.job, 'soak-sidecar-143-0012');
    assert.equal(kindOfPod('other-pod'), undefined);
  });

  it('a clean rule S pod: nothing stuck, repeated or early, latency from the main\'s exit to the last stop', () => {
    const p = pod('soak-rule-s-0000-aaaaa').exit('app', 1000).signal('proxy', 1500, 'TERM').exit('proxy', 1600).finished(1700);
    const t = run(p.records, [{ name: 'soak-rule-s-0000', kind: kind('rule-s'), result: 'complete' }]);
    assert.equal(t.passed, true);
    assert.equal(row(t, 'pods stuck').value, '0');
    assert.equal(row(t, 'completed').value, '1');
    assert.match(row(t, 'latency').value, /^0\.70 s/);
  });

  it('a pod whose rule fired but that never finished is stuck, and fails the soak', () => {
    const p = pod('soak-rule-k-0001-bbbbb').exit('main', 1000);
    const t = run(p.records);
    assert.equal(row(t, 'pods stuck').value, '1');
    assert.equal(row(t, 'pods stuck').pass, false);
    assert.equal(t.passed, false);
  });

  it('the same signal twice from stop containers is a repeated stop; TERM then KILL is not', () => {
    const repeated = pod('soak-rule-s-0002-ccccc').exit('app', 0).signal('proxy', 100, 'TERM').signal('proxy', 5000, 'TERM').exit('proxy', 5100).finished(5200);
    const escalated = pod('soak-rule-s-0008-ddddd').exit('app', 0).signal('proxy', 100, 'TERM').signal('proxy', 9000, 'KILL').exit('proxy', 9000, 137).finished(9100);
    const t = run([...repeated.records, ...escalated.records]);
    assert.equal(row(t, 'stops repeated').value, '1');
    assert.deepEqual(row(t, 'stops repeated').examples, ['soak-rule-s-0002-ccccc: proxy TERM x2']);
    assert.equal(t.passed, false);
  });

  it('a KILL without a stop first, or within the minimum share of it, is early', () => {
    const none = pod('soak-rule-s-0003-eeeee').exit('app', 0).signal('proxy', 100, 'KILL', 'kubelet').exit('proxy', 100, 137).finished(150);
    const soon = pod('soak-rule-s-0009-fffff').exit('app', 0).signal('proxy', 100, 'TERM').signal('proxy', 600, 'KILL', 'kubelet').exit('proxy', 600, 137).finished(650);
    const fine = pod('soak-rule-s-0015-ggggg').exit('app', 0).signal('proxy', 100, 'TERM').signal('proxy', 2200, 'KILL', 'kubelet').exit('proxy', 2200, 137).finished(2250);
    const t = run([...none.records, ...soon.records, ...fine.records]);
    assert.equal(row(t, 'early KILLs').value, '2');
  });

  it('the kubelet made to end a pod whose container was never stopped, or stopped under the minimum share ago, is an early escalation', () => {
    const ending = (p: ReturnType<typeof pod>, atMs: number, cause: 'deleted' | 'external') => {
      p.records.push({ kind: 'ending', atMs, cause, graceMs: 20_000, uid: p.records[0]?.uid ?? '', namespace: 'soak', pod: p.records[0]?.pod ?? '' });
      return p;
    };
    const never = ending(pod('soak-rule-k-0010-iiiii').exit('main', 0), 100, 'external');
    const soon = ending(pod('soak-rule-s-0011-jjjjj').exit('app', 0).signal('proxy', 100, 'TERM'), 1100, 'deleted');
    const byDesign = ending(pod('soak-phase-0012-kkkkk').exit('app', 0), 100, 'external');
    const late = ending(pod('soak-rule-s-0013-lllll').exit('app', 0).signal('proxy', 100, 'TERM'), 2500, 'external');
    const t = run([...never.records, ...soon.records, ...byDesign.records, ...late.records]);
    assert.equal(row(t, 'early KILLs').value, '3', JSON.stringify(row(t, 'early KILLs').examples)); // worker and proxy of rule-k-0010, proxy of rule-s-0011
  });

  it('a sidecar stopped while a main still runs breaks the order', () => {
    const p = pod('soak-rule-k-0004-hhhhh').exit('main', 0).signal('proxy', 100, 'TERM').exit('proxy', 150).signal('worker', 200, 'TERM').exit('worker', 250).finished(300);
    const t = run(p.records);
    assert.equal(row(t, 'order broken').value, '1');
    assert.equal(row(t, 'order broken').pass, false);
    assert.equal(t.passed, false);
  });

  it('a Job that fails though its kind should complete is an unexpected failure; one meant to fail is not', () => {
    const jobs: JobOutcome[] = [
      { name: 'soak-rule-s-0000', kind: kind('rule-s'), result: 'fail' },
      { name: 'soak-main-fails-0004', kind: kind('main-fails'), result: 'fail' },
      { name: 'soak-rule-k-0001', kind: kind('rule-k'), result: undefined },
    ];
    const t = run([], jobs);
    assert.equal(row(t, 'failed unexpectedly').value, '1');
    assert.equal(row(t, 'failed as expected').value, '1');
    assert.equal(row(t, 'Jobs unfinished').value, '1');
    assert.equal(t.passed, false);
  });

  it('the same Event from two replicas is doubled; from one replica it is not', () => {
    const e = (instance: string, reason = 'StoppingContainer'): EventSeen => ({ uid: 'u1', pod: 'p', reason, note: 'stopping proxy', type: 'Normal', instance });
    const t = run([], [], [e('replica-a-1'), e('replica-b-1'), e('replica-a-1', 'ContainerStopped'), e('replica-a-1', 'ContainerStopped')]);
    assert.equal(row(t, 'Events doubled').value, '1');
  });

  it('plans per 10 minutes 10 leader kills, 5 restarts, 2 pauses and 5 compactions, the same for the same seed', () => {
    assert.deepEqual(faultCounts(10), { 'leader-kill': 10, 'apiserver-restart': 5, 'apiserver-pause': 2, 'etcd-compaction': 5 });
    const a = faultSchedule(10, seededRandom(3));
    assert.deepEqual(a, faultSchedule(10, seededRandom(3)));
    assert.equal(a.length, 22);
    assert.ok(a.every((f, i) => i === 0 || f.atMs > (a[i - 1]?.atMs ?? 0)));
    assert.ok((a[0]?.atMs ?? 0) >= 15_000 && (a.at(-1)?.atMs ?? Infinity) <= 10 * 60_000 - 20_000);
  });

  it('takes --quick for 3 minutes and refuses what it does not know, naming it', () => {
    const quick = parseSoakArgs(['--quick']);
    assert.ok(quick.ok && quick.options.minutes === 3);
    const bad = parseSoakArgs(['--minutes', 'ten', '--colour']);
    assert.ok(!bad.ok);
    assert.match(bad.problems.join('\n'), /--minutes: "ten"/);
    assert.match(bad.problems.join('\n'), /unknown argument "--colour"/);
    assert.ok(!parseSoakArgs(['--quick', '--minutes', '5']).ok);
  });
});
