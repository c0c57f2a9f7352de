/**
 * The opt-in Node CREATE webhook of node-readiness (docs/adr/0274): its own
 * MutatingWebhookConfiguration, so installing it is a choice (deploy/node-webhook.yaml is not in
 * kustomization.yaml; the chart renders it with `webhook.nodes: true`).
 *
 * Guarantees: the entry fails open (`Ignore`, the shared 2 s timeout), sees only Node CREATE, and
 * never control-plane nodes (objectSelector; the handler checks their taints too).
 */
import type { NodeReadinessControllers, RuleSet } from '@podlife/node-readiness';
import { ControlPlaneKeys } from '@podlife/node-readiness';
import type { DeployOptions, KubeManifest } from './manifests.js';
import { APP_LABELS, SERVICE_NAME, WEBHOOK_CERTIFICATE, WEBHOOK_TIMEOUT_SECONDS } from './manifests.js';

/** The route the Node webhook calls. */
export const NODE_WEBHOOK_PATH = '/mutate-nodes';
/** The name of its MutatingWebhookConfiguration. */
export const NODE_WEBHOOK_NAME = 'podlife-node-readiness';

/** The rules in force, once the controller's rule cache has synced; before that, undefined. */
export function nodeRuleSet(controllers: NodeReadinessControllers | undefined): RuleSet | undefined {
  if (!controllers?.fleet.rules.hasSynced()) return undefined;
  return controllers.fleet.ruleSet();
}

/** The Node CREATE entry; `clientConfig` is a Service in a cluster or a URL outside one (tests). */
export function nodeWebhookEntry(clientConfig: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'nodes.readiness.podlife.dev',
    admissionReviewVersions: ['v1'],
    clientConfig,
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'], scope: 'Cluster' }],
    // A node must always be able to join: without the controller it joins untainted, as it would without the webhook.
    failurePolicy: 'Ignore',
    objectSelector: { matchExpressions: ControlPlaneKeys.map((key) => ({ key, operator: 'DoesNotExist' })) },
    sideEffects: 'None',
    timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS,
    reinvocationPolicy: 'Never',
    matchPolicy: 'Equivalent',
  };
}

/** Its MutatingWebhookConfiguration: one entry, the CA injected by cert-manager when it is used. */
export function nodeWebhookManifests(o: DeployOptions): KubeManifest[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: NODE_WEBHOOK_NAME, labels: APP_LABELS, annotations: { 'cert-manager.io/inject-ca-from': `${o.namespace}/${WEBHOOK_CERTIFICATE}` } },
      webhooks: [nodeWebhookEntry({ service: { namespace: o.namespace, name: SERVICE_NAME, path: NODE_WEBHOOK_PATH, port: 443 } })],
    },
  ];
}
