/**
 * Where the demo starts the podlife controller against the local control plane.
 *
 * Until the controller can be embedded here, this returns undefined and the demo says so: it then
 * shows what Kubernetes alone does with the Job, and nothing else.
 */
import type { ControlPlane } from '../../test/support/control-plane.js';

export interface RunningController {
  readonly description: string;
  stop(): Promise<void>;
}

export async function startPodlife(_cp: ControlPlane, _log: (line: string) => void): Promise<RunningController | undefined> {
  return undefined;
}
