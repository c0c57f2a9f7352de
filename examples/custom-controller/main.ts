/**
 * Embedding podlife's keystone controller in your own controller process: your Manager, your
 * metrics and health endpoints, your other controllers beside it. Runs against the cluster of the
 * current kubeconfig context (KUBECONFIG, ~/.kube/config or in-cluster), like kubectl:
 *
 *     npx tsx main.ts                         # health and metrics on :8081
 *     HEALTH_PORT=9090 npx tsx main.ts
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, Manager, createLogger } from '@podlife/core';
import { keystoneController } from '@podlife/keystone';

const port = Number(process.env.HEALTH_PORT ?? 8081);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const manager = new Manager({ client: await KubeClient.fromKubeConfig(kubeConfig), logger: createLogger('my-controller'), healthPort: port, metricsPort: port, handleSignals: true });
// The factory adds the controller to the manager (and returns it): no manager.add.
// Stops over pods/exec reach the manager's client's own server with its credentials (exec: false turns that off).
keystoneController(manager, {
  config: { keystoneLimit: 2, execCommands: { drain: ['/app/drain', '--now'] }, namespaces: ['batch'] },
});
// ...add your own controllers to the same manager here...
await manager.start();
console.log(`my-controller started; health and metrics on ${manager.url('/healthz')}`);
await manager.done;
