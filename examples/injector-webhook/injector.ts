/**
 * A tiny sidecar injector, as a platform team would write one: pods labelled
 * `inject-proxy: "true"` get a proxy container, marked as a sidecar with podlife's helpers so
 * that it never keeps a Job pod alive, stopped with the envoy preset, and opted in to the podlife
 * webhook (which keeps a preset sidecar a container, since no native stop POSTs to its endpoint).
 *
 * The whole mutation is a list of RFC 6902 operations built by one pure function of
 * `@podlife/keystone`: `injectContainerOps` adds the container and marks it in the same patch.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { injectContainerOps, type JsonPatchOp } from '@podlife/keystone';

export const proxy: V1Container = { name: 'proxy', image: 'envoyproxy/envoy:v1.31.0', ports: [{ containerPort: 9901, name: 'envoy-admin' }] };

export function injectProxy(pod: V1Pod): JsonPatchOp[] {
  if (pod.metadata?.labels?.['inject-proxy'] !== 'true') return [];
  // Reinvocation (or a pod that already has one) must not add a second proxy.
  if (pod.spec?.containers.some((c) => c.name === proxy.name)) return [];
  return injectContainerOps(pod, proxy, { role: 'sidecar', stop: 'preset:envoy' }, { webhookOptIn: true });
}
