/**
 * A readiness-gate controller in a dozen lines: pods that list `example.com/warmed-up` in
 * `spec.readinessGates` get no traffic until their containers have run for WARM_UP_MS.
 *
 *     KUBECONFIG=... tsx --conditions=@podlife/source examples/readiness-gate/main.ts
 */
import { KubeClient, Manager, createLogger } from '@podlife/core';
import { ReadinessGate, firstContainerStartMs } from '@podlife/pod-conditions';

const warmUpMs = Number(process.env.WARM_UP_MS ?? 30_000);
const manager = new Manager({ client: await KubeClient.fromDefault(), logger: createLogger('readiness-gate'), handleSignals: true });

new ReadinessGate({
  conditionType: 'example.com/warmed-up',
  evaluate(pod) {
    const started = firstContainerStartMs(pod);
    if (started === undefined) return { status: false, reason: 'NotStarted' };
    const left = started + warmUpMs - Date.now();
    // A stable message: a countdown would rewrite the condition on every evaluation.
    if (left > 0) return { status: false, reason: 'WarmingUp', message: `warm-up of ${warmUpMs} ms`, requeueAfterMs: left };
    return { status: true, reason: 'WarmedUp' };
  },
}).register(manager);

await manager.start();
await manager.done;
