/**
 * `podlife nodes` and `podlife explain node <name>` run as processes, from source, against a real
 * kube-apiserver with the NodeReadinessRule CRD installed from deploy/crds. No controller runs:
 * the CLI only reads, so what it prints is what the nodes and rules say at that moment.
 *
 * @releases newest — the CLI reads nodes and rules as plain API objects, the same on every
 *   release.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { V1NodeCondition } from '@kubernetes/client-node';
import { ContentType, resourcePath } from '@podlife/core';
import type { KubeClient } from '@podlife/core';
import { nodeReadinessRule, rulePath } from '@podlife/node-readiness';
import { podlife, sharedControlPlane, SimulatedKubelet, waitFor } from '@podlife/testbed';

const crdYaml = readFileSync(fileURLToPath(new URL('../../../deploy/crds/nodereadinessrules.yaml', import.meta.url)), 'utf8');
const crdName = 'nodereadinessrules.readiness.podlife.dev';


async function installCrd(client: KubeClient): Promise<void> {
  const crds = resourcePath({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' });
  // Server-side apply takes the YAML as it ships; other suites may have installed the same CRD already.
  await client.patch(`${crds}/${crdName}`, crdYaml, ContentType.ApplyPatch, { fieldManager: 'podlife-cli-test', force: true });
  await waitFor('NodeReadinessRule CRD established', async () => {
    const crd = await client.get<{ status?: { conditions?: V1NodeCondition[] } }>(`${crds}/${crdName}`);
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  await waitFor('rules listable', async () => client.get(rulePath()).then(() => true, () => false));
}

const condition = (type: string, status: string): V1NodeCondition => ({ type, status, reason: 'Test', message: `${type} is ${status} in this test` });

interface GateJson {
  gate: string;
  source: string;
  state: string;
  holding: boolean;
  conditions: { type: string; state: string }[];
}
interface ExplanationJson {
  node: string;
  holding: GateJson[];
  gates: GateJson[];
  rejected: Record<string, unknown>;
}

describe('podlife nodes and podlife explain node (real API server)', function () {
  this.timeout(120_000);
  const suffix = randomBytes(3).toString('hex');
  const pool = `cli-${suffix}`;
  const rule = `cli-gate-${suffix}`;
  const ruleTaint = `readiness.k8s.io/cli-${suffix}`;
  const zeroConfigType = `CliZero${suffix}`;
  const held = `cli-held-${suffix}`;
  const open = `cli-open-${suffix}`;
  const zero = `cli-zero-${suffix}`;
  let client: KubeClient;
  let kubeconfig: string;

  before(async function () {
    const cp = await sharedControlPlane();
    client = cp.client;
    kubeconfig = cp.kubeconfigPath;
    await installCrd(client);
    await client.create(rulePath(), nodeReadinessRule(rule, {
      conditions: [{ type: 'CliAgentReady' }],
      enforcementMode: 'bootstrap-only',
      taint: { key: ruleTaint, effect: 'NoSchedule' },
      nodeSelector: { matchLabels: { pool } },
    }));
    const kubelet = new SimulatedKubelet(client);
    await kubelet.registerNode({ name: held, labels: { pool }, taints: [{ key: ruleTaint, effect: 'NoSchedule' }], conditions: [condition('CliAgentReady', 'False')] });
    await kubelet.registerNode({ name: open, labels: { pool }, conditions: [condition('CliAgentReady', 'True')] });
    // No rule names this taint: only zero-config mode explains it.
    await kubelet.registerNode({ name: zero, taints: [{ key: `readiness.k8s.io/${zeroConfigType}`, effect: 'NoSchedule' }] });
  });

  after(async function () {
    for (const name of [held, open, zero]) await client?.delete(resourcePath({ version: 'v1', resource: 'nodes', name })).catch(() => undefined);
    await client?.delete(rulePath(rule)).catch(() => undefined);
  });

  it('podlife nodes -o wide: a row per node naming the gate that holds it and its state', async () => {
    const r = await podlife(kubeconfig, ['nodes', '-o', 'wide']);
    assert.equal(r.code, 0, r.stderr);
    const row = (name: string): string => r.stdout.split('\n').find((l) => l.startsWith(`${name} `)) ?? assert.fail(`no row for ${name} in:\n${r.stdout}`);
    assert.match(r.stdout, /^NAME\s+HELD BY\s+READINESS TAINTS\s+GATES\s+UNMANAGED TAINTS$/m);
    assert.match(row(held), new RegExp(`\\s${rule} \\(failing\\)\\s+${ruleTaint}:NoSchedule\\s+${rule} \\(rule, bootstrap-only, failing\\)\\s+-$`));
    assert.match(row(open), /^\S+\s+-\s+-\s/);
    assert.match(row(zero), new RegExp(`\\sreadiness\\.k8s\\.io/${zeroConfigType} \\(missing\\)\\s`));
  });

  it('podlife nodes: the same table fitted to 80 columns when the output is not a terminal', async () => {
    const r = await podlife(kubeconfig, ['nodes']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^NAME\s+HELD BY\s+READINESS TAINTS$/m);
    for (const line of r.stdout.split('\n')) assert.ok(line.length <= 80, `${line.length} columns: ${line}`);
    assert.ok(r.stdout.split('\n').some((l) => l.startsWith(`${held} `)), r.stdout);
  });

  it('podlife nodes --output json: one explanation per node', async () => {
    const r = await podlife(kubeconfig, ['nodes', '--output', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const { items } = JSON.parse(r.stdout) as { items: ExplanationJson[] };
    const of = (name: string): ExplanationJson => items.find((i) => i.node === name) ?? assert.fail(`${name} missing from the list`);
    assert.deepEqual(of(held).holding.map((g) => g.gate), [rule]);
    assert.deepEqual(of(open).holding, []);
    assert.deepEqual(of(zero).holding.map((g) => [g.source, g.gate]), [['zero-config', `readiness.k8s.io/${zeroConfigType}`]]);
  });

  it('podlife explain node <name>: the holding rule, its taint, and the condition state', async () => {
    const r = await podlife(kubeconfig, ['explain', 'node', held]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Node ${held}: held by 1 readiness gate\\(s\\)$`, 'm'));
    assert.match(r.stdout, new RegExp(`HOLDING\\s+rule ${rule}\\s+taint ${ruleTaint}:NoSchedule\\s+\\[bootstrap-only, failing\\]`));
    assert.match(r.stdout, /CliAgentReady is False/);
  });

  it('podlife explain node/<name> --output json parses and names the gate and the condition', async () => {
    const r = await podlife(kubeconfig, ['explain', `node/${held}`, '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const x = JSON.parse(r.stdout) as ExplanationJson;
    assert.equal(x.node, held);
    assert.equal(x.holding.length, 1);
    assert.equal(x.holding[0]?.gate, rule);
    assert.deepEqual(x.holding[0]?.conditions.map((c) => [c.type, c.state]), [['CliAgentReady', 'False']]);
  });

  it('a node no gate holds says so', async () => {
    const r = await podlife(kubeconfig, ['explain', `nodes/${open}`, '-o', 'wide']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Node ${open}: no readiness gate holds it$`, 'm'));
    assert.match(r.stdout, new RegExp(`open\\s+rule ${rule}\\s.*\\[bootstrap-only, satisfied\\]`));
  });

  it('an unknown node: exit 1 and a message naming it', async () => {
    const r = await podlife(kubeconfig, ['explain', 'node', `cli-nope-${suffix}`]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`node cli-nope-${suffix} not found`));
  });

  it('an unknown --context: exit 1 and a message naming it', async () => {
    const r = await podlife(kubeconfig, ['nodes', '--context', `nope-${suffix}`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`--context "nope-${suffix}": no such context`));
  });
});
