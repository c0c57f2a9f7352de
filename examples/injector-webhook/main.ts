/**
 * Serves the injector over HTTPS, as its Deployment would, with the certificate and key its
 * Secret mounts. The API server calls it for the pods the webhook configuration selects (see
 * README.md). It needs `@podlife/keystone` and client-node's types, nothing else.
 *
 *     TLS_CERT_FILE=tls.crt TLS_KEY_FILE=tls.key PORT=8443 npx tsx main.ts
 *
 * A mutation that throws denies the pod (`failurePolicy: 'Fail'`): a pod that should carry the
 * proxy is never admitted without it.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdmissionHandler } from '@podlife/keystone';
import { injectProxy } from './injector.js';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the path of the webhook's TLS ${name.includes('KEY') ? 'key' : 'certificate'})`);
  return value;
}

const server = https.createServer(
  { cert: readFileSync(env('TLS_CERT_FILE')), key: readFileSync(env('TLS_KEY_FILE')), minVersion: 'TLSv1.2' },
  createAdmissionHandler({ mutate: injectProxy, failurePolicy: 'Fail' }),
);
server.listen(Number(process.env.PORT ?? 8443), process.env.HOST ?? '0.0.0.0', () => {
  console.log(`injector listening on port ${(server.address() as AddressInfo).port}`);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
