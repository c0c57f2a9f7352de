/**
 * The controller process ends promptly on SIGTERM, also when its API server cannot be reached
 * (a paused kube-apiserver: connections open, nothing answers) — a Deployment rollout or a node
 * drain must not wait out the pod's whole grace period for it.
 *
 * @releases newest — the controller's own shutdown against a paused API server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'mocha';
import { type ControlPlane, startControlPlane, waitFor } from '@podlife/testbed';

describe('controller shutdown', function () {
  this.timeout(120_000);
  let cp: ControlPlane;
  before(async () => {
    cp = await startControlPlane();
  });
  after(async () => {
    cp?.resumeApiServer();
    await cp?.stop();
  });

  it('exits within 4 s of SIGTERM while the API server is paused', async () => {
    const mainTs = fileURLToPath(new URL('../../../packages/controller/src/main.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      ['--import=tsx', '--conditions=@podlife/source', mainTs, `--kubeconfig=${cp.kubeconfigPath}`, '--leader-elect', '--leader-election-namespace=default', '--metrics-port=0', '--health-port=0', '--log-level=warn'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Leading: it holds the lease, so the shutdown has a lease to release over the network.
      await waitFor('the controller to take the lease', async () => {
        const lease = await cp.client.get<{ spec?: { holderIdentity?: string } }>('/apis/coordination.k8s.io/v1/namespaces/default/leases/podlife-controller').catch(() => undefined);
        return !!lease?.spec?.holderIdentity;
      }, { timeoutMs: 60_000 });
      cp.pauseApiServer();
      const began = Date.now();
      child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 10_000))]);
      const took = Date.now() - began;
      assert.notEqual(code, 'late', `still running 10 s after SIGTERM; stderr: ${stderr.slice(-2000)}`);
      assert.ok(took < 4000, `exited ${took} ms after SIGTERM`);
      assert.equal(code, 0);
    } finally {
      cp.resumeApiServer();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    }
  });
});
