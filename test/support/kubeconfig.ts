/**
 * Kubeconfig files for client-certificate identities.
 *
 * Guarantees: the file is self-contained (certificates inlined as base64 data), is JSON (which
 * kubectl and client-node read as YAML) and has exactly one cluster, user and current context.
 */
import { writeFileSync } from 'node:fs';

export interface KubeconfigInput {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  user: string;
  clusterName?: string;
}

function b64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}

export function kubeconfigJson(input: KubeconfigInput): string {
  const cluster = input.clusterName ?? 'podlife-local';
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) } }],
    users: [{ name: input.user, user: { 'client-certificate-data': b64(input.certPem), 'client-key-data': b64(input.keyPem) } }],
    contexts: [{ name: `${input.user}@${cluster}`, context: { cluster, user: input.user } }],
    'current-context': `${input.user}@${cluster}`,
    preferences: {},
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export function writeKubeconfig(path: string, input: KubeconfigInput): string {
  writeFileSync(path, kubeconfigJson(input), { mode: 0o600 });
  return path;
}
