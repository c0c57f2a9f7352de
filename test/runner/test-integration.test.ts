/**
 * The integration runner's plan (scripts/test-integration.mjs): every suite declares the releases
 * it runs on, a suite that does not is refused by name before anything starts, and the plan puts
 * `every` suites on each release of the run and `newest` suites on its newest release only.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { plan, readSuiteTags, type SuiteTag } from '../../scripts/test-integration.mjs';

function suiteDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'podlife-runner-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('integration runner: where each suite runs', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('reads each suite\'s @releases tag from its header', () => {
    const dir = suiteDir({
      'a.test.ts': '/**\n * A.\n *\n * @releases every — differs by release.\n */\nit("x", () => {});\n',
      'b.test.ts': '/**\n * B.\n * @releases newest — the same everywhere.\n */\n',
      'helper.ts': '// not a suite, no tag needed\n',
    });
    dirs.push(dir);
    assert.deepEqual(readSuiteTags(dir).map((s) => [s.name, s.releases]), [['a', 'every'], ['b', 'newest']]);
  });

  it('refuses a suite without a tag, or with an unknown or a second one, naming each file', () => {
    const dir = suiteDir({
      'ok.test.ts': '/** @releases every */\n',
      'none.test.ts': '/** no tag */\n',
      'typo.test.ts': '/** @releases newset */\n',
      'two.test.ts': '/** @releases every\n * @releases newest */\n',
    });
    dirs.push(dir);
    assert.throws(() => readSuiteTags(dir), (err: Error) => {
      assert.match(err.message, /none\.test\.ts: declares no releases/);
      assert.match(err.message, /typo\.test\.ts: declares "newset"/);
      assert.match(err.message, /two\.test\.ts: declares "every", "newest"/);
      assert.doesNotMatch(err.message, /ok\.test\.ts/);
      return true;
    });
  });

  const suites: SuiteTag[] = [
    { name: 'skew', file: 'test/integration/skew.test.ts', releases: 'every', realNode: true },
    { name: 'chart', file: 'test/integration/chart.test.ts', releases: 'newest', realNode: false },
  ];

  it('puts every-suites on each release and newest-suites on the newest of the run, oldest first', () => {
    const steps = plan(['v1.37.2', 'v1.34.4'], suites);
    assert.deepEqual(steps.map((s) => [s.version, s.suites.map((x) => x.name)]), [['v1.34.4', ['skew']], ['v1.37.2', ['skew', 'chart']]]);
  });

  it('runs everything on a run of one release, and on every release with the full matrix', () => {
    assert.deepEqual(plan(['v1.34.4'], suites).map((s) => s.suites.length), [2]);
    assert.deepEqual(plan(['v1.34.4', 'v1.37.2'], suites, { full: true }).map((s) => s.suites.length), [2, 2]);
  });

  it('narrows to named suites, dropping a release with none, and refuses an unknown name', () => {
    assert.deepEqual(plan(['v1.34.4', 'v1.37.2'], suites, { only: ['chart'] }).map((s) => s.version), ['v1.37.2']);
    assert.throws(() => plan(['v1.37.2'], suites, { only: ['chrat'] }), /PODLIFE_SUITES names no suite chrat/);
  });

  it('every suite of this repository declares its releases', () => {
    const tags = readSuiteTags();
    assert.ok(tags.length >= 20, `${tags.length} suites`);
    assert.ok(tags.some((s) => s.releases === 'every') && tags.some((s) => s.releases === 'newest'));
  });
});
