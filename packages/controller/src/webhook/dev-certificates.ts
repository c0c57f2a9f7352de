/**
 * Certificates for running the webhook outside a cluster (tests, examples, local runs):
 * a throw-away CA and a serving certificate it signs for the given hosts.
 *
 * Not for production: in a cluster the serving certificate comes from a Secret (cert-manager
 * or similar) and the CA goes into the MutatingWebhookConfiguration's caBundle.
 */
import { webcrypto } from 'node:crypto';
// @peculiar/x509 resolves its algorithms through decorators that need the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/** A throw-away CA and a serving certificate and key it signed, as PEM. */
export interface DevCertificates {
  /** PEM of the CA certificate: the caBundle (base64 of this) a webhook configuration trusts. */
  caPem: string;
  /** PEM of the serving certificate. */
  certPem: string;
  /** PEM (PKCS#8) of the serving certificate's private key. */
  keyPem: string;
}

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

/** `hosts`: DNS names and IP addresses the serving certificate is valid for. */
export async function devCertificates(
  hosts: readonly string[] = ['127.0.0.1', 'localhost'],
  opts: { validForMs?: number; nowMs?: number } = {},
): Promise<DevCertificates> {
  const crypto = webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1];
  const now = opts.nowMs ?? Date.now();
  const notBefore = new Date(now - 60_000);
  const notAfter = new Date(now + (opts.validForMs ?? 24 * 3600_000));
  const caKeys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: randomSerial(),
      name: 'CN=podlife development CA',
      notBefore,
      notAfter,
      keys: caKeys,
      signingAlgorithm: algorithm,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ],
    },
    crypto,
  );
  const leafKeys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const names = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h }));
  const leaf = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject: `CN=${hosts[0] ?? 'podlife-webhook'}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: leafKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: algorithm,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names),
      ],
    },
    crypto,
  );
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey);
  return { caPem: ca.toString('pem'), certPem: leaf.toString('pem'), keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
}

function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(8));
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return Buffer.from(bytes).toString('hex');
}
