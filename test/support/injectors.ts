/**
 * What sidecar injectors add to a pod, as their public injection templates produce it (container
 * names, images, args, ports, probes, init containers), and a test injector webhook that adds
 * one of those shapes: for proving lifecycle policies on the pods injectors make (ADR 0270).
 *
 * `testInjector` is a small HTTPS AdmissionReview server on 127.0.0.1, registered as a
 * MutatingWebhookConfiguration (`failurePolicy: Fail`: the injection must land) for the given
 * namespaces; a pod asks for a shape with the annotation `injector.test/shape: <name>`, as real
 * injectors are asked by theirs. It records whether podlife had already applied a policy when it
 * injected (`injector.test/saw-policies`), which is how a suite proves podlife ran again after it.
 * `stop()` deletes the configuration and closes the server; safe twice.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { jsonPointer, type JsonPatchOp, type KubeClient } from '@podlife/core';
import { devCertificates } from '@podlife/controller';

export interface InjectorShape {
  /** Containers the injector appends to spec.containers. */
  readonly sidecars: readonly V1Container[];
  /** Init containers it prepends (iptables set-up, secret pre-fetch). */
  readonly initContainers?: readonly V1Container[];
}

const probe = (path: string, port: number) => ({ httpGet: { path, port }, periodSeconds: 2 });

/** The shapes, keyed by the preset that should recognise them. */
export const INJECTOR_SHAPES: Readonly<Record<string, InjectorShape>> = {
  'istio-proxy': {
    initContainers: [{ name: 'istio-init', image: 'docker.io/istio/proxyv2:1.24.0', args: ['istio-iptables', '-p', '15001', '-z', '15006', '-u', '1337'] }],
    sidecars: [
      {
        name: 'istio-proxy',
        image: 'docker.io/istio/proxyv2:1.24.0',
        args: ['proxy', 'sidecar', '--domain', '$(POD_NAMESPACE).svc.cluster.local'],
        ports: [{ name: 'http-envoy-prom', containerPort: 15090 }],
        readinessProbe: probe('/healthz/ready', 15021),
      },
    ],
  },
  'linkerd-proxy': {
    initContainers: [{ name: 'linkerd-init', image: 'cr.l5d.io/linkerd/proxy-init:v2.4.1', args: ['--incoming-proxy-port', '4143', '--outgoing-proxy-port', '4140'] }],
    sidecars: [
      {
        name: 'linkerd-proxy',
        image: 'cr.l5d.io/linkerd/proxy:stable-2.14.10',
        ports: [{ name: 'linkerd-proxy', containerPort: 4143 }, { name: 'linkerd-admin', containerPort: 4191 }],
        readinessProbe: probe('/ready', 4191),
        livenessProbe: probe('/live', 4191),
      },
    ],
  },
  envoy: { sidecars: [{ name: 'envoy', image: 'envoyproxy/envoy:v1.31.0', args: ['-c', '/etc/envoy/envoy.yaml'], ports: [{ name: 'admin', containerPort: 9901 }] }] },
  'cloud-sql-proxy': {
    sidecars: [{ name: 'cloud-sql-proxy', image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.0', args: ['--quitquitquit', '--admin-port=9091', '--structured-logs', 'project:region:instance'] }],
  },
  daprd: {
    sidecars: [
      {
        name: 'daprd',
        image: 'docker.io/daprio/daprd:1.14.4',
        args: ['./daprd', '--mode', 'kubernetes', '--dapr-http-port', '3500', '--dapr-grpc-port', '50001'],
        ports: [{ name: 'dapr-http', containerPort: 3500 }, { name: 'dapr-grpc', containerPort: 50001 }, { name: 'dapr-metrics', containerPort: 9090 }],
        readinessProbe: probe('/v1.0/healthz', 3501),
      },
    ],
  },
  'vault-agent': {
    initContainers: [{ name: 'vault-agent-init', image: 'hashicorp/vault:1.18.1', command: ['/bin/sh', '-ec'], args: ['vault agent -config=/home/vault/config.json -exit-after-auth'] }],
    sidecars: [{ name: 'vault-agent', image: 'hashicorp/vault:1.18.1', command: ['/bin/sh', '-ec'], args: ['vault agent -config=/home/vault/config.json'] }],
  },
  'consul-dataplane': {
    initContainers: [{ name: 'consul-connect-inject-init', image: 'hashicorp/consul-k8s-control-plane:1.6.1', command: ['/bin/sh', '-ec'], args: ['consul-k8s-control-plane connect-init'] }],
    sidecars: [{ name: 'consul-dataplane', image: 'hashicorp/consul-dataplane:1.6.1', args: ['-addresses', 'consul-server.consul.svc', '-graceful-port=20600'], ports: [{ name: 'public-listener', containerPort: 20000 }], readinessProbe: { tcpSocket: { port: 20000 } } }],
  },
  'otel-collector': { sidecars: [{ name: 'otc-container', image: 'otel/opentelemetry-collector-contrib:0.115.0', args: ['--config=env:OTEL_CONFIG'], ports: [{ name: 'otlp-grpc', containerPort: 4317 }, { name: 'metrics', containerPort: 8888 }] }] },
  'fluent-bit': { sidecars: [{ name: 'fluent-bit', image: 'cr.fluentbit.io/fluent/fluent-bit:3.2', ports: [{ name: 'http', containerPort: 2020 }] }] },
};

export const SHAPE_ANNOTATION = 'injector.test/shape';
export const SAW_POLICIES_ANNOTATION = 'injector.test/saw-policies';
const STATUS_ANNOTATION = 'injector.test/status';
const CONFIGURATIONS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

/** Rewrites what an injector adds (a real-node suite swaps in local stand-ins); `init` for init containers. */
export type ContainerTransform = (c: V1Container, init: boolean) => V1Container;

/** The ops a shape's injector makes: init containers first, sidecars appended, its own records. */
export function injectionOps(pod: V1Pod, shape: InjectorShape, transform: ContainerTransform = (c) => c): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  const init = (shape.initContainers ?? []).map((c) => transform(c, true));
  if (init.length > 0) {
    if (!pod.spec?.initContainers) ops.push({ op: 'add', path: '/spec/initContainers', value: init });
    else init.forEach((c, i) => ops.push({ op: 'add', path: `/spec/initContainers/${i}`, value: c }));
  }
  for (const c of shape.sidecars) ops.push({ op: 'add', path: '/spec/containers/-', value: transform(c, false) });
  const saw = pod.metadata?.annotations?.['podlife.dev/policies'] ?? 'none';
  ops.push({ op: 'add', path: jsonPointer('metadata', 'annotations', STATUS_ANNOTATION), value: 'injected' });
  ops.push({ op: 'add', path: jsonPointer('metadata', 'annotations', SAW_POLICIES_ANNOTATION), value: saw });
  return ops;
}

export interface TestInjector {
  readonly name: string;
  stop(): Promise<void>;
}

/**
 * Serves and registers the test injector for `namespaces`. `transform` rewrites each container it
 * adds (a real-node suite runs local stand-ins in the injectors' shapes).
 */
export async function testInjector(client: KubeClient, name: string, namespaces: readonly string[], transform?: ContainerTransform): Promise<TestInjector> {
  const certs = await devCertificates(['127.0.0.1']);
  const server = https.createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string; object: V1Pod } };
      const pod = review.request.object;
      const wanted = pod.metadata?.annotations?.[SHAPE_ANNOTATION];
      const shape = wanted ? INJECTOR_SHAPES[wanted] : undefined;
      const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
      if (shape && pod.metadata?.annotations?.[STATUS_ANNOTATION] !== 'injected') {
        response.patch = Buffer.from(JSON.stringify(injectionOps(pod, shape, transform))).toString('base64');
        response.patchType = 'JSONPatch';
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let registered = false;
  const stop = async (): Promise<void> => {
    if (registered) await client.delete(`${CONFIGURATIONS}/${name}`).catch(() => undefined);
    registered = false;
    // The API server keeps its connections to a webhook alive: close them, or close() waits for them.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  try {
    await client.create(CONFIGURATIONS, {
      metadata: { name },
      webhooks: [
        {
          name: 'inject.injector.test',
          admissionReviewVersions: ['v1'],
          clientConfig: { url: `https://127.0.0.1:${port}/inject`, caBundle: Buffer.from(certs.caPem).toString('base64') },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] }] },
          failurePolicy: 'Fail',
          sideEffects: 'None',
          timeoutSeconds: 5,
          reinvocationPolicy: 'Never',
        },
      ],
    });
    registered = true;
  } catch (err) {
    await stop();
    throw err;
  }
  return { name, stop };
}
