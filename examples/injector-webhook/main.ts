/**
 * Runs the injector against the local control plane: the API server calls it over TLS, then the
 * podlife webhook converts the injected sidecar to a native one (every simulated node runs a
 * kubelet >= 1.29), and the resulting pod is printed.
 *
 *   pnpm exec tsx --conditions=@podlife/source examples/injector-webhook/main.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { createLogger } from '@podlife/core';
import { ControllerApp, WebhookServer, devCertificates, parseFlags, defaultConfig, webhookEntry } from '@podlife/controller';
import { startControlPlane } from '../../test/support/control-plane.js';
import { SimulatedKubelet } from '../../test/support/kubelet.js';
import { injectRoute } from './injector.js';

const cp = await startControlPlane({ log: (l) => console.log(`  ${l}`) });
const dir = mkdtempSync(join(tmpdir(), 'podlife-injector-'));
const kubelet = new SimulatedKubelet(cp.client, { nodeNames: ['node-1'] });
let injector: WebhookServer | undefined;
let podlife: ControllerApp | undefined;
try {
  await kubelet.start();
  const certs = await devCertificates(['127.0.0.1']);
  writeFileSync(join(dir, 'tls.crt'), certs.certPem);
  writeFileSync(join(dir, 'tls.key'), certs.keyPem);
  const caBundle = Buffer.from(certs.caPem).toString('base64');

  injector = new WebhookServer({ certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), port: 0, host: '127.0.0.1', routes: { '/inject': injectRoute } });
  await injector.start();
  const parsed = parseFlags(['--webhook-port=1', `--tls-cert-file=${join(dir, 'tls.crt')}`, `--tls-key-file=${join(dir, 'tls.key')}`, '--metrics-port=0', '--health-port=0', '--controllers=keystone']);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  podlife = new ControllerApp({ flags: { ...parsed.flags, webhookPort: 0 }, config: defaultConfig, client: cp.client, logger: createLogger('podlife', { level: 'warn' }), bindAddress: '127.0.0.1' });
  await podlife.start();

  // Webhooks are called in name order: the injector first; podlife's reinvocation covers the rest.
  const configs = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
  await cp.client.create(configs, {
    metadata: { name: '00-proxy-injector' },
    webhooks: [{
      name: 'inject.example.com',
      admissionReviewVersions: ['v1'],
      clientConfig: { url: `https://127.0.0.1:${injector.port}/inject`, caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      objectSelector: { matchLabels: { 'inject-proxy': 'true' } },
      failurePolicy: 'Ignore',
      sideEffects: 'None',
      timeoutSeconds: 5,
    }],
  });
  await cp.client.create(configs, {
    metadata: { name: 'podlife' },
    webhooks: [webhookEntry({ url: `https://127.0.0.1:${podlife.webhook!.port}/mutate-pods`, caBundle }, { namespace: 'podlife-system', namespaces: [] })],
  });
  await new Promise((r) => setTimeout(r, 1500)); // the API server picks webhook configurations up

  const pod = await cp.client.create<V1Pod>('/api/v1/namespaces/default/pods', {
    metadata: { name: 'worker', labels: { 'inject-proxy': 'true' } },
    spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: 'busybox:1.36', command: ['sh', '-c', 'echo working; sleep 5'] }] },
  });
  console.log('\nthe pod as admitted:');
  console.log(`  annotations:     ${JSON.stringify(pod.metadata?.annotations)}`);
  console.log(`  labels:          ${JSON.stringify(pod.metadata?.labels)}`);
  console.log(`  containers:      ${pod.spec?.containers.map((c) => c.name).join(', ')}`);
  console.log(`  initContainers:  ${(pod.spec?.initContainers ?? []).map((c) => `${c.name} (restartPolicy ${c.restartPolicy})`).join(', ') || '(none)'}`);
} finally {
  await podlife?.stop();
  await injector?.stop();
  await kubelet.stop();
  await cp.stop();
  rmSync(dir, { recursive: true, force: true });
}
