import assert from 'node:assert/strict';
import { networkReady, sandboxReady } from '../src/index.js';
import { ms, pod, startedPod } from './fixtures.js';

describe('sandboxReady', () => {
  describe('when the kubelet writes the condition', () => {
    it('is the PodReadyToStartContainers condition, with the time since it transitioned', () => {
      const r = sandboxReady(startedPod().build(), ms(13));
      assert.equal(r.status, 'True');
      assert.equal(r.source, 'condition');
      assert.equal(r.sinceMs, ms(3));
      assert.equal(r.forMs, 10_000);
    });

    it('reads PodHasNetwork on 1.25-1.27 clusters', () => {
      const p = pod().container('app').scheduled(1).condition('PodHasNetwork', 'False', 2).build();
      const r = sandboxReady(p, ms(5));
      assert.deepEqual([r.status, r.source, r.forMs], ['False', 'condition', 3000]);
    });

    it('trusts a False condition over a pod IP (the sandbox died after it got one)', () => {
      const p = startedPod().condition('PodReadyToStartContainers', 'False', 20).build();
      assert.equal(sandboxReady(p).status, 'False');
    });

    it('leaves forMs out when no time is given', () => {
      assert.equal(sandboxReady(startedPod().build()).forMs, undefined);
    });
  });

  describe('on clusters without the condition (inferred)', () => {
    it('is False while the pod is not bound to a node', () => {
      const r = sandboxReady(pod().container('app').build());
      assert.deepEqual([r.status, r.source, r.reason], ['False', 'inferred', 'NotScheduled']);
    });

    it('is True from the first container start, since then', () => {
      const p = pod().container('app').container('side').scheduled(1).running('side', 5).running('app', 4).build();
      const r = sandboxReady(p, ms(10));
      assert.deepEqual([r.status, r.source, r.reason, r.sinceMs], ['True', 'inferred', 'ContainerStarted', ms(4)]);
    });

    it('counts a container that started and has terminated', () => {
      const p = pod().container('job').scheduled(1).terminated('job', 0, 3, 8).phase('Running').build();
      assert.equal(sandboxReady(p).status, 'True');
    });

    it('is True once the network plugin assigned a pod IP', () => {
      const r = sandboxReady(pod().container('app').scheduled(1).ips('10.0.0.3').build());
      assert.deepEqual([r.status, r.reason], ['True', 'PodIPAssigned']);
    });

    it('does not take a hostNetwork pod IP (the node IP) as proof', () => {
      const r = sandboxReady(pod().container('app').hostNetwork().scheduled(1).ips('192.168.1.4').build());
      assert.equal(r.status, 'Unknown');
    });

    it('is Unknown for a scheduled pod with no IP and no started container', () => {
      const r = sandboxReady(pod().container('app').scheduled(1).build());
      assert.deepEqual([r.status, r.source], ['Unknown', 'inferred']);
    });

    it('is False once the pod is terminal, since the last container finished', () => {
      const p = pod().container('job').scheduled(1).ips('10.0.0.3').terminated('job', 0, 3, 9).phase('Succeeded').build();
      const r = sandboxReady(p);
      assert.deepEqual([r.status, r.reason, r.sinceMs], ['False', 'PodTerminal', ms(9)]);
    });
  });
});

describe('networkReady', () => {
  it('without a family is the sandbox readiness', () => {
    assert.equal(networkReady(startedPod().build()).status, 'True');
  });

  it('is True for a family the pod has an address of', () => {
    const r = networkReady(startedPod().ips('10.1.0.7', 'fd00::7').build(), 'IPv6');
    assert.deepEqual([r.status, r.source], ['True', 'condition']);
  });

  it('is False for the missing family of a half-up dual-stack pod', () => {
    const r = networkReady(startedPod().ips('10.1.0.7').build(), 'IPv6');
    assert.equal(r.status, 'False');
    assert.equal(r.reason, 'NoAddressOfFamily');
    assert.match(r.message, /no IPv6 address.*10\.1\.0\.7/);
  });

  it('is False for every family while the sandbox is not ready', () => {
    const p = startedPod().condition('PodReadyToStartContainers', 'False', 9).build();
    assert.equal(networkReady(p, 'IPv4').status, 'False');
  });

  it('is True for hostNetwork pods when the sandbox is, with the node family', () => {
    const p = startedPod().hostNetwork().ips('192.168.1.4').build();
    const r = networkReady(p, 'IPv4');
    assert.deepEqual([r.status, r.reason], ['True', 'HostNetwork']);
    assert.equal(networkReady(p, 'IPv6').status, 'False');
  });

  it('infers a family from its address on clusters without the condition', () => {
    const p = pod().container('app').scheduled(1).ips('fd00::9').build();
    assert.deepEqual([networkReady(p, 'IPv6').status, networkReady(p, 'IPv6').source], ['True', 'inferred']);
    assert.equal(networkReady(p, 'IPv4').status, 'False');
  });

  it('stays Unknown for a family when nothing is known', () => {
    assert.equal(networkReady(pod().container('app').scheduled(1).build(), 'IPv4').status, 'Unknown');
  });
});
