/**
 * Sidecar presets: how a LifecyclePolicy recognises the sidecars injectors add and how each one
 * is stopped. Each fact (container name, image, quit endpoint, what it needs) comes from the
 * project's own documentation; the table with its sources is ADR 0270.
 *
 * Guarantees: a preset only names a container (by name or image repository) and a stop spec of
 * the annotation contract; it never chooses an image or a command.
 */

/** The sidecars a policy can name in `presets`; `well-known` names them all. */
export const SIDECAR_PRESET_NAMES = [
  'istio-proxy',
  'linkerd-proxy',
  'envoy',
  'cloud-sql-proxy',
  'daprd',
  'vault-agent',
  'consul-dataplane',
  'otel-collector',
  'fluent-bit',
] as const;
/** The name of a sidecar preset. */
export type SidecarPresetName = (typeof SIDECAR_PRESET_NAMES)[number];
/** The preset name that names every preset. */
export const WELL_KNOWN = 'well-known';

/** How a preset recognises its sidecar and stops it. */
export interface SidecarPreset {
  /** Container names its injector gives it. */
  readonly names: readonly string[];
  /** Image repository globs (`*` any run of characters) of its published images. */
  readonly images: readonly string[];
  /** Stop spec, as `stop.podlife.dev/<container>` takes it. */
  readonly stop: string;
  /** What the stop needs from the sidecar's own configuration, said by `podlife explain`. */
  readonly needs?: string;
}

/** Every sidecar preset, with the facts ADR 0270 sources. */
export const SIDECAR_PRESETS: Readonly<Record<SidecarPresetName, SidecarPreset>> = {
  'istio-proxy': { names: ['istio-proxy'], images: ['*/proxyv2'], stop: 'preset:istio' },
  'linkerd-proxy': {
    names: ['linkerd-proxy'],
    images: ['*linkerd/proxy'],
    stop: 'preset:linkerd',
    needs: 'the shutdown endpoint enabled (annotation config.linkerd.io/proxy-admin-shutdown: enabled, or LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true)',
  },
  envoy: { names: ['envoy'], images: ['*envoyproxy/envoy', '*envoyproxy/envoy-distroless'], stop: 'preset:envoy', needs: 'the admin interface on 127.0.0.1:9901' },
  'cloud-sql-proxy': { names: ['cloud-sql-proxy'], images: ['*/cloud-sql-proxy'], stop: 'preset:cloudsql-proxy', needs: 'the --quitquitquit flag (admin server on 9091)' },
  daprd: { names: ['daprd'], images: ['*daprio/daprd', '*/dapr/daprd'], stop: 'preset:dapr' },
  'vault-agent': { names: ['vault-agent'], images: [], stop: 'signal:TERM' },
  'consul-dataplane': { names: ['consul-dataplane'], images: ['*/consul-dataplane'], stop: 'signal:TERM' },
  'otel-collector': { names: ['otc-container'], images: ['*/opentelemetry-collector', '*/opentelemetry-collector-contrib', '*/opentelemetry-collector-k8s'], stop: 'signal:TERM' },
  'fluent-bit': { names: ['fluent-bit'], images: ['*/fluent-bit'], stop: 'signal:TERM' },
};

/** The presets `presets` names, `well-known` expanded, each once, in SIDECAR_PRESET_NAMES order. */
export function expandPresets(presets: readonly string[]): SidecarPresetName[] {
  const all = presets.includes(WELL_KNOWN);
  return SIDECAR_PRESET_NAMES.filter((p) => all || presets.includes(p));
}
