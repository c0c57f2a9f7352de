import assert from 'node:assert/strict';
import { KubeClient, Manager } from '@podlife/core';
import { networkConditionsController } from '../src/index.js';
import { networkConditions, networkConditionsSpec, wantsNetworkConditions } from '../src/network-conditions.js';
import { syncPodConditions } from '../src/pod-controller.js';
import { FakePodApi } from './fake-api.js';
import { pod, startedPod } from './fixtures.js';

const annotated = <T extends { build(): import('@kubernetes/client-node').V1Pod }>(b: T, value = 'true') => {
  const p = b.build();
  p.metadata!.annotations = { 'podlife.dev/network-conditions': value };
  return p;
};
const byType = (p: import('@kubernetes/client-node').V1Pod) => Object.fromEntries(networkConditions(p).map((c) => [c.type, c]));

describe('network conditions', () => {
  it('applies to pods annotated podlife.dev/network-conditions: "true" only', () => {
    assert.equal(wantsNetworkConditions(annotated(startedPod())), true);
    assert.equal(wantsNetworkConditions(annotated(startedPod(), 'yes')), false);
    assert.equal(wantsNetworkConditions(startedPod().build()), false);
  });

  it('publishes both families True on a dual-stack pod that is fully up', () => {
    const c = byType(annotated(startedPod().ips('10.1.0.7', 'fd00::7')));
    assert.equal(c['network.podlife.dev/IPv4Ready']?.status, 'True');
    assert.equal(c['network.podlife.dev/IPv6Ready']?.status, 'True');
  });

  it('publishes the missing family False on a half-up dual-stack pod', () => {
    const c = byType(annotated(startedPod().ips('10.1.0.7')));
    assert.equal(c['network.podlife.dev/IPv4Ready']?.status, 'True');
    assert.deepEqual([c['network.podlife.dev/IPv6Ready']?.status, c['network.podlife.dev/IPv6Ready']?.reason], ['False', 'NoAddressOfFamily']);
  });

  it('publishes both False while the sandbox is not ready', () => {
    const c = byType(annotated(startedPod().condition('PodReadyToStartContainers', 'False', 9)));
    assert.deepEqual(Object.values(c).map((x) => x.status), ['False', 'False']);
  });

  it('says when a status is inferred on a cluster without the sandbox condition', () => {
    const c = byType(annotated(pod().container('app').scheduled(1).ips('10.0.0.4')));
    assert.equal(c['network.podlife.dev/IPv4Ready']?.status, 'True');
    assert.match(c['network.podlife.dev/IPv4Ready']?.message ?? '', /inferred/);
  });

  it('gives messages that do not change with time, so unchanged pods cause no writes', () => {
    const p = annotated(startedPod().ips('10.1.0.7'));
    assert.deepEqual(networkConditions(p), networkConditions(structuredClone(p)));
  });
});

describe('network conditions written on a pod', () => {
  it('the two families go out in one status patch: no reader sees IPv4Ready new and IPv6Ready old', async () => {
    const spec = networkConditionsSpec();
    const api = new FakePodApi(annotated(startedPod().condition('PodReadyToStartContainers', 'False', 9)));
    await syncPodConditions(api, spec, api.pod!, new AbortController().signal);
    api.writeCondition({ type: 'PodReadyToStartContainers', status: 'True' });
    await syncPodConditions(api, spec, api.pod!, new AbortController().signal);
    assert.equal(api.patches.length, 2);
    for (const body of api.patches as { status: { conditions: { type: string }[] } }[]) {
      assert.deepEqual(body.status.conditions.map((c) => c.type).sort(), ['network.podlife.dev/IPv4Ready', 'network.podlife.dev/IPv6Ready']);
    }
    const written = Object.fromEntries((api.pod!.status!.conditions ?? []).map((c) => [c.type, c]));
    assert.equal(written['network.podlife.dev/IPv4Ready']?.status, 'True');
    assert.deepEqual([written['network.podlife.dev/IPv6Ready']?.status, written['network.podlife.dev/IPv6Ready']?.reason], ['False', 'NoAddressOfFamily']);
  });
});

describe('networkConditionsController names', () => {
  it('one per namespace shares a manager (each named after its namespace); a second unscoped one is refused', () => {
    const manager = new Manager({ client: KubeClient.fromConnection({ server: 'http://127.0.0.1:9' }) });
    assert.equal(networkConditionsController(manager, { namespace: 'a' }).name, 'network-conditions/a');
    assert.equal(networkConditionsController(manager, { namespace: 'b' }).name, 'network-conditions/b');
    assert.equal(networkConditionsController(manager).name, 'network-conditions');
    assert.throws(() => networkConditionsController(manager), /a controller named "network-conditions" is already added/);
  });
});
