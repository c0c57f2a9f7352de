import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dockerfile = readFileSync(`${root}deploy/Dockerfile`, 'utf8');
const pinnedNode = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { devDependencies: { node: string } }).devDependencies.node;

describe('the controller image build', () => {
  it('never disables corepack\'s integrity check', () => {
    assert.doesNotMatch(dockerfile, /COREPACK_INTEGRITY_KEYS/);
  });

  it('builds from the exact Node release the repository pins, or a digest of it, never a floating tag', () => {
    const args = new Map([...dockerfile.matchAll(/^ARG (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]?.replace(/^\$\{(\w+)\}$/, (_, name: string) => args.get(name) ?? ''));
    assert.ok(froms.length > 0);
    for (const image of froms) {
      assert.ok(image === undefined || image.startsWith(`node:${pinnedNode}-`) || /@sha256:[0-9a-f]{64}$/.test(image), `FROM ${image}`);
    }
  });
});
