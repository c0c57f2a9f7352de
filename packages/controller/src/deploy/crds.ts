/**
 * The CustomResourceDefinitions the controller's own code defines, rendered as the files under
 * deploy/crds/ and the chart's crds/ (the NodeReadinessRule one is rendered by node-readiness's
 * own script and read from deploy/crds/).
 */
import { stringify } from 'yaml';
import { lifecyclePolicyCrd } from '@podlife/keystone';

export const POLICY_CRD_FILE = 'lifecyclepolicies.yaml';

/** deploy/crds/lifecyclepolicies.yaml's text. */
export function policyCrdYaml(): string {
  const header = '# Generated from packages/keystone/src/policy/crd.ts by packages/controller/scripts/render-deploy.ts; edit the source, not this file.\n';
  return header + stringify(lifecyclePolicyCrd, { lineWidth: 0 });
}
