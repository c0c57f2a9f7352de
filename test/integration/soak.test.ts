/**
 * The chaos soak's 3-minute forms (`pnpm soak -- --quick`, test/soak/) as part of the test
 * command: Jobs of every keystone kind against two leader-elected controller processes while the
 * leader is killed, the API server restarted and paused and etcd compacted, once with the
 * simulated kubelet (ephemeral strategy) and once on a real node (`--real-node`: kubelet,
 * containerd, runc, busybox containers, exec strategy). Each runs as a process of its own (it
 * starts its own control plane, node and replicas) and passes only when its table shows no stuck
 * pod, no repeated stop, no sidecar stopped before a main and no unexpected Job failure.
 *
 * @releases newest — both 3-minute soak forms once per run (ADR 0255); the 10-minute forms stay
 *   documented commands.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir, removeTempDir, startProcess } from '../support/processes.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const forms = [
  { name: 'simulated kubelet', args: ['--quick'] },
  { name: 'real node', args: ['--quick', '--real-node'] },
];

for (const form of forms) {
  describe(`keystone chaos soak, 3-minute form, ${form.name} (test/soak)`, function () {
    this.timeout(12 * 60_000);

    it('leaves no pod stuck, repeats no stop, keeps mains before sidecars and fails no Job unexpectedly under leader kills, API server restarts and pauses, and compactions', async () => {
      const dir = makeTempDir('podlife-soak-test-');
      try {
        const logPath = join(dir, 'soak.log');
        const soak = startProcess({
          name: `soak (${form.name})`,
          command: process.execPath,
          args: ['--import', 'tsx', '--conditions=@podlife/source', 'test/soak/run.ts', ...form.args],
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
