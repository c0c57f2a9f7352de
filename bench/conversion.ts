/**
 * Whether an AdmissionReview answer converts a sidecar: its base64 JSON patch moves a container
 * from `spec.containers` to `spec.initContainers`. The webhook benchmarks measure that path, so
 * both check every answer they rely on: a stop spec without a native form (a preset, since
 * ADR 0211) leaves the sidecar where it is, and the handler then does far less (ADR 0235).
 */
export function convertsSidecar(patch: string | undefined): boolean {
  if (!patch) return false;
  const ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as { op: string; path: string; from?: string }[];
  return ops.some((o) => o.op === 'move' && o.from?.startsWith('/spec/containers/') === true && o.path.startsWith('/spec/initContainers/'));
}
