/**
 * The `/mutate-pods` route: keystone's AdmissionReview handler over the server's bounded body.
 *
 * Guarantees: a body that is not JSON, or not an AdmissionReview v1 with a uid, is answered 400
 * with the reason; a review is always answered 200 with its uid (allowed, with the
 * native-sidecar patch when the kubelets on every node that may run the pod support it, and
 * RestartPod's restart rule when they all declare it); nothing throws.
 */
import type { V1Node } from '@kubernetes/client-node';
import { admissionRoute, lifecycleMutator, withPolicies, type LifecycleOptions, type PolicySource, type WebhookHandler } from '@podlife/keystone';

/**
 * The `/mutate-pods` route: keystone's lifecycle mutator, checked against the nodes' kubelets,
 * with the lifecycle policies of `policies` applied first when given.
 */
export function mutatePodsHandler(nodes: () => readonly V1Node[], options: LifecycleOptions & { stopSignals?: boolean } = {}, policies?: PolicySource): WebhookHandler {
  const mutate = lifecycleMutator(nodes, options);
  return admissionRoute({ mutate: policies ? withPolicies(mutate, policies) : mutate });
}

/** Keeps only what the webhook reads from a Node: its labels (nodeSelector), kubelet version and declared features. */
export function keepKubeletVersion(node: V1Node): V1Node {
  const m = node.metadata;
  const st = node.status;
  return {
    metadata: { name: m?.name, uid: m?.uid, resourceVersion: m?.resourceVersion, ...(m?.labels ? { labels: m.labels } : {}) },
    status: { ...(st?.nodeInfo ? { nodeInfo: st.nodeInfo } : {}), ...(st?.declaredFeatures ? { declaredFeatures: st.declaredFeatures } : {}) },
  };
}
