/**
 * The certificates and keys of one local control plane, made fresh for every run.
 *
 * Guarantees:
 * - one ECDSA P-256 certificate authority signs the serving certificate (valid for 127.0.0.1 and
 *   localhost) and every client certificate; the API server trusts it as its client CA;
 * - a client certificate's CN is the user name and each O is a group, which is how the API server's
 *   x509 authenticator reads them (O=system:masters makes an administrator);
 * - the service-account key pair is separate from the CA, as in a real cluster;
 * - everything is PEM, ready for flags and kubeconfigs; nothing is written to disk here.
 */
import { webcrypto, generateKeyPairSync, randomBytes } from 'node:crypto';
// @peculiar/x509 looks its algorithms up through decorators, which need the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const validityMs = 7 * 24 * 3600 * 1000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface IssueOptions {
  commonName: string;
  organizations?: string[];
  /** A serving certificate (for 127.0.0.1 and localhost, plus `ips`) instead of a client one. */
  server?: boolean;
  /** More IP addresses a serving certificate is valid for. */
  ips?: string[];
}

export interface CertificateAuthority extends KeyPairPem {
  issue(opts: IssueOptions): Promise<KeyPairPem>;
}

function serial(): string {
  // A positive 16-byte serial: clear the top bit so the DER integer is not negative.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString('hex');
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function validity(): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  // Back-dated a little so that clock rounding never makes a fresh certificate "not yet valid".
  return { notBefore: new Date(now - 60_000), notAfter: new Date(now + validityMs) };
}

export async function createCertificateAuthority(commonName = 'podlife-test-ca'): Promise<CertificateAuthority> {
  const caKeys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: new x509.Name([{ CN: [commonName] }]),
    ...validity(),
    keys: caKeys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });

  async function issue(opts: IssueOptions): Promise<KeyPairPem> {
    const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const subject: x509.JsonName = [{ CN: [opts.commonName] }];
    for (const org of opts.organizations ?? []) subject.push({ O: [org] });
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([opts.server ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    ];
    if (opts.server) {
      extensions.push(new x509.SubjectAlternativeNameExtension([
        ...[...new Set(['127.0.0.1', ...(opts.ips ?? [])])].map((value) => ({ type: 'ip' as const, value })),
        { type: 'dns', value: 'localhost' },
      ]));
    }
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: new x509.Name(subject),
      issuer: caCert.subject,
      ...validity(),
      signingKey: caKeys.privateKey,
      publicKey: keys.publicKey,
      signingAlgorithm: algorithm,
      extensions,
    });
    return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
  }

  return { certPem: caCert.toString('pem'), keyPem: await privateKeyPem(caKeys.privateKey), issue };
}

/** The key pair the API server signs service-account tokens with (and verifies them by). */
export function createServiceAccountKeys(): { publicPem: string; privatePem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}
