/**
 * Embedding podlife's keystone controller in your own controller process: your Manager, your
 * metrics and health endpoints, your other controllers beside it. Runs against the cluster of the
 * current kubeconfig context:
 *
 *   pnpm exec tsx --conditions=@podlife/source examples/custom-controller/main.ts
 */
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient, Manager, createLogger } from '@podlife/core';
import { keystoneController } from '@podlife/keystone';

const kubeConfig = new KubeConfig();
kubeConfig.loadFromDefault();
const manager = new Manager({ client: await KubeClient.fromKubeConfig(kubeConfig), logger: createLogger('my-controller'), healthPort: 8081, metricsPort: 8081, handleSignals: true });
manager.add(keystoneController(manager, {
  kubeConfig, // enables the exec strategy
  config: { keystoneLimit: 2, execCommands: { drain: ['/app/drain', '--now'] }, namespaces: ['batch'] },
}));
// ...add your own controllers to the same manager here...
await manager.start();
await manager.done;
