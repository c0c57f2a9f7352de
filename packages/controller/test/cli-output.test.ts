import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { explainNode, nodeReadinessRule, renderNodeExplanation } from '@podlife/node-readiness';
import { podExplanation } from '@podlife/pod-conditions';
import { usageFor } from '../src/cli/args.js';
import { complete, completionOutput, completionScript, type CompletionLookups } from '../src/cli/completion.js';
import { renderExplained } from '../src/cli/explain.js';
import { nodesTable } from '../src/cli/nodes.js';
import { fitText, renderData, renderTable, textWidth } from '../src/cli/output.js';
import { age, podRow, podsTable } from '../src/cli/pods.js';
import { nowArb, podArb, T0 } from '../../keystone/test/pod-arbitrary.js';

const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));
const words = (text: string) => text.split(/\s+/).filter((w) => w !== '').join('');

describe('podlife CLI output', () => {
  describe('fitting text to the terminal', () => {
    it('every line fits, and no character but spaces is lost or reordered', () =>
      fc.assert(
        fc.property(fc.array(fc.string({ unit: fc.constantFrom('a', 'b', ' ', ' ', '-', 'é', '/'), maxLength: 300 }), { maxLength: 8 }), fc.integer({ min: 40, max: 120 }), (lines, width) => {
          const text = lines.join('\n');
          const fitted = fitText(text, width);
          assert.ok(widest(fitted) <= width, fitted);
          assert.equal(words(fitted), words(text));
        }),
      ));
    it('lines that fit are left alone, and continuations hang under their line', () => {
      assert.equal(fitText('  short line', 80), '  short line');
      assert.equal(fitText(`  ${'word '.repeat(20).trim()}`, 40), ['  word word word word word word word', '    word word word word word word word', '    word word word word word word'].join('\n'));
    });
    it('width: --width, else the terminal, else 80', () => {
      assert.equal(textWidth(100, 200), 100);
      assert.equal(textWidth(undefined, 132), 132);
      assert.equal(textWidth(undefined, undefined), 80);
    });
  });

  describe('tables', () => {
    const rows = [
      ['NAME', 'HELD BY', 'READINESS TAINTS'],
      ['worker-1', 'cni (failing), storage (missing), gpu-driver (unknown)', 'readiness.k8s.io/NetworkReady:NoSchedule, readiness.k8s.io/CSIReady:NoSchedule, readiness.k8s.io/GPUReady:NoSchedule'],
      ['worker-2', '-', '-'],
    ];
    it('a table that fits is one line a row with aligned columns', () =>
      assert.equal(renderTable([['A', 'B'], ['xx', 'y']], 80), 'A   B\nxx  y'));
    it('a table that does not fit wraps its widest cells within their columns', () => {
      const text = renderTable(rows, 80);
      assert.ok(widest(text) <= 80, text);
      const [header = '', ...lines] = text.split('\n');
      assert.match(header, /^NAME +HELD BY +READINESS TAINTS$/);
      // Read the cells back by column: each row's wrapped pieces, joined, are its cells.
      const starts = [0, header.indexOf('HELD BY'), header.indexOf('READINESS TAINTS')];
      const cells: string[][] = [];
      for (const line of lines) {
        const pieces = starts.map((s, i) => line.slice(s, starts[i + 1]).trim());
        if (pieces[0] !== '') cells.push(pieces);
        else pieces.forEach((p, i) => (cells[cells.length - 1]![i] += p));
      }
      assert.deepEqual(cells.map((r) => r.map(words)), rows.slice(1).map((r) => r.map(words)));
    });
    it('with no width (-o wide) rows never wrap', () => assert.equal(renderTable(rows).split('\n').length, 3));
  });

  describe('everything the CLI prints as text fits 80 columns', () => {
    it('the usage, as podlife and as kubectl podlife', () => {
      assert.ok(widest(usageFor('podlife')) <= 80);
      assert.ok(widest(usageFor('kubectl podlife')) <= 80);
    });

    it('explain <pod>, for any pod', () =>
      fc.assert(
        fc.property(podArb, nowArb, (pod, now) => {
          const events = [{ reason: 'FailedMount', type: 'Warning', message: `MountVolume.SetUp failed for volume "${'very-long-volume-name-'.repeat(4)}" : configmap "app-settings-production-eu-west-1" not found`, lastTimestamp: new Date(now - 1000).toISOString() }];
          const explanation = podExplanation(pod, events as never, now);
          const text = renderExplained({ explanation, notes: ['this pod has podlife lifecycle annotations but not the label podlife.dev/managed: "true"; a controller run with --managed-pods-only does not see it'] }, { output: 'text', compact: false, width: 80 });
          assert.ok(widest(text) <= 80, text);
        }),
        { numRuns: 200 },
      ));

    const node = (name: string, taints: string[], conditions: [string, string][]): V1Node => ({
      metadata: { name, labels: { pool: 'gpu' } },
      spec: { taints: taints.map((key) => ({ key, effect: 'NoSchedule' })) },
      status: { conditions: conditions.map(([type, status]) => ({ type, status, reason: 'AgentReport', message: `${type} reported ${status} by the node agent after a very long probe`, lastHeartbeatTime: new Date(T0) as never, lastTransitionTime: new Date(T0) as never })) },
    });
    const nodes = [
      node('ip-10-0-12-34.eu-west-1.compute.internal', ['readiness.k8s.io/NetworkReady', 'readiness.k8s.io/CSIReady', 'readiness.k8s.io/GPUDriverReady'], [['NetworkReady', 'False']]),
      node('worker-2', [], [['NetworkReady', 'True'], ['CSIReady', 'True']]),
    ];
    const rules = [nodeReadinessRule('gpu-driver-and-device-plugin', { conditions: [{ type: 'GPUDriverReady', requiredStatus: 'True' }], taint: { key: 'readiness.k8s.io/GPUDriverReady', effect: 'NoSchedule' }, enforcementMode: 'continuous', nodeSelector: { matchLabels: { pool: 'gpu' } } } as never)];

    it('explain node', () => {
      for (const n of nodes) {
        const text = fitText(renderNodeExplanation(explainNode(n, rules, T0, { zeroConfig: true })), 80);
        assert.ok(widest(text) <= 80, text);
      }
    });
    it('nodes, and -o wide keeps every column on one line', () => {
      const text = renderTable(nodesTable(nodes, rules, T0, false), 80);
      assert.ok(widest(text) <= 80, text);
      const wide = renderTable(nodesTable(nodes, rules, T0, true));
      assert.equal(wide.split('\n').length, 3);
      assert.match(wide.split('\n')[0] ?? '', /GATES +UNMANAGED TAINTS$/);
    });
    it('pods, for any pods, in one namespace and in all', () =>
      fc.assert(
        fc.property(fc.array(podArb, { minLength: 1, maxLength: 5 }), nowArb, (pods, now) => {
          const rows = pods.map((p, i) => podRow({ ...p, metadata: { ...p.metadata, name: `report-generator-nightly-${i}-x7k2p`, namespace: 'analytics-batch-production' } }, now));
          for (const allNamespaces of [false, true]) {
            const text = renderTable(podsTable(rows, { allNamespaces, wide: false }), 80);
            assert.ok(widest(text) <= 80, text);
          }
        }),
        { numRuns: 100 },
      ));
  });

  describe('pods', () => {
    const pod = (conditions: { type: string; status: string; message?: string }[], annotations: Record<string, string> = { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'preset:envoy' }): V1Pod => ({
      metadata: { name: 'job-1', namespace: 'batch', annotations, creationTimestamp: new Date(T0 - 3_600_000) as never },
      spec: { containers: [{ name: 'app' }, { name: 'proxy' }], nodeName: 'worker-1' },
      status: { phase: 'Running', conditions: conditions as never },
    });
    it('shows the roles and the record the controller keeps', () => {
      const row = podRow(pod([{ type: 'podlife.dev/SidecarsStopped', status: 'False', message: 'stopping proxy; issued: proxy' }]), T0);
      assert.deepEqual([row.roles, row.lifecycle, row.message, row.stops, row.age, row.node], ['proxy=sidecar', 'Stopping', 'stopping proxy; issued: proxy', 'proxy=preset:envoy', '60m', 'worker-1']);
      assert.equal(podRow(pod([{ type: 'podlife.dev/SidecarsStopped', status: 'True' }]), T0).lifecycle, 'SidecarsStopped');
      assert.equal(podRow(pod([]), T0).lifecycle, 'Running');
    });
    it('an invalid pod says so, with the reason', () => {
      const row = podRow(pod([], { 'role.podlife.dev/nope': 'sidecar' }), T0);
      assert.equal(row.lifecycle, 'Invalid');
      assert.equal(row.roles, 'invalid');
      assert.match(row.message, /nope/);
    });
    it('ages as kubectl prints them', () => assert.deepEqual([5, 200, 10_000, 300_000].map((s) => age(new Date(T0 - s * 1000), T0)), ['5s', '3m', '2h', '3d']));
    it('-A adds the namespace column; -o wide the node, stops, label and message', () => {
      const rows = [podRow(pod([]), T0)];
      assert.deepEqual(podsTable(rows, { allNamespaces: true, wide: false })[0], ['NAMESPACE', 'NAME', 'ROLES', 'LIFECYCLE', 'AGE']);
      assert.deepEqual(podsTable(rows, { allNamespaces: false, wide: true })[0], ['NAME', 'ROLES', 'LIFECYCLE', 'AGE', 'NODE', 'STOP', 'MANAGED', 'MESSAGE']);
    });
    it('JSON and YAML carry the same data', () => {
      const data = { items: [podRow(pod([]), T0)] };
      assert.deepEqual(JSON.parse(renderData(data, 'json')), data);
      assert.match(renderData(data, 'yaml'), /^items:\n {2}- namespace: batch\n {4}name: job-1/);
    });
  });

  describe('completion', () => {
    const calls: string[] = [];
    const lookups: CompletionLookups = {
      pods: async (f) => (calls.push(`pods ${f.namespace ?? '-'} ${f.context ?? '-'}`), ['web-0', 'web-1', 'db-0']),
      nodes: async () => ['worker-1', 'worker-2'],
      namespaces: async () => ['default', 'shop'],
      contexts: () => ['prod', 'staging'],
    };
    const c = (line: string) => complete(line.split(' '), lookups);

    it('commands first', async () => assert.deepEqual(await c(''), ['explain', 'nodes', 'pods', 'migrate', 'completion']));
    it('filters by the partial word', async () => assert.deepEqual(await c('ex'), ['explain']));
    it('pod names after explain, in the namespace and context given', async () => {
      assert.deepEqual(await c('explain -n shop --context prod we'), ['web-0', 'web-1']);
      assert.equal(calls.at(-1), 'pods shop prod');
      assert.deepEqual(await c('explain --namespace=shop d'), ['db-0']);
    });
    it('node names after explain node', async () => assert.deepEqual(await c('explain node w'), ['worker-1', 'worker-2']));
    it('flag values: output formats, namespaces, contexts', async () => {
      assert.deepEqual(await c('pods -o '), ['text', 'wide', 'json', 'yaml']);
      assert.deepEqual(await c('pods -n s'), ['shop']);
      assert.deepEqual(await c('nodes --context '), ['prod', 'staging']);
      assert.deepEqual(await c('completion '), ['bash', 'zsh']);
    });
    it('flags of the command', async () => assert.deepEqual(await c('pods --a'), ['--all-namespaces']));
    it('explain offers --unlabelled; after it, -A and no pod names', async () => {
      assert.deepEqual(await c('explain --un'), ['--unlabelled']);
      assert.deepEqual(await c('explain --unlabelled --a'), ['--all-namespaces']);
      assert.deepEqual(await c('explain --unlabelled --wa'), []);
      assert.deepEqual(await c('explain --unlabelled --as'), []);
      assert.deepEqual(await c('explain --unlabelled '), []);
    });
    it('nothing after a complete command line', async () => assert.deepEqual(await c('explain web-0 '), []));
    it("answers in cobra's protocol, never offering file names", () => assert.equal(completionOutput(['a', 'b']), 'a\nb\n:4\n'));
    it('scripts for bash and zsh ask podlife __complete, for podlife and kubectl-podlife', () => {
      for (const shell of ['bash', 'zsh'] as const) {
        const script = completionScript(shell);
        assert.match(script, /__complete/);
        assert.match(script, /podlife kubectl-podlife/);
      }
    });
  });
});

describe('podlife explain names annotations podlife ignores', () => {
  it('a typo in a key is a note, with the key it was meant as', async () => {
    const { podlifeNotes } = await import('../src/cli/explain.js');
    const pod: V1Pod = { metadata: { name: 'job-0', namespace: 'batch', labels: { 'podlife.dev/managed': 'true' }, annotations: { 'roles.podlife.dev/proxy': 'sidecar' } }, spec: { containers: [{ name: 'app' }, { name: 'proxy' }] } };
    assert.equal(podlifeNotes(pod)[0], 'annotation roles.podlife.dev/proxy is not a podlife key and is ignored: did you mean role.podlife.dev/proxy?');
  });
});
