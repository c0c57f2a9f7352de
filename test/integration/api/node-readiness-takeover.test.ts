/**
 * Taking a cluster over from node-readiness-controller (NRC), and readiness from pods, against a
 * real API server with nodes that are only API objects (the test plays kubelet and agents).
 *
 * NRC's example rules (packages/node-readiness/test/nrc-examples.yaml) are applied unchanged to a
 * stand-in for NRC's CRD, NRC's finalizer and completion annotations put where NRC puts them, then
 * `podlife migrate nrc` is run as a user runs it: the dry run changes nothing, `--apply` creates the
 * podlife rules and unlocks NRC's, a second run changes nothing, and a rule with a field podlife
 * does not know is refused whole with a Warning Event. The controller then releases a taint NRC's
 * rule gated and keeps the bootstrap completion NRC recorded. Pod conditions: the taint goes when
 * the selected pod on the node turns Ready and comes back (continuous) when it stops being Ready; a
 * DaemonSet that does not exist holds the taint and says so.
 *
 * @releases newest — CRDs, finalizers, taints and pod status are GA APIs, alike on every release.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { ControllerApp, defaultConfig, NODE_WEBHOOK_PATH, nodeWebhookEntry, parseFlags } from '@podlife/controller';
import { ContentType, Manager, resourcePath, silentLogger } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import type { LocalWebhook } from '@podlife/testbed';
import { NrcFinalizer, NrcGroup, NrcResource, NrcVersion, explainNode, nodeReadinessController, nodeReadinessRule, rulePath } from '@podlife/node-readiness';
import type { NodeReadinessRule, NrcRule } from '@podlife/node-readiness';
import { createNamespace, installNrcStandInCrd, localWebhook, getNode, hasTaint, installRuleCrd, nodeCondition, nodePath, podlife, retry, setNodeConditions, sharedControlPlane, waitFor } from '@podlife/testbed';
import { parseAllDocuments } from 'yaml';

const nrcPath = (name?: string): string => resourcePath({ group: NrcGroup, version: NrcVersion, resource: NrcResource, ...(name ? { name } : {}) });

const examples = (suffix: string): NrcRule[] =>
  parseAllDocuments(readFileSync(new URL('../../../packages/node-readiness/test/nrc-examples.yaml', import.meta.url), 'utf8')).map((d) => {
    const r = d.toJS() as NrcRule;
    // Own names and pools, so suites sharing the control plane never meet these rules.
    r.metadata = { name: `${r.metadata?.name}-${suffix}`, finalizers: [NrcFinalizer] };
    const spec = r.spec as { nodeSelector: { matchLabels?: Record<string, string>; matchExpressions?: { values?: string[] }[] } };
    for (const k of Object.keys(spec.nodeSelector.matchLabels ?? {})) spec.nodeSelector.matchLabels![k] = `${spec.nodeSelector.matchLabels![k]}-${suffix}`;
    for (const e of spec.nodeSelector.matchExpressions ?? []) e.values = e.values?.map((v) => `${v}-${suffix}`);
    return r;
  });

describe('node readiness: taking over from node-readiness-controller, and readiness from pods (real API server)', function () {
  this.timeout(120_000);
  const suffix = randomBytes(3).toString('hex');
  let client: KubeClient;
  let kubeconfig: string;
  let manager: Manager;
  const nodes: string[] = [];
  const created: string[] = [];

  before(async function () {
    const cp = await sharedControlPlane();
    client = cp.client;
    kubeconfig = cp.kubeconfigPath;
    await installRuleCrd(client);
    await installNrcStandInCrd(client);
    manager = new Manager({ client });
    nodeReadinessController(manager, { statusResyncMs: 300 });
    await manager.start();
  });

  after(async function () {
    await manager?.stop();
    for (const n of nodes) await client?.delete(nodePath(n)).catch(() => undefined);
    for (const r of created) await client?.delete(rulePath(r)).catch(() => undefined);
  });

  async function node(name: string, labels: Record<string, string>, taints: { key: string; effect: string }[], annotations: Record<string, string> = {}): Promise<void> {
    nodes.push(name);
    await client.create(nodePath(), { apiVersion: 'v1', kind: 'Node', metadata: { name, labels, annotations }, spec: { taints } });
  }

  describe('podlife migrate nrc', () => {
    const rules = examples(suffix);
    const nrc = (base: string): string => `${base}-${suffix}`;
    const netNode = `nrc-net-${suffix}`;
    const gpuDone = `nrc-gpu-done-${suffix}`;
    const gpuOld = `nrc-gpu-old-${suffix}`;
    const bad = nrc('future-field');
    let gpuUid = '';

    before(async function () {
      for (const r of rules) {
        const stored = await client.create<NrcRule>(nrcPath(), r);
        if (r.metadata?.name === nrc('gpu-driver')) gpuUid = stored.metadata?.uid ?? '';
        created.push(r.metadata?.name ?? '');
      }
      await client.create(nrcPath(), {
        ...rules[0],
        metadata: { name: bad, finalizers: [NrcFinalizer] },
        spec: { ...(rules[0]?.spec as object), taint: { key: `readiness.k8s.io/future-${suffix}`, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool: `future-${suffix}` } }, startupGracePeriod: '5m' },
      });
      // A worker that registered with NRC's taint and whose agent now says ready.
      await node(netNode, { pool: `workers-${suffix}` }, [{ key: 'readiness.k8s.io/network-unavailable', effect: 'NoSchedule' }]);
      await setNodeConditions(client, netNode, [nodeCondition('example.com/NetworkReady', 'True')]);
      // GPU nodes NRC released: the completion annotation by rule uid (NRC today) and by name (older NRC).
      await node(gpuDone, { accelerator: `nvidia-${suffix}` }, [], { [`readiness.k8s.io/bootstrap-completed-${gpuUid}`]: JSON.stringify({ 'rule-name': nrc('gpu-driver') }) });
      await node(gpuOld, { accelerator: `nvidia-${suffix}` }, [], { [`readiness.k8s.io/bootstrap-completed-${nrc('gpu-driver')}`]: 'true' });
    });

    after(async function () {
      for (const r of [...rules.map((x) => x.metadata?.name ?? ''), bad]) {
        await client.patch(nrcPath(r), { metadata: { finalizers: null } }, ContentType.MergePatch).catch(() => undefined);
        await client.delete(nrcPath(r)).catch(() => undefined);
      }
    });

    it('dry run: prints what it would change and changes nothing', async () => {
      const r = await podlife(kubeconfig, ['migrate', 'nrc']);
      assert.equal(r.code, 3, r.stderr);
      assert.match(r.stdout, new RegExp(`^create {3}${nrc('network-readiness')}: create NodeReadinessRule`, 'm'));
      assert.match(r.stdout, new RegExp(`^REFUSED {2}${bad}: not migrated[^\\n]*\\n {11}spec\\.startupGracePeriod: podlife does not know this field`, 'm'));
      assert.match(r.stdout, /dry run: 8 change\(s\) above, none made/);
      for (const name of rules.map((x) => x.metadata?.name ?? '')) {
        await assert.rejects(client.get(rulePath(name)), /not found/i);
        assert.deepEqual((await client.get<NrcRule>(nrcPath(name))).metadata?.finalizers, [NrcFinalizer]);
      }
      assert.ok(hasTaint(await getNode(client, netNode), 'readiness.k8s.io/network-unavailable'));
    });

    it('--apply: podlife rules created, NRC rules unlocked, the refused rule left whole and reported in an Event', async () => {
      const r = await podlife(kubeconfig, ['migrate', 'nrc', '--apply']);
      assert.equal(r.code, 3, r.stderr);
      for (const name of rules.map((x) => x.metadata?.name ?? '')) {
        const mine = await client.get<NodeReadinessRule>(rulePath(name));
        assert.match(mine.metadata?.annotations?.['readiness.podlife.dev/migrated-from'] ?? '', new RegExp(`^${name}/`));
        assert.deepEqual((await client.get<NrcRule>(nrcPath(name))).metadata?.finalizers ?? [], []);
      }
      await assert.rejects(client.get(rulePath(bad)), /not found/i);
      assert.deepEqual((await client.get<NrcRule>(nrcPath(bad))).metadata?.finalizers, [NrcFinalizer]);
      const event = await waitFor('NotMigrated Event on the refused rule', async () => {
        const list = await client.get<{ items: { reason?: string; note?: string; regarding?: { name?: string; kind?: string } }[] }>('/apis/events.k8s.io/v1/namespaces/default/events');
        return list.items.find((e) => e.reason === 'NotMigrated' && e.regarding?.name === bad && e.regarding.kind === 'NodeReadinessRule');
      });
      assert.match(event.note ?? '', /spec\.startupGracePeriod/);
    });

    it('a second run changes nothing', async () => {
      const r = await podlife(kubeconfig, ['migrate', 'nrc', '--apply', '-o', 'json']);
      const out = JSON.parse(r.stdout) as { changes: number; steps: { op: string; nrcRule: string }[] };
      assert.equal(out.changes, 0);
      assert.deepEqual([...new Set(out.steps.map((s) => s.op))].sort(), ['not-migrated', 'up-to-date']);
    });

    it('the controller releases the taint an NRC rule gated once its condition is True', async () => {
      await waitFor('network taint released', async () => !hasTaint(await getNode(client, netNode), 'readiness.k8s.io/network-unavailable'));
    });

    it("NRC's bootstrap completions are honoured: counted as completed, by uid and by name, no taint added", async () => {
      await setNodeConditions(client, gpuDone, [nodeCondition('example.com/GPUDriverReady', 'False')]);
      const status = await waitFor('gpu rule counts both nodes completed', async () => {
        const r = await client.get<NodeReadinessRule>(rulePath(nrc('gpu-driver')));
        return r.status?.completedNodes === 2 ? r.status : undefined;
      });
      assert.equal(status.taintedNodes, 0);
      const all = (await client.get<{ items: NodeReadinessRule[] }>(rulePath())).items;
      const gate = explainNode(await getNode(client, gpuDone), all, Date.now()).gates.find((g) => g.gate === nrc('gpu-driver'));
      assert.match(gate?.message ?? '', /passed under node-readiness-controller/);
      for (const n of [gpuDone, gpuOld]) assert.ok(!hasTaint(await getNode(client, n), 'readiness.k8s.io/gpu-driver'));
    });

    it('deleting an unlocked NRC rule removes nothing from the nodes podlife now gates', async () => {
      await client.delete(nrcPath(nrc('network-readiness')));
      await waitFor('NRC rule gone at once', async () => client.get(nrcPath(nrc('network-readiness'))).then(() => false, () => true));
      const mine = await client.get<NodeReadinessRule>(rulePath(nrc('network-readiness')));
      assert.equal(mine.metadata?.deletionTimestamp, undefined);
    });
  });

  describe('pod conditions', () => {
    const pool = `pods-${suffix}`;
    const taint = `readiness.k8s.io/agent-${suffix}`;
    const podNode = `pods-node-${suffix}`;
    const dsNode = `pods-ds-node-${suffix}`;
    let ns = '';

    const setReady = async (name: string, ready: boolean): Promise<void> => {
      const now = new Date().toISOString();
      await client.patch(resourcePath({ version: 'v1', resource: 'pods', namespace: ns, name, subresource: 'status' }), { status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }] } }, ContentType.StrategicMergePatch);
    };

    before(async function () {
      ns = await createNamespace(client, 'readiness-pods');
      for (const [name, rule] of [
        [`agent-${suffix}`, { conditions: [{ type: 'AgentPodReady', pod: { namespace: ns, selector: { matchLabels: { app: 'agent' } } } }], selector: { pool } }],
        [`absent-ds-${suffix}`, { conditions: [{ type: 'AbsentReady', pod: { namespace: ns, daemonSet: 'not-there' } }], selector: { pool: `${pool}-ds` } }],
      ] as const) {
        await client.create(rulePath(), nodeReadinessRule(name, { conditions: [...rule.conditions], enforcementMode: 'continuous', debounce: '1s', guardrails: { maxTaintedPercent: 100 }, taint: { key: taint, effect: 'NoSchedule' }, nodeSelector: { matchLabels: rule.selector } }));
        created.push(name);
      }
      await node(podNode, { pool }, [{ key: taint, effect: 'NoSchedule' }]);
      await setNodeConditions(client, podNode, [nodeCondition('Ready', 'True')]);
      await node(dsNode, { pool: `${pool}-ds` }, [{ key: taint, effect: 'NoSchedule' }]);
      await retry(() => client.create<V1Pod>(resourcePath({ version: 'v1', resource: 'pods', namespace: ns }), { metadata: { name: 'agent', labels: { app: 'agent' } }, spec: { nodeName: podNode, automountServiceAccountToken: false, containers: [{ name: 'agent', image: 'agent:1' }] } }));
    });

    it('the pod on the node turning Ready releases the taint', async () => {
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(hasTaint(await getNode(client, podNode), taint), 'held while the pod is not Ready');
      await setReady('agent', true);
      await waitFor('taint released', async () => !hasTaint(await getNode(client, podNode), taint));
    });

    // One node in the pool: the rule allows 100% of it tainted, or its circuit breaker would hold the taint back.
    it('continuous: the pod failing puts the taint back after the debounce', async () => {
      await setReady('agent', false);
      const n = await waitFor('taint back', async () => {
        const got: V1Node = await getNode(client, podNode);
        return hasTaint(got, taint) ? got : undefined;
      });
      assert.match(n.metadata?.annotations?.['readiness.podlife.dev/managed-taints'] ?? '', new RegExp(`agent-${suffix}`));
    });

    it('a DaemonSet that does not exist holds the taint and says so (podlife explain node reads the pods and DaemonSets too)', async () => {
      const x = await podlife(kubeconfig, ['explain', 'node', dsNode, '--width', '400']);
      assert.match(x.stdout, new RegExp(`DaemonSet ${ns}/not-there does not exist`));
      const y = await podlife(kubeconfig, ['explain', 'node', podNode, '--width', '400']);
      assert.match(y.stdout, new RegExp(`pod ${ns}/agent is not Ready`));
      assert.ok(hasTaint(await getNode(client, dsNode), taint));
    });
  });

  describe('Node CREATE webhook (opt-in)', () => {
    const pool = `born-${suffix}`;
    const taint = `readiness.k8s.io/born-${suffix}`;
    const configName = `podlife-node-readiness-${suffix}`;
    let hook: LocalWebhook | undefined;
    let app: ControllerApp | undefined;

    before(async function () {
      // The controller as shipped serves the route; the suite's own manager steps aside.
      await manager.stop();
      await client.create(rulePath(), nodeReadinessRule(`born-${suffix}`, { conditions: [{ type: 'BornReady' }], enforcementMode: 'bootstrap-only', taint: { key: taint, effect: 'NoSchedule' }, nodeSelector: { matchLabels: { pool } } }));
      created.push(`born-${suffix}`);
      hook = await localWebhook(client, configName);
      const parsed = parseFlags(['--controllers=node-readiness', '--metrics-port=0', '--health-port=0', '--log-level=warn', '--webhook-port=1', `--tls-cert-file=${hook.certFile}`, `--tls-key-file=${hook.keyFile}`]);
      if (!parsed.ok) throw new Error(parsed.problems.join('; '));
      app = new ControllerApp({ flags: { ...parsed.flags, webhookPort: 0 }, config: defaultConfig, client, logger: silentLogger(), bindAddress: '127.0.0.1' });
      await app.start();
      const entry = nodeWebhookEntry({ url: `https://127.0.0.1:${app.webhook!.port}${NODE_WEBHOOK_PATH}`, caBundle: hook.caBundle });
      await client.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', { metadata: { name: configName }, webhooks: [entry] });
    });

    after(async function () {
      await client?.delete(`/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${configName}`).catch(() => undefined);
      await app?.stop();
      await hook?.remove();
    });

    it('a node created with no taints is stored with its rule\'s readiness taint; a control-plane node is not', async () => {
      // The configuration takes a moment to reach the API server's admission chain.
      const born = await waitFor('node born tainted', async () => {
        const name = `born-${suffix}-${randomBytes(2).toString('hex')}`;
        nodes.push(name);
        const n = await client.create<V1Node>(nodePath(), { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { pool } } });
        return hasTaint(n, taint) ? n : undefined;
      });
      // The API server adds node.kubernetes.io/not-ready itself; of readiness taints, the rule's alone.
      assert.deepEqual(born.spec?.taints?.filter((t) => t.key.startsWith('readiness.k8s.io/')), [{ key: taint, effect: 'NoSchedule' }]);
      const cp = `born-cp-${suffix}`;
      await node(cp, { pool, 'node-role.kubernetes.io/control-plane': '' }, []);
      assert.ok(!hasTaint(await getNode(client, cp), taint));
      // The rule then adopts the taint and releases it when its condition holds.
      await setNodeConditions(client, born.metadata!.name!, [nodeCondition('BornReady', 'True')]);
      await waitFor('born taint released', async () => !hasTaint(await getNode(client, born.metadata!.name!), taint));
    });
  });
});
