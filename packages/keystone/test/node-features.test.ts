import assert from 'node:assert/strict';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import sinon from 'sinon';
import { nodesSupportNativeSidecars } from '../src/kubelet-version.js';
import { RESTART_ALL_CONTAINERS_FEATURE, candidateNodes, nodesLacking, perNodeList } from '../src/node-features.js';

const node = (name: string, version = 'v1.37.2', labels?: Record<string, string>, declares = true): V1Node => ({
  metadata: { name, ...(labels ? { labels } : {}) },
  status: { nodeInfo: { kubeletVersion: version } as never, ...(declares ? { declaredFeatures: [RESTART_ALL_CONTAINERS_FEATURE] } : {}) },
});
const podOn = (spec: Partial<NonNullable<V1Pod['spec']>> = {}): V1Pod => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'app' }], ...spec } });

describe('node lists read once per list object (admission cost independent of the cluster size)', () => {
  it('works a question out once per list and again for a new list', () => {
    const nodes = [node('a'), node('b')];
    const compute = sinon.spy((list: readonly V1Node[]) => list.length);
    assert.equal(perNodeList(nodes, 'count', compute), 2);
    assert.equal(perNodeList(nodes, 'count', compute), 2);
    assert.equal(compute.callCount, 1);
    assert.equal(perNodeList([...nodes, node('c')], 'count', compute), 3);
    assert.equal(compute.callCount, 2);
  });

  it('a new list with an old kubelet changes the native-sidecar answer; the old list keeps its own', () => {
    const current = [node('a'), node('b', 'v1.34.4')];
    assert.equal(nodesSupportNativeSidecars(current), true);
    const withOld = [...current, node('old', 'v1.28.9')];
    assert.equal(nodesSupportNativeSidecars(withOld), false);
    assert.equal(nodesSupportNativeSidecars(current), true);
  });

  it('the whole list is its own candidate set (the same array); a bound pod gets its node; a selector its matches', () => {
    const nodes = [node('a', 'v1.37.2', { pool: 'x' }), node('b', 'v1.37.2', { pool: 'y', zone: '1' }), node('c', 'v1.37.2', { pool: 'y', zone: '2' })];
    assert.equal(candidateNodes(podOn(), nodes), nodes);
    assert.deepEqual(candidateNodes(podOn({ nodeName: 'b' }), nodes).map((n) => n.metadata?.name), ['b']);
    assert.deepEqual(candidateNodes(podOn({ nodeName: 'gone' }), nodes), []);
    assert.deepEqual(candidateNodes(podOn({ nodeSelector: { pool: 'y' } }), nodes).map((n) => n.metadata?.name), ['b', 'c']);
    // The same selector written in another key order picks the same nodes (and the same kept array).
    const one = candidateNodes(podOn({ nodeSelector: { zone: '2', pool: 'y' } }), nodes);
    const two = candidateNodes(podOn({ nodeSelector: { pool: 'y', zone: '2' } }), nodes);
    assert.equal(one, two);
    assert.deepEqual(one.map((n) => n.metadata?.name), ['c']);
  });

  it('lacking a declared feature is answered per candidate set', () => {
    const nodes = [node('new', 'v1.37.2', { pool: 'new' }), node('old', 'v1.34.4', { pool: 'old' }, false)];
    assert.deepEqual(nodesLacking(podOn(), nodes, RESTART_ALL_CONTAINERS_FEATURE), ['old']);
    assert.equal(nodesLacking(podOn({ nodeSelector: { pool: 'new' } }), nodes, RESTART_ALL_CONTAINERS_FEATURE), undefined);
    assert.deepEqual(nodesLacking(podOn({ nodeName: 'old' }), nodes, RESTART_ALL_CONTAINERS_FEATURE), ['old']);
    assert.deepEqual(nodesLacking(podOn({ nodeName: 'nowhere' }), nodes, RESTART_ALL_CONTAINERS_FEATURE), []);
  });
});
