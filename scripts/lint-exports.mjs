// House rules that the compiler does not check (DESIGN 1):
// - every package has an `exports` map, so its internals stay private;
// - no file reaches into another package's internals (`@podlife/x/src/...` or `../../x/`);
// - dependencies point one way: core <- pod-conditions <- keystone, node-readiness <- controller;
// - core imports only types from @kubernetes/client-node (loading its generated API costs ~90 MiB
//   of RSS, so core loads it on demand, where a kubeconfig is read).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const layers = { core: 0, 'pod-conditions': 1, keystone: 2, 'node-readiness': 1, controller: 3 };
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

for (const pkg of Object.keys(layers)) {
  const dir = join('packages', pkg);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (!manifest.exports) problems.push(`${dir}/package.json has no exports map`);
  for (const file of walk(join(dir, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/from\s+'([^']+)'/g)) {
      const spec = m[1];
      if (/^@podlife\/[^/]+\/(src|dist)\//.test(spec)) problems.push(`${file}: deep import ${spec}`);
      if (/^\.\.\/\.\.\//.test(spec)) problems.push(`${file}: relative import across packages ${spec}`);
      if (pkg === 'core' && spec.startsWith('@kubernetes/client-node') && !/^(import|export)\s+type\b/.test(text.slice(Math.max(text.lastIndexOf('import', m.index), text.lastIndexOf('export', m.index))))) {
        problems.push(`${file}: core imports @kubernetes/client-node for its values; import types only and load it with import() where needed`);
      }
      const dep = /^@podlife\/([^/]+)/.exec(spec)?.[1];
      if (dep && dep in layers && dep !== pkg && !(layers[dep] < layers[pkg])) {
        problems.push(`${file}: ${pkg} must not depend on ${dep}`);
      }
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`exports and layering: ${Object.keys(layers).length} packages checked`);
