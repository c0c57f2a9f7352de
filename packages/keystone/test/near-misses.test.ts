import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { annotationNearMisses } from '../src/index.js';
import { editDistance, nearestKnownKey } from '../src/near-misses.js';

describe('annotations podlife ignores although they look meant for it', () => {
  describe('a typo in a key names the key it is closest to', () => {
    for (const [typo, meant] of [
      ['roles.podlife.dev/proxy', 'role.podlife.dev/proxy'],
      ['role.podlfe.dev/proxy', 'role.podlife.dev/proxy'],
      ['stop.podife.dev/proxy', 'stop.podlife.dev/proxy'],
      ['sidecar.alpha.kubernetes.io/proxy', 'sidecars.alpha.kubernetes.io/proxy'],
      ['podlife.dev/on-keystone-exti', 'podlife.dev/on-keystone-exit'],
      ['podlife.dev/completions', 'podlife.dev/completion'],
      ['podlife.dev/rol', 'role.podlife.dev/<container>'],
      ['podlife.dev/stop', 'stop.podlife.dev/<container>'],
    ] as const) {
      it(`${typo} -> ${meant}`, () => {
        assert.equal(nearestKnownKey(typo), meant);
        assert.deepEqual(annotationNearMisses({ [typo]: 'sidecar' }), [`annotation ${typo} is not a podlife key and is ignored: did you mean ${meant}?`]);
      });
    }
  });

  it('never reports a key podlife reads or writes, nor keys of other domains', () => {
    const fine = {
      'role.podlife.dev/proxy': 'sidecar',
      'stop.podlife.dev/proxy': 'preset:envoy',
      'sidecars.alpha.kubernetes.io/log': 'sidecar',
      'native.podlife.dev/proxy': 'sidecar',
      'policy.podlife.dev/proxy': 'mesh/istio-proxy',
      'podlife.dev/policies': 'mesh',
      'podlife.dev/on-keystone-exit': 'TerminatePod',
      'podlife.dev/native-sidecars': 'auto',
      'podlife.dev/completion': 'phase',
      'podlife.dev/network-conditions': 'true',
      'kubectl.kubernetes.io/default-container': 'app',
      'sidecar.istio.io/inject': 'true',
      'prometheus.io/port': '9090',
    };
    assert.deepEqual(annotationNearMisses(fine), []);
  });

  it('an unknown key in the podlife.dev domain is named even when nothing is close', () => {
    assert.deepEqual(annotationNearMisses({ 'podlife.dev/keystone-grace-seconds': '30' }), ['annotation podlife.dev/keystone-grace-seconds is in the podlife.dev domain but is not a podlife key, and is ignored']);
  });

  it('a stop spec on a container with no role, in a pod with no keystone, is named as unused', () => {
    assert.deepEqual(annotationNearMisses({ 'stop.podlife.dev/proxy': 'preset:envoy' }), [
      'stop.podlife.dev/proxy is set but container proxy has no role (role.podlife.dev/proxy: sidecar) and the pod has no keystone, so podlife never stops it and the stop spec is unused',
    ]);
    // With a keystone, rule K stops every other container with its stop spec: it is used.
    assert.deepEqual(annotationNearMisses({ 'stop.podlife.dev/worker': 'signal:INT', 'role.podlife.dev/app': 'keystone' }), []);
    assert.deepEqual(annotationNearMisses({ 'stop.podlife.dev/proxy': 'preset:envoy', 'role.podlife.dev/proxy': 'sidecar' }), []);
  });

  it('lists at most five, then how many more', () => {
    const many = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`roles.podlife.dev/c${i}`, 'sidecar']));
    const out = annotationNearMisses(many);
    assert.equal(out.length, 6);
    assert.equal(out[5], 'and 3 more annotations podlife ignores');
  });

  it('edit distance', () => {
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('role.podlife.dev/', 'roles.podlife.dev/'), 1);
    assert.equal(editDistance('abc', 'abcdefgh', 2), 3);
  });
});
