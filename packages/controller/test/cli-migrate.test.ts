import assert from 'node:assert/strict';
import sinon from 'sinon';
import { ApiError } from '@podlife/core';
import { NrcFinalizer, planNrcMigration } from '@podlife/node-readiness';
import type { NrcRule } from '@podlife/node-readiness';
import { parseCommandLine } from '../src/cli/args.js';
import { applyPlan, renderPlan } from '../src/cli/migrate.js';

const nrc = (name: string, spec: Record<string, unknown> = {}): NrcRule => ({
  apiVersion: 'readiness.node.x-k8s.io/v1alpha1',
  kind: 'NodeReadinessRule',
  metadata: { name, uid: `uid-${name}`, resourceVersion: '4', finalizers: [NrcFinalizer] },
  spec: {
    conditions: [{ type: 'example.com/NetworkReady', requiredStatus: 'True' }],
    enforcementMode: 'continuous',
    taint: { key: `readiness.k8s.io/${name}`, effect: 'NoSchedule' },
    nodeSelector: { matchLabels: { pool: name } },
    ...spec,
  },
});

describe('podlife migrate nrc', () => {
  describe('command line', () => {
    it('a dry run unless --apply', () => {
      assert.deepEqual(parseCommandLine(['migrate', 'nrc']), { command: 'migrate-nrc', apply: false, output: 'text' });
      assert.deepEqual(parseCommandLine(['migrate', 'nrc', '--apply', '-o', 'json']), { command: 'migrate-nrc', apply: true, output: 'json' });
    });
    it('names what it migrates from', () => {
      assert.match((parseCommandLine(['migrate']) as { message: string }).message, /podlife migrate nrc/);
      assert.match((parseCommandLine(['migrate', 'kyverno']) as { message: string }).message, /"kyverno": unknown/);
    });
    it('--apply means nothing elsewhere and is refused there', () => {
      assert.match((parseCommandLine(['nodes', '--apply']) as { message: string }).message, /--apply: only for podlife migrate nrc/);
    });
  });

  describe('the plan as printed', () => {
    it('dry run: each change, each refusal with its fields, and how to apply', () => {
      const bad = nrc('bad', { gracePeriod: '1m' });
      const text = renderPlan(planNrcMigration([nrc('net'), bad], []), false);
      assert.match(text, /^create {3}net: create NodeReadinessRule net/m);
      assert.match(text, /^unlock {3}net: remove finalizer readiness\.node\.x-k8s\.io\/cleanup-taints/m);
      assert.match(text, /^REFUSED {2}bad: not migrated, nothing of it is applied\n {11}spec\.gracePeriod: podlife does not know this field/m);
      assert.match(text, /dry run: 2 change\(s\) above, none made; run again with --apply/);
    });
    it('nothing to change, and no NRC rules at all, say so', () => {
      assert.equal(renderPlan({ steps: [{ op: 'up-to-date', nrcRule: 'net', message: 'already migrated to podlife rule net' }], changes: 0 }, false).split('\n').at(-1), 'nothing to change');
      assert.match(renderPlan({ steps: [], changes: 0 }, true), /nothing to migrate/);
    });
  });

  describe('applying', () => {
    it('creates the podlife rule, then unlocks the NRC rule under its resourceVersion; reports the refused one in a Warning Event', async () => {
      const client = { create: sinon.stub().resolves({}), patch: sinon.stub().resolves({}) };
      const events = { event: sinon.stub().resolves() };
      const rules = [nrc('net'), nrc('bad', { gracePeriod: '1m' })];
      const failed = await applyPlan(client, planNrcMigration(rules, []), rules, events);
      assert.deepEqual(failed, []);
      assert.ok(client.create.calledBefore(client.patch));
      assert.equal(client.create.firstCall.args[0], '/apis/readiness.podlife.dev/v1alpha1/nodereadinessrules');
      const [path, ops] = client.patch.firstCall.args as [string, unknown[]];
      assert.equal(path, '/apis/readiness.node.x-k8s.io/v1alpha1/nodereadinessrules/net');
      assert.deepEqual(ops, [{ op: 'test', path: '/metadata/resourceVersion', value: '4' }, { op: 'replace', path: '/metadata/finalizers', value: [] }]);
      const [regarding, type, reason, note] = events.event.firstCall.args as [NrcRule, string, string, string];
      assert.deepEqual([regarding.metadata?.name, regarding.kind, type, reason], ['bad', 'NodeReadinessRule', 'Warning', 'NotMigrated']);
      assert.match(note, /spec\.gracePeriod/);
    });
    it('a podlife rule that could not be created leaves the NRC finalizer in place', async () => {
      const client = { create: sinon.stub().rejects(new ApiError(403, 'Forbidden', 'forbidden', undefined)), patch: sinon.stub().resolves({}) };
      const failed = await applyPlan(client, planNrcMigration([nrc('net')], []), [nrc('net')]);
      assert.equal(client.patch.callCount, 0);
      assert.match(failed[0] ?? '', /net: could not create its podlife rule/);
    });
  });
});
