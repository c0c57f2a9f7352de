/**
 * The `/mutate-pods` route: keystone's AdmissionReview handler over the server's bounded body.
 *
 * Guarantees: a body that is not JSON, or not an AdmissionReview v1 with a uid, is answered 400
 * with the reason; a review is always answered 200 with its uid (allowed, with the
 * native-sidecar patch when the kubelets on every node support it); nothing throws.
 */
import type { V1Node } from '@kubernetes/client-node';
import { admissionRoute, lifecycleMutator, type LifecycleOptions, type WebhookHandler } from '@podlife/keystone';

/** The `/mutate-pods` route: keystone's lifecycle mutator, checked against the nodes' kubelets. */
export function mutatePodsHandler(nodes: () => readonly V1Node[], options: LifecycleOptions = {}): WebhookHandler {
  return admissionRoute({ mutate: lifecycleMutator(nodes, options) });
}

/** Keeps only what the kubelet-version check reads from a Node. */
export function keepKubeletVersion(node: V1Node): V1Node {
  return {
    metadata: { name: node.metadata?.name, uid: node.metadata?.uid, resourceVersion: node.metadata?.resourceVersion },
    status: node.status?.nodeInfo ? { nodeInfo: node.status.nodeInfo } : {},
  };
}
