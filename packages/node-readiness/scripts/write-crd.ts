// Renders the NodeReadinessRule CRD object to deploy/crds/nodereadinessrules.yaml.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { nodeReadinessRuleCrd } from '../src/crd.js';

const target = new URL('../../../deploy/crds/nodereadinessrules.yaml', import.meta.url);
const header = '# Generated from packages/node-readiness/src/crd.ts by packages/node-readiness/scripts/write-crd.ts; edit the source, not this file.\n';
writeFileSync(target, header + stringify(nodeReadinessRuleCrd, { lineWidth: 0 }));
