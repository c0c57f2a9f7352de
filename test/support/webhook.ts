/**
 * A webhook served by a controller in this process and called by the real API server over TLS:
 * a certificate for 127.0.0.1 written to a folder of its own, for the controller's
 * `--tls-cert-file`/`--tls-key-file`, and the MutatingWebhookConfiguration (the shipped entry,
 * `webhookEntry`) that sends pods of the given namespaces to it. `remove()` deletes the
 * configuration and the folder; it is safe after a failed start and when called twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeClient } from '@podlife/core';
import { devCertificates, webhookEntry } from '@podlife/controller';

export interface LocalWebhook {
  /** The MutatingWebhookConfiguration's name. */
  readonly name: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** The base64 PEM of the CA that signed the certificate, for a configuration of one's own. */
  readonly caBundle: string;
  /** Points the API server's `/mutate-pods` calls for pods of `namespaces` at `port` on 127.0.0.1. */
  register(port: number, namespaces: readonly string[]): Promise<void>;
  /** Deletes the configuration (when registered) and the certificate folder. */
  remove(): Promise<void>;
}

const CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

export async function localWebhook(client: KubeClient, name: string): Promise<LocalWebhook> {
  const certs = await devCertificates(['127.0.0.1']);
  const dir = mkdtempSync(join(tmpdir(), `${name}-tls-`));
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  writeFileSync(certFile, certs.certPem);
  writeFileSync(keyFile, certs.keyPem);
  let registered = false;
  return {
    name,
    certFile,
    keyFile,
    caBundle: Buffer.from(certs.caPem).toString('base64'),
    async register(port, namespaces) {
      const clientConfig = { url: `https://127.0.0.1:${port}/mutate-pods`, caBundle: Buffer.from(certs.caPem).toString('base64') };
      await client.create(CONFIGURATIONS, { metadata: { name }, webhooks: [webhookEntry(clientConfig, { namespace: 'podlife-system', namespaces: [...namespaces] })] });
      registered = true;
    },
    async remove() {
      if (registered) await client.delete(`${CONFIGURATIONS}/${name}`).catch(() => undefined);
      registered = false;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
