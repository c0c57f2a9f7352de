/**
 * A tiny sidecar injector, as a platform team would write one: pods labelled
 * `inject-proxy: "true"` get a proxy container, marked as a sidecar with podlife's helpers so
 * that it never keeps a Job pod alive, stopped with the envoy preset, and opted in to the podlife
 * webhook (which may then turn it into a native sidecar).
 *
 * The whole mutation is a list of RFC 6902 operations built by pure functions; the AdmissionReview
 * plumbing (uid echo, base64 patch, malformed reviews) is keystone's `handleAdmissionReview`.
 */
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { jsonPointer, type JsonPatchOp } from '@podlife/core';
import { handleAdmissionReview, markContainerOps } from '@podlife/keystone';
import { WEBHOOK_OPT_IN_LABEL, WEBHOOK_OPT_IN_VALUE, type WebhookHandler } from '@podlife/controller';

const proxy: V1Container = { name: 'proxy', image: 'envoyproxy/envoy:v1.31.0', ports: [{ containerPort: 9901, name: 'envoy-admin' }] };

export function injectProxy(pod: V1Pod): JsonPatchOp[] {
  if (pod.metadata?.labels?.['inject-proxy'] !== 'true') return [];
  if (pod.spec?.containers.some((c) => c.name === proxy.name)) return [];
  // The marking helper checks the container exists, so it sees the pod as it will be.
  const injected: V1Pod = { ...pod, spec: { ...pod.spec, containers: [...(pod.spec?.containers ?? []), proxy] } };
  const label: JsonPatchOp = pod.metadata?.labels
    ? { op: 'add', path: jsonPointer('metadata', 'labels', WEBHOOK_OPT_IN_LABEL), value: WEBHOOK_OPT_IN_VALUE }
    : { op: 'add', path: '/metadata/labels', value: { [WEBHOOK_OPT_IN_LABEL]: WEBHOOK_OPT_IN_VALUE } };
  const marks = markContainerOps(injected, proxy.name, { role: 'sidecar', stop: 'preset:envoy' });
  return [{ op: 'add', path: '/spec/containers/-', value: proxy }, ...marks, label];
}

/** The `/inject` route for the controller's TLS server stack (or any node:https server). */
export const injectRoute: WebhookHandler = (body) => {
  let review: unknown;
  try {
    review = JSON.parse(body.toString('utf8'));
  } catch {
    return { status: 400, body: { error: 'body is not JSON' } };
  }
  const out = handleAdmissionReview(review, { mutate: (pod) => injectProxy(pod) });
  return out.httpStatus === 200 ? { status: 200, body: out.review } : { status: 400, body: { error: out.error } };
};
