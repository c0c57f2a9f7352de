/**
 * Where the demo starts the podlife controller against the local control plane: the same
 * ControllerApp the `podlife-controller` binary runs, in this process. Stops use ephemeral
 * containers, because the simulated kubelet cannot run pods/exec (a real kubelet would).
 */
import { createLogger } from '@podlife/core';
import { ControllerApp, defaultConfig, parseFlags } from '@podlife/controller';
import type { ControlPlane } from '../../test/support/control-plane.js';

export interface RunningController {
  readonly description: string;
  stop(): Promise<void>;
}

export async function startPodlife(cp: ControlPlane, _log: (line: string) => void): Promise<RunningController | undefined> {
  const parsed = parseFlags(['--controllers=keystone', '--metrics-port=0', '--health-port=0']);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  const app = new ControllerApp({
    flags: parsed.flags,
    config: { ...defaultConfig, defaultStrategy: 'ephemeral', ephemeralContainerImage: 'busybox:1.36' },
    client: cp.client,
    logger: createLogger('podlife-controller', { level: 'warn' }),
    bindAddress: '127.0.0.1',
  });
  await app.start();
  return { description: 'keystone controller (stops by ephemeral container)', stop: () => app.stop() };
}
