import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { nodeReadinessRuleCrd } from '../src/index.js';

describe('the NodeReadinessRule CRD', () => {
  it('deploy/crds/nodereadinessrules.yaml matches src/crd.ts (regenerate with scripts/write-crd.ts)', () => {
    const file = parse(readFileSync(new URL('../../../deploy/crds/nodereadinessrules.yaml', import.meta.url), 'utf8')) as unknown;
    assert.deepEqual(file, JSON.parse(JSON.stringify(nodeReadinessRuleCrd)));
  });

  it('is cluster-scoped with a status subresource', () => {
    assert.equal(nodeReadinessRuleCrd.spec.scope, 'Cluster');
    assert.deepEqual(nodeReadinessRuleCrd.spec.versions[0]?.subresources, { status: {} });
  });
});
