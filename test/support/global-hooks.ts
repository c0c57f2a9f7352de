/**
 * Root-level mocha hooks for the integration suites (loaded with `--file`): once every suite has
 * run, the shared control plane and the shared real cluster (if any suite started them) are stopped, and the run fails if any
 * other component is still running — a suite that forgot `stop()` on a private control plane is
 * named, and its processes are killed so that nothing outlives the run. Interrupted runs are
 * cleaned up by processes.ts.
 */
import { stopSharedControlPlane } from './control-plane.js';
import { stopSharedRealCluster } from './node.js';
import { killAllProcesses, liveProcesses } from './processes.js';

after(async function () {
  this.timeout(60_000);
  await stopSharedRealCluster();
  await stopSharedControlPlane();
  const left = liveProcesses();
  if (left.length > 0) {
    killAllProcesses();
    throw new Error(`still running after every suite (a control plane was not stopped): ${left.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}`);
  }
});
