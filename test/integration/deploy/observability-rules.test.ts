/**
 * The alerting rules of deploy/observability checked by a real promtool (built from
 * github.com/prometheus/prometheus by scripts/go-tools.mjs): `promtool check rules` on the plain
 * rule file and the chart's copy, and `promtool test rules` on the hand-written unit tests, whose
 * input series make each alert fire and not fire. A broken expectation must fail the run.
 *
 * @releases newest — promtool on the alerting rules; no Kubernetes at all.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureGoTool } from '../../../scripts/go-tools.mjs';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dir = `${repo}deploy/observability/`;

describe('alerting rules (real promtool)', function () {
  this.timeout(120_000);
  let promtool = '';

  before(async function () {
    // The test command builds it beforehand; a single file run builds it here (minutes, once).
    this.timeout(30 * 60_000);
    promtool = (await ensureGoTool('promtool')).path;
  });

  const run = (args: string[], cwd = dir) => {
    const r = spawnSync(promtool, args, { cwd, encoding: 'utf8' });
    if (r.error) throw r.error;
    return { status: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
  };

  it('promtool check rules accepts the rule file and the chart\'s copy', () => {
    for (const file of [`${dir}podlife.rules.yaml`, `${repo}deploy/helm/podlife/files/podlife.rules.yaml`]) {
      const r = run(['check', 'rules', '--lint=all', '--lint-fatal', file]);
      assert.equal(r.status, 0, r.out);
      assert.match(r.out, /SUCCESS: 7 rules found/);
    }
  });

  it('promtool test rules: every alert fires on its failing series and stays quiet on the others', () => {
    const r = run(['test', 'rules', 'podlife.rules.test.yaml']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /SUCCESS/);
  });

  it('every alert in the rule file has a unit test that makes it fire', () => {
    const rules = [...readFileSync(`${dir}podlife.rules.yaml`, 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]);
    const tests = readFileSync(`${dir}podlife.rules.test.yaml`, 'utf8');
    const firing = new Set([...tests.matchAll(/alertname: (\w+)\n\s+exp_alerts:\n\s+- exp_labels/g)].map((m) => m[1]));
    assert.deepEqual(rules.filter((a) => !firing.has(a)), []);
  });

  it('the unit tests can fail: an alert expected where its series do not fire it is reported', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'podlife-promtool-'));
    try {
      const broken = readFileSync(`${dir}podlife.rules.test.yaml`, 'utf8')
        .replace(/rule_files:\n {2}- podlife.rules.yaml/, `rule_files:\n  - ${dir}podlife.rules.yaml`)
        .replace('      - eval_time: 3m\n        alertname: PodlifeStopsFailing\n        exp_alerts: []', '      - eval_time: 3m\n        alertname: PodlifeStopsFailing\n        exp_alerts:\n          - exp_labels: { severity: warning, strategy: exec }');
      writeFileSync(join(tmp, 'broken.test.yaml'), broken);
      const r = run(['test', 'rules', 'broken.test.yaml'], tmp);
      assert.notEqual(r.status, 0, r.out);
      assert.match(r.out, /alertname: PodlifeStopsFailing, time: 3m/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
