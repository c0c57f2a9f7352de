import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { applyJsonPatch } from '@podlife/core/testing';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { lifecycleMutator, readLifecycle } from '../src/index.js';
import { applyPolicies, parseRecord } from '../src/policy/apply.js';
import { withPolicies } from '../src/policy/mutator.js';
import { missedPolicyNotes, roleNotes } from '../src/policy/notes.js';
import { compilePolicy, globMatches, imageGlobProblem, imageRepository, namespaceSelectorProblem, type CompiledPolicy, type LifecyclePolicySpec } from '../src/policy/policy.js';
import { SIDECAR_PRESET_NAMES, SIDECAR_PRESETS } from '../src/policy/presets.js';
import { judgePolicies, overlapMessage, policiesInForce } from '../src/policy/status.js';

const team = { matchLabels: { team: 'batch' } };
const nsLabels = { team: 'batch', 'kubernetes.io/metadata.name': 'jobs' };

function compiled(name: string, spec: Partial<LifecyclePolicySpec>): CompiledPolicy {
  const out = compilePolicy({ metadata: { name }, spec: { namespaceSelector: team, ...spec } });
  if (!out.ok) throw new Error(JSON.stringify(out.problems));
  return out.policy;
}

function jobPod(extra: { annotations?: Record<string, string>; containers?: { name: string; image: string }[] } = {}): V1Pod {
  return {
    metadata: { name: 'p', namespace: 'jobs', labels: { app: 'etl' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'etl', uid: 'u', controller: true }], ...(extra.annotations ? { annotations: extra.annotations } : {}) },
    spec: { restartPolicy: 'Never', containers: extra.containers ?? [{ name: 'app', image: 'busybox' }, { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.24.0' }] },
  };
}

describe('LifecyclePolicy: checks (ADR 0268)', () => {
  it('compiles presets and matches into one list, presets after the containers', () => {
    const p = compiled('mesh', { presets: ['istio-proxy'], containers: [{ name: 'agent', containerName: 'agent', role: 'sidecar', stop: 'signal:INT' }] });
    assert.deepEqual(p.matches.map((m) => `${m.name}=${m.stop}`), ['agent=signal:INT', 'istio-proxy=preset:istio']);
  });

  it('"well-known" names every preset, each once', () => {
    const p = compiled('all', { presets: ['well-known', 'istio-proxy'] });
    assert.deepEqual(p.matches.map((m) => m.name), [...SIDECAR_PRESET_NAMES]);
  });

  for (const [what, spec, field] of [
    ['an unknown preset', { presets: ['nginx'] }, 'spec.presets[0]'],
    ['a bad glob', { containers: [{ name: 'x', imageRepository: 'Istio/*', role: 'sidecar' }] }, 'spec.containers[0].imageRepository'],
    ['a glob of stars only', { containers: [{ name: 'x', imageRepository: '**', role: 'sidecar' }] }, 'spec.containers[0].imageRepository'],
    ['an image field', { containers: [{ name: 'x', containerName: 'x', role: 'sidecar', image: 'evil:latest' }] }, 'spec.containers[0].image'],
    ['a command field', { containers: [{ name: 'x', containerName: 'x', role: 'sidecar', command: ['sh'] }] }, 'spec.containers[0].command'],
    ['an unknown stop preset', { containers: [{ name: 'x', containerName: 'x', role: 'sidecar', stop: 'preset:nope' }] }, 'spec.containers[0].stop'],
    ['both name and image', { containers: [{ name: 'x', containerName: 'x', imageRepository: '*/x', role: 'sidecar' }] }, 'spec.containers[0]'],
    ['a selector of every namespace', { namespaceSelector: {} }, 'spec.namespaceSelector'],
    ['a selector with only NotIn', { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['x'] }] } }, 'spec.namespaceSelector'],
    ['a selector naming kube-system', { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }, 'spec.namespaceSelector'],
    ['nothing to match', {}, 'spec'],
  ] as const) {
    it(`refuses ${what}, naming ${field}`, () => {
      const out = compilePolicy({ metadata: { name: 'p' }, spec: { namespaceSelector: team, ...(spec as object) } as LifecyclePolicySpec });
      assert.equal(out.ok, false);
      assert.ok(!out.ok && out.problems.some((p) => p.field === field), JSON.stringify(!out.ok && out.problems));
    });
  }

  it('refuses an exec: name the controller configuration does not define', () => {
    const spec = { namespaceSelector: team, containers: [{ name: 'x', containerName: 'x', role: 'sidecar' as const, stop: 'exec:drain' }] };
    assert.equal(compilePolicy({ metadata: { name: 'p' }, spec }, { execCommands: { drain: ['/bin/drain'] } }).ok, true);
    const out = compilePolicy({ metadata: { name: 'p' }, spec }, { execCommands: {} });
    assert.ok(!out.ok && out.problems[0]?.field === 'spec.containers[0].stop' && /no command "drain"/.test(out.problems[0].message));
  });

  it('every preset stop spec is one the annotation contract reads', () => {
    for (const name of SIDECAR_PRESET_NAMES) {
      const pod = jobPod({ annotations: { [`role.podlife.dev/s`]: 'sidecar', [`stop.podlife.dev/s`]: SIDECAR_PRESETS[name].stop }, containers: [{ name: 'app', image: 'a' }, { name: 's', image: 'b' }] });
      assert.equal(readLifecycle(pod).kind, 'valid', name);
    }
  });
});

describe('image globs', () => {
  it('reads the repository without tag or digest', () => {
    assert.equal(imageRepository('docker.io/istio/proxyv2:1.24.0'), 'docker.io/istio/proxyv2');
    assert.equal(imageRepository('registry:5000/envoy@sha256:abc'), 'registry:5000/envoy');
    assert.equal(imageRepository('registry:5000/envoy'), 'registry:5000/envoy');
  });

  it('"*" is any run of characters', () => {
    assert.ok(globMatches('*/proxyv2', 'docker.io/istio/proxyv2'));
    assert.ok(!globMatches('*/proxyv2', 'proxyv2'));
    assert.ok(globMatches('*/dapr/daprd', 'ghcr.io/dapr/daprd'));
    assert.ok(globMatches('*daprio/daprd', 'daprio/daprd'));
    assert.ok(!globMatches('gcr.io/*/x', 'gcr.io/a/y'));
  });

  it('property: a glob matches what it was cut from, with each cut part replaced by "*"', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z0-9./-]{0,6}$/), { minLength: 1, maxLength: 5 }), fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }), (parts, cut) => {
        const text = parts.join('');
        const glob = parts.map((p, i) => (cut[i] ? '*' : p)).join('');
        assert.ok(globMatches(glob, text), `${glob} ~ ${text}`);
      }),
    );
  });

  it('property: a glob without "*" matches only itself', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9./-]{1,12}$/), fc.stringMatching(/^[a-z0-9./-]{0,12}$/), (a, b) => assert.equal(globMatches(a, b), a === b)));
  });

  it('matching stays linear on a hostile glob (many stars, long text)', () => {
    const start = process.hrtime.bigint();
    assert.equal(globMatches('*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(20_000)), false);
    assert.ok(Number(process.hrtime.bigint() - start) / 1e6 < 500);
  });

  it('bad globs name what is wrong', () => {
    assert.match(imageGlobProblem('') ?? '', /non-empty/);
    assert.match(imageGlobProblem('a b') ?? '', /may only contain/);
    assert.match(imageGlobProblem('x'.repeat(256)) ?? '', /at most 255/);
    assert.equal(imageGlobProblem('*/proxyv2'), undefined);
  });

  it('namespace selectors: a positive term is needed, system namespaces never', () => {
    assert.equal(namespaceSelectorProblem(team), undefined);
    assert.equal(namespaceSelectorProblem({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['jobs'] }] }), undefined);
    assert.match(namespaceSelectorProblem({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'Exists' }] }) ?? '', /every namespace/);
    assert.match(namespaceSelectorProblem({ matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['jobs', 'kube-node-lease'] }] }) ?? '', /kube-node-lease/);
  });
});

describe('applying policies (ADR 0268)', () => {
  const ctx = { namespaceLabels: nsLabels };

  it('writes the annotations a user would, and names the policy and match', () => {
    const app = applyPolicies(jobPod(), [compiled('mesh', { presets: ['well-known'] })], ctx);
    assert.deepEqual(app.annotations, {
      'policy.podlife.dev/istio-proxy': 'mesh/istio-proxy',
      'role.podlife.dev/istio-proxy': 'sidecar',
      'stop.podlife.dev/istio-proxy': 'preset:istio',
      'podlife.dev/policies': 'mesh',
    });
    assert.deepEqual(parseRecord('mesh/istio-proxy:pod'), { policy: 'mesh', match: 'istio-proxy', podWon: true });
  });

  it('matches by image repository when the name differs', () => {
    const pod = jobPod({ containers: [{ name: 'app', image: 'a' }, { name: 'proxy', image: 'gcr.io/istio-release/proxyv2:1.2' }] });
    assert.equal(applyPolicies(pod, [compiled('mesh', { presets: ['istio-proxy'] })], ctx).annotations['role.podlife.dev/proxy'], 'sidecar');
  });

  it('applies nothing outside the namespaces, pods and owners it selects', () => {
    const p = compiled('mesh', { presets: ['istio-proxy'], podSelector: { matchLabels: { app: 'etl' } }, ownerKinds: ['Job'] });
    assert.deepEqual(applyPolicies(jobPod(), [p], { namespaceLabels: { team: 'web' } }).annotations, {});
    assert.deepEqual(applyPolicies(jobPod(), [p], { namespaceLabels: undefined }).annotations, {});
    const other = jobPod();
    other.metadata!.labels = { app: 'web' };
    assert.deepEqual(applyPolicies(other, [p], ctx).annotations, {});
    const rs = jobPod();
    rs.metadata!.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r', uid: 'u', controller: true }];
    assert.deepEqual(applyPolicies(rs, [p], ctx).annotations, {});
  });

  it("the pod's own annotations win for that container; explain can read which won", () => {
    const pod = jobPod({ annotations: { 'stop.podlife.dev/istio-proxy': 'signal:INT' } });
    const app = applyPolicies(pod, [compiled('mesh', { presets: ['istio-proxy'] })], ctx);
    assert.equal(app.annotations['role.podlife.dev/istio-proxy'], undefined);
    assert.equal(app.annotations['policy.podlife.dev/istio-proxy'], 'mesh/istio-proxy:pod');
  });

  it('an enforcing policy replaces the pod’s own keys', () => {
    const pod = jobPod({ annotations: { 'role.podlife.dev/istio-proxy': 'keystone', 'podlife.dev/completion': 'containers' } });
    const app = applyPolicies(pod, [compiled('mesh', { presets: ['istio-proxy'], enforce: true, completion: 'phase' })], ctx);
    assert.equal(app.annotations['role.podlife.dev/istio-proxy'], 'sidecar');
    assert.equal(app.annotations['podlife.dev/completion'], 'phase');
    assert.equal(app.annotations['policy.podlife.dev/istio-proxy'], 'mesh/istio-proxy');
  });

  it('two policies: the first by name decides each container, the conflict names both, the same on every order given', () => {
    const a = compiled('a-mesh', { presets: ['istio-proxy'] });
    const b = compiled('b-mesh', { containers: [{ name: 'proxy', containerName: 'istio-proxy', role: 'sidecar', stop: 'signal:TERM' }] });
    const app = applyPolicies(jobPod(), [a, b], ctx);
    assert.equal(app.annotations['stop.podlife.dev/istio-proxy'], 'preset:istio');
    assert.deepEqual(app.conflicts, [{ container: 'istio-proxy', winner: 'a-mesh', loser: 'b-mesh' }]);
  });

  it('policies claiming different containers both apply', () => {
    const pod = jobPod({ containers: [{ name: 'app', image: 'a' }, { name: 'istio-proxy', image: 'p' }, { name: 'vault-agent', image: 'v' }] });
    const app = applyPolicies(pod, [compiled('a', { presets: ['istio-proxy'] }), compiled('b', { presets: ['vault-agent'] })], ctx);
    assert.equal(app.annotations['podlife.dev/policies'], 'a,b');
    assert.equal(app.conflicts.length, 0);
  });

  it('never leaves a pod without a main container', () => {
    const pod = jobPod({ containers: [{ name: 'envoy', image: 'envoyproxy/envoy:v1' }] });
    const app = applyPolicies(pod, [compiled('mesh', { presets: ['envoy'] })], ctx);
    assert.deepEqual(app.annotations, {});
    assert.match(app.warnings[0] ?? '', /no main container/);
  });

  it('a match that forbids native conversion turns it off for the pod', () => {
    const app = applyPolicies(jobPod(), [compiled('mesh', { containers: [{ name: 'proxy', containerName: 'istio-proxy', role: 'sidecar', stop: 'preset:istio', nativeConversion: false }] })], ctx);
    assert.equal(app.annotations['podlife.dev/native-sidecars'], 'false');
  });

  it('property: a second pass over the annotated pod writes nothing (reinvocation is idempotent)', () => {
    const policies = [compiled('a', { presets: ['well-known'], completion: 'phase' }), compiled('b', { presets: ['istio-proxy'], onKeystoneExit: 'TerminatePod' })];
    const names = ['app', 'istio-proxy', 'daprd', 'fluent-bit', 'vault-agent', 'worker'];
    fc.assert(
      fc.property(fc.subarray(names, { minLength: 1 }), fc.option(fc.constantFrom('signal:INT', 'preset:istio')), (chosen, own) => {
        const pod = jobPod({ containers: chosen.map((name) => ({ name, image: 'x' })), ...(own ? { annotations: { 'stop.podlife.dev/istio-proxy': own } } : {}) });
        if (own && !chosen.includes('istio-proxy')) return;
        const first = applyPolicies(pod, policies, ctx);
        const after = { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata?.annotations, ...first.annotations } } };
        assert.deepEqual(applyPolicies(after, policies, ctx).annotations, {});
      }),
    );
  });
});

describe('the webhook with policies in front', () => {
  const source = (policies: CompiledPolicy[]) => ({ policies: () => policies, namespaceLabels: (ns: string) => (ns === 'jobs' ? nsLabels : undefined) });
  const request = { uid: '1', operation: 'CREATE', namespace: 'jobs' };

  it('a pod no policy selects goes to the inner mutation as it came', () => {
    let seen: V1Pod | undefined;
    const pod = jobPod();
    withPolicies((p) => ((seen = p), []), source([compiled('mesh', { presets: ['linkerd-proxy'] })]))(pod, request);
    assert.equal(seen, pod);
  });

  it('the patched pod reads as valid with the policy\'s roles, labelled managed and converted when the nodes allow', () => {
    const mutate = withPolicies(lifecycleMutator(() => [{ status: { nodeInfo: { kubeletVersion: 'v1.37.2' } as never } }]), source([compiled('mesh', { presets: ['istio-proxy', 'vault-agent'] })]));
    const pod = jobPod({ containers: [{ name: 'app', image: 'a' }, { name: 'istio-proxy', image: 'p' }, { name: 'vault-agent', image: 'v' }] });
    const out = mutate(pod, request) as { ops: never[]; warnings: string[] };
    const patched = applyJsonPatch(structuredClone(pod), out.ops) as V1Pod;
    assert.equal(patched.metadata?.annotations?.['podlife.dev/policies'], 'mesh');
    assert.equal(patched.metadata?.labels?.['podlife.dev/managed'], 'true');
    // A TERM stop has a native form; pilot-agent's POST-only quit endpoint has none, so podlife stops it itself.
    assert.deepEqual(patched.spec?.initContainers?.map((c) => `${c.name}:${c.restartPolicy}`), ['vault-agent:Always']);
    assert.equal(patched.metadata?.annotations?.['native.podlife.dev/istio-proxy'], 'unconverted');
    assert.equal(readLifecycle(patched).kind, 'valid');
  });

  it('conflicts become admission warnings naming both policies', () => {
    const a = compiled('a-mesh', { presets: ['istio-proxy'] });
    const b = compiled('b-mesh', { containers: [{ name: 'p', containerName: 'istio-proxy', role: 'sidecar' }] });
    const out = withPolicies(() => [], source([a, b]))(jobPod(), request) as { warnings: string[] };
    assert.match(out.warnings[0] ?? '', /a-mesh and b-mesh/);
  });
});

describe('policy status (ADR 0269)', () => {
  const ns = (name: string, labels: Record<string, string> = {}) => ({ name, labels: { 'kubernetes.io/metadata.name': name, ...labels } });
  const raw = (name: string, spec: Partial<LifecyclePolicySpec>) => ({ metadata: { name }, spec: { namespaceSelector: team, ...spec } as LifecyclePolicySpec });
  const namespaces = [ns('jobs', { team: 'batch', 'podlife.dev/policies': 'enabled' }), ns('etl', { team: 'batch' }), ns('web')];

  it('counts the namespaces selected and those the webhook cannot reach', () => {
    const [j] = judgePolicies([raw('mesh', { presets: ['istio-proxy'] })], namespaces);
    assert.equal(j?.matchedNamespaces, 2);
    assert.equal(j?.unlabelledNamespaces, 1);
    assert.equal(j?.accepted.status, 'True');
    assert.match(j?.accepted.message ?? '', /lack the label podlife.dev\/policies=enabled/);
  });

  it('a policy that selects kube-system by its labels is not in force, and says so', () => {
    const judged = judgePolicies([raw('mesh', { presets: ['istio-proxy'] })], [...namespaces, ns('kube-system', { team: 'batch' })]);
    assert.equal(judged[0]?.accepted.reason, 'SelectsSystemNamespace');
    assert.deepEqual(policiesInForce(judged), []);
  });

  it('an invalid spec names the field and is ignored', () => {
    const judged = judgePolicies([raw('bad', { containers: [{ name: 'x', containerName: 'x', role: 'sidecar', stop: 'exec:nope' }] })], namespaces, { execCommands: {} });
    assert.equal(judged[0]?.accepted.reason, 'InvalidSpec');
    assert.match(judged[0]?.accepted.message ?? '', /spec\.containers\[0\]\.stop/);
    assert.deepEqual(policiesInForce(judged), []);
  });

  it('two policies sharing a namespace and a container overlap, both told, the same whatever the list order', () => {
    const a = raw('a-mesh', { presets: ['istio-proxy'] });
    const b = raw('b-mesh', { presets: ['istio-proxy', 'vault-agent'] });
    for (const list of [[a, b], [b, a]]) {
      const judged = judgePolicies(list, namespaces);
      assert.deepEqual(judged.map((j) => j.name), ['a-mesh', 'b-mesh']);
      assert.deepEqual(judged.map((j) => j.overlaps.map((o) => o.other)), [['b-mesh'], ['a-mesh']]);
      assert.match(overlapMessage('b-mesh', judged[1]!.overlaps[0]!), /^policies a-mesh and b-mesh both select namespace\(s\) jobs, etl and match istio-proxy/);
    }
  });

  it('policies over different containers do not overlap', () => {
    const judged = judgePolicies([raw('a', { presets: ['istio-proxy'] }), raw('b', { presets: ['vault-agent'] })], namespaces);
    assert.deepEqual(judged.map((j) => j.overlaps.length), [0, 0]);
  });
});

describe('explain notes: why a container is a sidecar', () => {
  const ctx = { namespaceLabels: { ...nsLabels, 'podlife.dev/policies': 'enabled' } };

  it('names the policy and match, or the annotation, or says the pod\'s own won', () => {
    const mesh = compiled('mesh', { presets: ['istio-proxy', 'vault-agent'] });
    const pod = jobPod({ annotations: { 'role.podlife.dev/app': 'keystone', 'stop.podlife.dev/vault-agent': 'signal:INT' }, containers: [{ name: 'app', image: 'a' }, { name: 'istio-proxy', image: 'p' }, { name: 'vault-agent', image: 'v' }] });
    const app = applyPolicies(pod, [mesh], ctx);
    pod.metadata!.annotations = { ...pod.metadata!.annotations, ...app.annotations };
    assert.deepEqual(roleNotes(pod), [
      'app is a keystone: from its annotation role.podlife.dev/app',
      'istio-proxy is a sidecar, stopped by preset:istio: from policy mesh, match istio-proxy',
      "vault-agent is a main container, stopped by signal:INT: from the pod's own annotations, which won over policy mesh, match vault-agent (set enforce: true on the policy to make it win)",
    ]);
  });

  it('names a native sidecar', () => {
    const pod = jobPod();
    pod.spec!.initContainers = [{ name: 'proxy', image: 'p', restartPolicy: 'Always' }];
    assert.match(roleNotes(pod)[0] ?? '', /^proxy is a native sidecar/);
  });

  it('names a pod a policy would have marked, with the fix', () => {
    const mesh = compiled('mesh', { presets: ['istio-proxy'] });
    assert.match(missedPolicyNotes(jobPod(), [mesh], ctx.namespaceLabels)[0] ?? '', /^policy mesh would mark container\(s\) istio-proxy, but this pod carries no policy record: it was created before/);
    assert.match(missedPolicyNotes(jobPod(), [mesh], nsLabels)[0] ?? '', /kubectl label namespace jobs podlife.dev\/policies=enabled/);
    const done = jobPod({ annotations: applyPolicies(jobPod(), [mesh], ctx).annotations as Record<string, string> });
    assert.deepEqual(missedPolicyNotes(done, [mesh], ctx.namespaceLabels), []);
  });
});
