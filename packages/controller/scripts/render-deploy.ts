// Writes deploy/*.yaml, the chart deploy/helm/podlife and deploy/observability from the controller's
// code (run: tsx --conditions=@podlife/source packages/controller/scripts/render-deploy.ts).
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chartFiles } from '../src/deploy/chart.js';
import { deployFiles, renderYaml } from '../src/deploy/manifests.js';
import { observabilityFiles } from '../src/deploy/observability.js';
import { POLICY_CRD_FILE, policyCrdYaml } from '../src/deploy/crds.js';

const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
const write = (path: string, content: string) => {
  mkdirSync(dirname(deployDir + path), { recursive: true });
  writeFileSync(deployDir + path, content);
  console.log(`deploy/${path}`);
};
for (const file of deployFiles()) write(file.name, renderYaml(file));
write(`crds/${POLICY_CRD_FILE}`, policyCrdYaml());
for (const file of observabilityFiles()) write(`observability/${file.path}`, file.content);
// The chart is wholly generated: a file the generator no longer makes must not linger.
rmSync(`${deployDir}helm/podlife`, { recursive: true, force: true });
for (const file of chartFiles(readFileSync(`${deployDir}crds/nodereadinessrules.yaml`, 'utf8'))) write(`helm/podlife/${file.path}`, file.content);
