/**
 * One 3-minute form of the chaos soak as an integration suite: `test/soak/run.ts --quick` (and the
 * form's own arguments) as a process of its own, which starts its own control plane, node and
 * replicas; the suite passes only when the soak exits 0, and prints the soak's table either way.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, removeTempDir, startProcess } from '@podlife/testbed';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export function describeQuickSoak(form: { name: string; args: string[] }): void {
  describe(`keystone chaos soak, 3-minute form, ${form.name} (test/soak)`, function () {
    this.timeout(12 * 60_000);

    it('leaves no pod stuck, repeats no stop, keeps mains before sidecars and fails no Job unexpectedly under leader kills, API server restarts and pauses, and compactions', async () => {
      const dir = makeTempDir('podlife-soak-test-');
      try {
        const logPath = join(dir, 'soak.log');
        const soak = startProcess({
          name: `soak (${form.name})`,
          command: process.execPath,
          args: ['--import', 'tsx', '--conditions=@podlife/source', 'test/soak/run.ts', '--quick', ...form.args],
          logPath,
          cwd: repoRoot,
        });
        const exit = await soak.exited;
        const output = readFileSync(logPath, 'utf8');
        const table = output.slice(Math.max(0, output.indexOf('== fault schedule')));
        console.log(table.replace(/^/gm, '      '));
        assert.equal(exit.code, 0, `the soak exited ${exit.signal ?? `with code ${exit.code}`}:\n${table || output.slice(-4000)}`);
      } finally {
        removeTempDir(dir);
      }
    });
  });
}
