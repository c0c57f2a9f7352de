/**
 * The Jobs the real-node benchmark runs: the same two busybox containers for every strategy, an
 * `app` that works a few seconds and exits 0 and a `proxy` that runs until SIGTERM and exits 0,
 * arranged the way each strategy needs them.
 *
 * - `native`: the floor. proxy is a native sidecar written by hand (an init container with
 *   `restartPolicy: Always`); the kubelet alone ends it once app has exited.
 * - `webhook`: proxy in spec.containers with the role annotation and the admission opt-in label;
 *   podlife's webhook turns it into a native sidecar at creation.
 * - `exec`, `ephemeral`: proxy in spec.containers with the role annotation; the keystone
 *   controller stops it (rule S) with `kill -s TERM 1` over pods/exec, or from an ephemeral
 *   container targeting it.
 *
 * Every pod runs as a non-root uid: an ephemeral stop container signals its target as the
 * target's own uid (docs/adr/0093).
 */
import type { V1Container, V1Job } from '@kubernetes/client-node';
import { WEBHOOK_OPT_IN_LABEL, WEBHOOK_OPT_IN_VALUE } from '@podlife/controller';

export type Strategy = 'native' | 'exec' | 'ephemeral' | 'webhook';
export const STRATEGIES: readonly Strategy[] = ['native', 'exec', 'ephemeral', 'webhook'];

export const LABEL_STRATEGY = 'bench.podlife.dev/strategy';
export const LABEL_WAVE = 'bench.podlife.dev/wave';

/** Exits 0 on SIGTERM at once: `sleep & wait` lets the shell run its trap when the signal lands. */
const PROXY_SCRIPT = "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done";

export function benchJob(opts: { strategy: Strategy; name: string; wave: number; image: string; appSeconds: number }): V1Job {
  const { strategy, image } = opts;
  const app: V1Container = { name: 'app', image, imagePullPolicy: 'Never', command: ['sleep', opts.appSeconds.toFixed(1)] };
  const proxy: V1Container = { name: 'proxy', image, imagePullPolicy: 'Never', command: ['sh', '-c', PROXY_SCRIPT] };
  const labels: Record<string, string> = { [LABEL_STRATEGY]: strategy, [LABEL_WAVE]: String(opts.wave) };
  if (strategy === 'webhook') labels[WEBHOOK_OPT_IN_LABEL] = WEBHOOK_OPT_IN_VALUE;
  const annotations: Record<string, string> = strategy === 'native' ? {} : { 'role.podlife.dev/proxy': 'sidecar', 'stop.podlife.dev/proxy': 'signal:TERM' };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: opts.name, labels },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { labels, annotations },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: 30,
          securityContext: { runAsNonRoot: true, runAsUser: 65532 },
          ...(strategy === 'native'
            ? { initContainers: [{ ...proxy, restartPolicy: 'Always' }], containers: [app] }
            : { containers: [app, proxy] }),
        },
      },
    },
  };
}
