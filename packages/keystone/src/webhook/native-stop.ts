/**
 * What a sidecar's stop spec becomes when it turns into a native sidecar, whose stop is the
 * kubelet's (docs/adr/0211): a conversion never silently drops the stop spec.
 *
 * Guarantees:
 * - `signal:TERM` needs nothing: the kubelet stops a container with the runtime's stop signal,
 *   TERM unless the image declares another;
 * - any other signal becomes `lifecycle.stopSignal` (KEP-4960) only when the cluster says it runs
 *   ContainerStopSignals (alpha and off in every release 1.33 to 1.37; nodes do not declare it)
 *   and the pod is not a Windows pod; the API server requires `spec.os.name` next to it;
 * - `preset:`, `http:` and `exec:` have no native equivalent: a preStop `httpGet` hook sends GET
 *   from the node to the pod IP, while these POST to 127.0.0.1 inside the pod, and every preset's
 *   endpoint refuses one or the other (per preset below); a named command runs over exec;
 * - pure: the answer depends on the stop spec, the pod's OS and the option only.
 */
import type { PresetName, StopSpec } from '../annotations.js';

/** What converting a sidecar does with its stop spec: nothing more, a stop signal, or no conversion (and why). */
export type NativeStop = { readonly ok: true; readonly stopSignal?: string } | { readonly ok: false; readonly why: string };

/** Why each preset's quit endpoint cannot be reached by a preStop httpGet hook (sources: docs/adr/0211). */
const PRESET_HOOK_PROBLEM: Readonly<Record<PresetName, string>> = {
  istio: "pilot-agent's /quitquitquit answers 405 to anything but POST and 403 to callers not on loopback",
  envoy: "Envoy's admin serves /quitquitquit, a state-changing endpoint, to POST only (and is usually bound to 127.0.0.1)",
  linkerd: "the proxy's admin /shutdown answers 405 to anything but POST and 403 to callers not on loopback",
  dapr: "daprd's /v1.0/shutdown is meant to be POSTed (its GET form is deprecated), and a preStop httpGet hook can only GET",
  'cloudsql-proxy': "the v2 proxy's admin server (/quitquitquit, GET or POST in current releases, POST only in earlier ones) listens on localhost only, out of the kubelet's reach",
};

export interface NativeStopOptions {
  /** The cluster runs ContainerStopSignals on API servers and kubelets, with runtimes that honour it. Default false. */
  readonly stopSignals?: boolean;
  /** The pod's `spec.os.name`, if set. */
  readonly os?: string;
}

/** The native form of `stop` for a converted sidecar, or why there is none. */
export function nativeStop(stop: StopSpec, options: NativeStopOptions = {}): NativeStop {
  switch (stop.kind) {
    case 'signal':
      if (stop.signal === 'TERM') return { ok: true };
      if (options.os === 'windows') return { ok: false, why: `signal:${stop.signal}: a Windows pod's stop signal can only be TERM or KILL` };
      if (!options.stopSignals) {
        return {
          ok: false,
          why: `signal:${stop.signal} needs lifecycle.stopSignal (ContainerStopSignals, alpha and off by default through 1.37, which nodes do not declare); the controller's containerStopSignals setting says the cluster runs it`,
        };
      }
      return { ok: true, stopSignal: `SIG${stop.signal}` };
    case 'http': {
      const target = `POSTs to 127.0.0.1:${stop.port}${stop.path} inside the pod, and a preStop httpGet hook sends GET from the node to the pod IP`;
      if (stop.preset) return { ok: false, why: `preset:${stop.preset} ${target}: ${PRESET_HOOK_PROBLEM[stop.preset]}` };
      return { ok: false, why: `http:${stop.port}${stop.path} ${target}, which is not the same request` };
    }
    case 'exec':
      return { ok: false, why: `exec:${stop.name} runs a configured command over exec, which no native stop does` };
  }
}
