/**
 * Where a generated manifest lives on the API server, for suites that apply podlife's manifests
 * (plain or rendered by the chart) to a real one.
 */
import { resourcePath } from '@podlife/core';

/** What every manifest has: enough to find its REST path. */
export interface ManifestRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

const RESOURCES: Readonly<Record<string, string>> = {
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Deployment: 'deployments',
  Service: 'services',
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  ValidatingAdmissionPolicy: 'validatingadmissionpolicies',
  ValidatingAdmissionPolicyBinding: 'validatingadmissionpolicybindings',
  CustomResourceDefinition: 'customresourcedefinitions',
  PriorityClass: 'priorityclasses',
  PodDisruptionBudget: 'poddisruptionbudgets',
  NetworkPolicy: 'networkpolicies',
};

/** The object's REST path; throws naming the kind when it is not one podlife ships. */
export function manifestPath(m: ManifestRef): string {
  const resource = RESOURCES[m.kind];
  if (!resource) throw new Error(`no resource known for ${m.kind}`);
  const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : [undefined, m.apiVersion];
  return resourcePath({ group, version: version as string, resource, namespace: m.metadata.namespace, name: m.metadata.name });
}
