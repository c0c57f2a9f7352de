/**
 * Where the demo starts the podlife controller against the local control plane: the same
 * ControllerApp the `podlife-controller` binary runs, in this process.
 *
 * On a real node it runs with the shipped default strategy (`auto`: `kill` inside the sidecar over
 * pods/exec, an ephemeral container only where exec is impossible). The simulated kubelet cannot
 * serve pods/exec, so there stops use ephemeral containers, which it understands.
 */
import { createLogger } from '@podlife/core';
import { ControllerApp, defaultConfig, parseFlags, type ControllerConfig } from '@podlife/controller';
import type { ControlPlane } from '@podlife/testbed';

export interface RunningController {
  readonly description: string;
  stop(): Promise<void>;
}

export async function startPodlife(cp: ControlPlane, where: { real: boolean; stopImage: string }): Promise<RunningController> {
  const parsed = parseFlags(['--controllers=keystone', '--metrics-port=0', '--health-port=0']);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  const config: ControllerConfig = where.real
    ? { ...defaultConfig, ephemeralContainerImage: where.stopImage }
    : { ...defaultConfig, defaultStrategy: 'ephemeral', ephemeralContainerImage: where.stopImage };
  const app = new ControllerApp({
    flags: parsed.flags,
    config,
    client: cp.client,
    // On the real node stops go over pods/exec with the client's own credentials; the simulated
    // kubelet cannot exec, so there they use ephemeral containers only.
    ...(where.real ? {} : { kubeConfig: false as const }),
    logger: createLogger('podlife-controller', { level: 'warn' }),
    bindAddress: '127.0.0.1',
  });
  await app.start();
  const description = where.real
    ? 'keystone controller, default strategy (exec: `kill` in the sidecar over pods/exec)'
    : 'keystone controller (stops by ephemeral container: the simulated kubelet cannot exec)';
  return { description, stop: () => app.stop() };
}
