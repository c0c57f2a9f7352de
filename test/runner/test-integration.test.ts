/**
 * The integration runner's plan (scripts/test-integration.mjs): every suite lives in a folder
 * that says what it runs on and declares the releases it runs on, a suite that does not is refused
 * by name before anything starts, and the plan puts `every` suites on each release of the run and
 * `newest` suites on its newest release only.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { plan, readSuiteTags, type SuiteTag } from '../../scripts/test-integration.mjs';

function suiteDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'podlife-runner-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('integration runner: where each suite runs', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('reads each suite\'s @releases tag from its header', () => {
    const dir = suiteDir({
      'api/a.test.ts': '/**\n * A.\n *\n * @releases every — differs by release.\n */\nit("x", () => {});\n',
      'deploy/b.test.ts': '/**\n * B.\n * @releases newest — the same everywhere.\n */\n',
      'api/helper.ts': '// not a suite, no tag needed\n',
    });
    dirs.push(dir);
    assert.deepEqual(readSuiteTags(dir).map((s) => [s.name, s.folder, s.releases]), [['a', 'api', 'every'], ['b', 'deploy', 'newest']]);
  });

  it('puts node/ suites and the ones tagged @real-node in the node lane, and refuses an untagged one starting a node elsewhere', () => {
    const dir = suiteDir({
      'node/n.test.ts': '/** @releases every */\n',
      'soak/s.test.ts': '/** @releases newest\n * @real-node — its child process starts the node. */\n',
      'api/a.test.ts': '/** @releases newest */\nimport { SimulatedKubelet } from "@podlife/testbed";\n',
    });
    dirs.push(dir);
    assert.deepEqual(readSuiteTags(dir).map((s) => [s.name, s.realNode]), [['a', false], ['n', true], ['s', true]]);
    mkdirSync(join(dir, 'deploy'));
    writeFileSync(join(dir, 'deploy', 'd.test.ts'), '/** @releases newest */\nconst node = await startNode(cp);\n');
    assert.throws(() => readSuiteTags(dir), /deploy\/d\.test\.ts: starts a real node, so it runs in the node lane: move it to node\/, or say `@real-node`/);
  });

  it('refuses a suite outside the folders, or with the name of another, naming each file', () => {
    const dir = suiteDir({
      'loose.test.ts': '/** @releases every */\n',
      'misc/other.test.ts': '/** @releases every */\n',
      'api/twice.test.ts': '/** @releases every */\n',
      'node/twice.test.ts': '/** @releases every */\n',
    });
    dirs.push(dir);
    assert.throws(() => readSuiteTags(dir), (err: Error) => {
      assert.match(err.message, /loose\.test\.ts: a suite lives in one of test\/integration\/api\/, node\/, deploy\/, soak\//);
      assert.match(err.message, /misc\/other\.test\.ts: a suite lives in one of/);
      assert.match(err.message, /node\/twice\.test\.ts: its name is also api\/twice\.test\.ts's/);
      return true;
    });
  });

  it('refuses a suite without a tag, or with an unknown or a second one, naming each file', () => {
    const dir = suiteDir({
      'api/ok.test.ts': '/** @releases every */\n',
      'api/none.test.ts': '/** no tag */\n',
      'node/typo.test.ts': '/** @releases newset */\n',
      'soak/two.test.ts': '/** @releases every\n * @releases newest */\n',
    });
    dirs.push(dir);
    assert.throws(() => readSuiteTags(dir), (err: Error) => {
      assert.match(err.message, /api\/none\.test\.ts: declares no releases/);
      assert.match(err.message, /node\/typo\.test\.ts: declares "newset"/);
      assert.match(err.message, /soak\/two\.test\.ts: declares "every", "newest"/);
      assert.doesNotMatch(err.message, /ok\.test\.ts/);
      return true;
    });
  });

  const suites: SuiteTag[] = [
    { name: 'skew', folder: 'node', file: 'test/integration/node/skew.test.ts', releases: 'every', realNode: true },
    { name: 'chart', folder: 'deploy', file: 'test/integration/deploy/chart.test.ts', releases: 'newest', realNode: false },
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

  it('narrows to a folder named with a trailing slash, and refuses an unknown folder', () => {
    assert.deepEqual(plan(['v1.34.4', 'v1.37.2'], suites, { only: ['node/'] }).map((s) => [s.version, s.suites.map((x) => x.name)]), [['v1.34.4', ['skew']], ['v1.37.2', ['skew']]]);
    assert.deepEqual(plan(['v1.37.2'], suites, { only: ['deploy/', 'skew'] }).map((s) => s.suites.map((x) => x.name)), [['skew', 'chart']]);
    assert.throws(() => plan(['v1.37.2'], suites, { only: ['soak/'] }), /PODLIFE_SUITES names no suite soak\/; .*folders: node\/, deploy\//);
  });

  it('every suite of this repository declares its releases', () => {
    const tags = readSuiteTags();
    assert.ok(tags.length >= 20, `${tags.length} suites`);
    assert.ok(tags.some((s) => s.releases === 'every') && tags.some((s) => s.releases === 'newest'));
    assert.deepEqual([...new Set(tags.map((s) => s.folder))].sort(), ['api', 'deploy', 'node', 'soak']);
  });
});
