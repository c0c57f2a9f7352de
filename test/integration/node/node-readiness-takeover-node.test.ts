/**
 * Taking over from node-readiness-controller (NRC), the Node webhook and readiness from a
 * DaemonSet's pod, on real kubelets (containerd, runc) of the shared real cluster, with the
 * controller as shipped (ControllerApp: node-readiness and its webhook server).
 *
 * - NRC's example rules, applied unchanged and migrated with `podlife migrate nrc --apply`; a
 *   node NRC released for its bootstrap-only rule (NRC's completion annotation by rule uid) is
 *   counted as passed and never tainted;
 * - a kubelet registering with NRC's network taint and, through the opt-in Node webhook, the GPU
 *   rule's taint it was not started with: podlife releases both once their conditions are True;
 * - on the shared node, a continuous rule waiting for a DaemonSet's pod: held while the pod is not
 *   Ready, released when its readiness probe passes, tainted again when the probe fails.
 *
 * @releases newest — registration, admission of Nodes and pod readiness are GA and alike on every
 *   supported release.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ControllerApp, defaultConfig, NODE_WEBHOOK_PATH, nodeWebhookEntry, parseFlags } from '@podlife/controller';
import { ContentType, resourcePath, silentLogger } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { NrcFinalizer, NrcGroup, NrcResource, NrcVersion, nodeReadinessRule, rulePath } from '@podlife/node-readiness';
import type { NodeReadinessRule, NrcRule } from '@podlife/node-readiness';
import { createNamespace, getNode, hasTaint, installNrcStandInCrd, installRuleCrd, localWebhook, nodeCondition, nodePath, podlife, sharedRealCluster, setNodeConditions, startNode, waitFor } from '@podlife/testbed';
import type { ControlPlane, LocalWebhook, RealNode } from '@podlife/testbed';
import { parseAllDocuments } from 'yaml';

const CONFIGS = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';
const nrcPath = (name?: string): string => resourcePath({ group: NrcGroup, version: NrcVersion, resource: NrcResource, ...(name ? { name } : {}) });
describe('node readiness on real kubelets: NRC taken over, the Node webhook, a DaemonSet pod as the condition', function () {
  this.timeout(180_000);
  const suffix = randomBytes(3).toString('hex');
  let cp: ControlPlane;
  let shared: RealNode;
  let client: KubeClient;
  let hook: LocalWebhook | undefined;
  let app: ControllerApp | undefined;
  let fresh: RealNode | undefined;
  const nrcNames: string[] = [];
  const rules: string[] = [];

  before(async function () {
    ({ cp, node: shared } = await sharedRealCluster());
    client = cp.client;
    await installRuleCrd(client);
    await installNrcStandInCrd(client);
    hook = await localWebhook(client, `podlife-nodes-${suffix}`);
    const parsed = parseFlags(['--controllers=node-readiness', '--metrics-port=0', '--health-port=0', '--log-level=warn', '--webhook-port=1', `--tls-cert-file=${hook.certFile}`, `--tls-key-file=${hook.keyFile}`]);
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    app = new ControllerApp({ flags: { ...parsed.flags, webhookPort: 0 }, config: defaultConfig, client, logger: silentLogger(), bindAddress: '127.0.0.1' });
    await app.start();
    await client.create(CONFIGS, { metadata: { name: `podlife-nodes-${suffix}` }, webhooks: [nodeWebhookEntry({ url: `https://127.0.0.1:${app.webhook!.port}${NODE_WEBHOOK_PATH}`, caBundle: hook.caBundle })] });
  });

  after(async function () {
    this.timeout(60_000);
    await client?.delete(`${CONFIGS}/podlife-nodes-${suffix}`).catch(() => undefined);
    for (const r of rules) await client?.delete(rulePath(r)).catch(() => undefined);
    if (fresh) {
      await fresh.stop();
      await client?.delete(nodePath(fresh.name)).catch(() => undefined);
    }
    // Rule deletion cleans up taints through the controller: give it the moment it needs.
    await waitFor('rules gone', async () => {
      const left = await Promise.all(rules.map((r) => client.get(rulePath(r)).then(() => r, () => undefined)));
      return left.every((x) => x === undefined);
    }, { timeoutMs: 20_000 }).catch(() => undefined);
    await app?.stop();
    await hook?.remove();
    for (const n of nrcNames) {
      await client?.patch(nrcPath(n), { metadata: { finalizers: null } }, ContentType.MergePatch).catch(() => undefined);
      await client?.delete(nrcPath(n)).catch(() => undefined);
    }
    await client?.patch(nodePath(shared.name), { metadata: { labels: { [`accelerator`]: null }, annotations: { [`readiness.k8s.io/bootstrap-completed-${gpuUid}`]: null } } }, ContentType.MergePatch).catch(() => undefined);
  });

  let gpuUid = '';
  const gpuRule = `gpu-driver-${suffix}`;
  const gpuLabel = `nvidia-${suffix}`;

  it('NRC example rules applied unchanged, migrated; a node NRC released stays released and counts as passed', async () => {
    const examples = parseAllDocuments(readFileSync(new URL('../../../packages/node-readiness/test/nrc-examples.yaml', import.meta.url), 'utf8')).map((d) => d.toJS() as NrcRule);
    for (const base of ['network-readiness', 'gpu-driver']) {
      const r = structuredClone(examples.find((e) => e.metadata?.name === base)!);
      r.metadata = { name: `${base}-${suffix}`, finalizers: [NrcFinalizer] };
      const spec = r.spec as { nodeSelector: { matchLabels?: Record<string, string>; matchExpressions?: { values?: string[] }[] } };
      if (spec.nodeSelector.matchLabels) spec.nodeSelector.matchLabels = { pool: `workers-${suffix}` };
      for (const e of spec.nodeSelector.matchExpressions ?? []) e.values = [gpuLabel];
      const stored = await client.create<NrcRule>(nrcPath(), r);
      if (base === 'gpu-driver') gpuUid = stored.metadata?.uid ?? '';
      nrcNames.push(r.metadata.name!);
      rules.push(r.metadata.name!);
    }
    // The shared node was released by NRC's gpu rule long ago: its completion annotation, by rule uid.
    await client.patch(nodePath(shared.name), { metadata: { labels: { accelerator: gpuLabel }, annotations: { [`readiness.k8s.io/bootstrap-completed-${gpuUid}`]: JSON.stringify({ 'rule-name': gpuRule }) } } }, ContentType.MergePatch);
    const r = await podlife(cp.kubeconfigPath, ['migrate', 'nrc', '--apply']);
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const status = await waitFor('the shared node counted as passed', async () => {
      const s = (await client.get<NodeReadinessRule>(rulePath(gpuRule))).status;
      return s?.completedNodes === 1 ? s : undefined;
    }, { timeoutMs: 15_000 });
    assert.equal(status.taintedNodes, 0);
    assert.ok(!hasTaint(await getNode(client, shared.name), 'readiness.k8s.io/gpu-driver'));
  });

  it("a kubelet's registered taint and the one the Node webhook added at registration are both released when their conditions are True", async () => {
    fresh = await startNode(cp, { name: `nr-takeover-${suffix}`, registerWithTaints: ['readiness.k8s.io/network-unavailable=pending:NoSchedule'], labels: { pool: `workers-${suffix}`, accelerator: gpuLabel } });
    const registered = await getNode(client, fresh.name);
    // The GPU taint was never a kubelet flag: the webhook put it on the Node as it was created.
    // Neither agent has reported yet, so both gates still hold.
    assert.ok(hasTaint(registered, 'readiness.k8s.io/gpu-driver'), 'gpu-driver taint from the webhook');
    assert.ok(hasTaint(registered, 'readiness.k8s.io/network-unavailable'), "the kubelet's registered taint");
    await setNodeConditions(client, fresh.name, [
      nodeCondition('example.com/NetworkReady', 'True'),
      nodeCondition('example.com/GPUDriverReady', 'True'),
      nodeCondition('example.com/GPUHealthy', 'True'),
    ]);
    const released: V1Node = await waitFor('both taints released', async () => {
      const n = await getNode(client, fresh!.name);
      return !hasTaint(n, 'readiness.k8s.io/network-unavailable') && !hasTaint(n, 'readiness.k8s.io/gpu-driver') ? n : undefined;
    }, { timeoutMs: 20_000 });
    assert.match(released.metadata?.annotations?.['readiness.podlife.dev/completed'] ?? '', new RegExp(gpuRule));
  });

  it('a DaemonSet pod as the condition: released when the pod turns Ready, tainted again (continuous) when its probe fails', async () => {
    const ns = await createNamespace(client, 'readiness-ds');
    const taint = `readiness.k8s.io/agent-${suffix}`;
    const rule = `agent-pod-${suffix}`;
    rules.push(rule);
    // The kubelet's hostname label is the host's, not the node's name: a label of the suite's own picks the shared node.
    const here = { [`readiness-test/agent-${suffix}`]: 'yes' };
    await client.patch(nodePath(shared.name), { metadata: { labels: here } }, ContentType.MergePatch);
    // Ready 3 s after it starts, not Ready again 8 s later: the probe reads a file the agent writes and removes.
    const podSpec = {
      nodeSelector: here,
      tolerations: [{ key: taint, operator: 'Exists' }],
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'agent',
          image: shared.images.busybox,
          imagePullPolicy: 'Never',
          command: ['sh', '-c', 'sleep 3; touch /tmp/ready; sleep 8; rm /tmp/ready; sleep 3600'],
          readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1, failureThreshold: 1 },
        },
      ],
    };
    const ds = await client.create<{ metadata?: { uid?: string } }>(resourcePath({ group: 'apps', version: 'v1', resource: 'daemonsets', namespace: ns }), {
      metadata: { name: 'agent' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: { metadata: { labels: { app: 'agent' } }, spec: podSpec } },
    });
    // The shared cluster runs no DaemonSet controller: its pod on the node is made here, as that controller makes it.
    await client.create(resourcePath({ version: 'v1', resource: 'pods', namespace: ns }), {
      metadata: { name: 'agent-shared', labels: { app: 'agent' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata?.uid, controller: true, blockOwnerDeletion: true }] },
      spec: { ...podSpec, nodeName: shared.name },
    });
    await client.create(rulePath(), nodeReadinessRule(rule, {
      conditions: [{ type: 'AgentPodReady', pod: { namespace: ns, daemonSet: 'agent' } }],
      enforcementMode: 'continuous',
      debounce: '1s',
      // The pool is this one node: the breaker must allow all of it.
      guardrails: { maxTaintedPercent: 100 },
      taint: { key: taint, effect: 'NoSchedule' },
      nodeSelector: { matchLabels: here },
    }));
    const podReady = async (ready: boolean): Promise<boolean> => {
      const pods = await client.get<{ items: V1Pod[] }>(resourcePath({ version: 'v1', resource: 'pods', namespace: ns }));
      return pods.items.some((p) => (p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True') === ready && p.status?.phase === 'Running');
    };
    await waitFor('agent pod Ready', () => podReady(true), { timeoutMs: 30_000, intervalMs: 200 }).catch(async (err: Error) => {
      const pods = await client.get<{ items: V1Pod[] }>(resourcePath({ version: 'v1', resource: 'pods', namespace: ns }));
      const events = await client.get<{ items: { reason?: string; message?: string }[] }>(resourcePath({ version: 'v1', resource: 'events', namespace: ns }));
      const ds = await client.get<{ status?: unknown }>(resourcePath({ group: 'apps', version: 'v1', resource: 'daemonsets', namespace: ns, name: 'agent' }));
      throw new Error(`${err.message}; daemonset ${JSON.stringify(ds.status)}; pods ${JSON.stringify(pods.items.map((p) => [p.spec?.nodeName, p.status]))}; events ${JSON.stringify(events.items.map((e) => `${e.reason}: ${e.message}`))}`);
    });
    await waitFor('taint absent while the pod is Ready', async () => !hasTaint(await getNode(client, shared.name), taint), { timeoutMs: 10_000, intervalMs: 200 });
    await waitFor('agent pod not Ready', () => podReady(false), { timeoutMs: 20_000, intervalMs: 200 });
    await waitFor('taint back after the debounce', async () => hasTaint(await getNode(client, shared.name), taint), { timeoutMs: 15_000, intervalMs: 200 });
    await client.delete(rulePath(rule));
    await waitFor('taint cleaned up with the rule', async () => !hasTaint(await getNode(client, shared.name), taint), { timeoutMs: 15_000 });
    await client.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
    await client.patch(nodePath(shared.name), { metadata: { labels: { [`readiness-test/agent-${suffix}`]: null } } }, ContentType.MergePatch);
  });
});
