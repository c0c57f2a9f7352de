// Writes deploy/*.yaml from the controller's code (run: tsx --conditions=@podlife/source packages/controller/scripts/render-deploy.ts).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deployFiles, renderYaml } from '../src/deploy/manifests.js';

const deployDir = fileURLToPath(new URL('../../../deploy/', import.meta.url));
for (const file of deployFiles()) {
  writeFileSync(deployDir + file.name, renderYaml(file));
  console.log(`deploy/${file.name}`);
}
