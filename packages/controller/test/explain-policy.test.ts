import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { describe, it } from 'mocha';
import { podlifeNotes } from '../src/cli/explain.js';

describe('podlife explain: outcome and why a container is a sidecar', () => {
  const pod: V1Pod = {
    metadata: {
      name: 'etl-x',
      namespace: 'jobs',
      labels: { 'podlife.dev/managed': 'true' },
      annotations: { 'role.podlife.dev/istio-proxy': 'sidecar', 'stop.podlife.dev/istio-proxy': 'preset:istio', 'policy.podlife.dev/istio-proxy': 'mesh/istio-proxy', 'podlife.dev/policies': 'mesh' },
    },
    spec: { restartPolicy: 'Never', containers: [{ name: 'app' }, { name: 'istio-proxy' }] },
    status: {
      phase: 'Running',
      containerStatuses: [
        { name: 'app', image: 'a', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } },
        { name: 'istio-proxy', image: 'p', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 143 } } },
      ],
    },
  };

  it('says the pod succeeded from its main containers, and that the sidecar came from the policy', () => {
    assert.deepEqual(podlifeNotes(pod).slice(0, 2), [
      'outcome: succeeded: every main container exited 0 (app); set aside: istio-proxy (annotated sidecar, exit 143)',
      'istio-proxy is a sidecar, stopped by preset:istio: from policy mesh, match istio-proxy',
    ]);
  });

  it('a plain pod gets no notes', () => {
    assert.deepEqual(podlifeNotes({ metadata: { name: 'x' }, spec: { containers: [{ name: 'a' }] } }), []);
  });
});
