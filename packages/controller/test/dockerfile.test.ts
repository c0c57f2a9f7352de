import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ociLayout, parseDockerfile, tarOf, type TarEntry } from '../../../scripts/controller-image.mjs';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dockerfile = readFileSync(`${root}deploy/Dockerfile`, 'utf8');
const lock = JSON.parse(readFileSync(`${root}deploy/image-base.json`, 'utf8')) as { node: { version: string } };
const pinnedNode = (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { devDependencies: { node: string } }).devDependencies.node;

const valid = [
  'FROM example/base:1@sha256:' + 'a'.repeat(64),
  'COPY app /app',
  'WORKDIR /app',
  'USER 65532:65532',
  'EXPOSE 9443 8080',
  'ENTRYPOINT ["/usr/local/bin/node", "/app/dist/main.js"]',
].join('\n');

describe('the controller image build', () => {
  it('never disables corepack\'s integrity check', () => {
    assert.doesNotMatch(dockerfile, /COREPACK_INTEGRITY_KEYS/);
  });

  it('the Dockerfile pins its base by digest, built from the Node release the repository pins, non-root', () => {
    const recipe = parseDockerfile(dockerfile);
    assert.match(recipe.from.digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(lock.node.version, pinnedNode);
    assert.ok(recipe.from.name.includes(`:${pinnedNode}-`), recipe.from.name);
    assert.match(recipe.user, /^[1-9]\d*:\d+$/);
  });

  it('reads the subset it builds and refuses anything else, naming the line', () => {
    assert.deepEqual(parseDockerfile(valid), {
      from: { name: 'example/base:1', digest: `sha256:${'a'.repeat(64)}` },
      copy: { src: 'app', dest: '/app' },
      workdir: '/app',
      user: '65532:65532',
      expose: ['9443', '8080'],
      entrypoint: ['/usr/local/bin/node', '/app/dist/main.js'],
    });
    const bad: [string, RegExp][] = [
      [valid.replace(/@sha256:a+/, ''), /FROM must name its base by digest/],
      [valid.replace('USER 65532:65532', 'USER nonroot'), /USER must be numeric/],
      [valid.replace('USER 65532:65532', 'USER 0:0'), /must not be root/],
      [valid.replace('ENTRYPOINT [', 'ENTRYPOINT node ['), /exec form/],
      [`${valid}\nRUN rm -rf /`, /Dockerfile:7: RUN is not built here/],
      [`${valid}\nUSER 1:1`, /Dockerfile:7: a second USER/],
      [valid.replace('COPY app /app\n', ''), /no COPY/],
      [valid.replace('EXPOSE 9443 8080', 'EXPOSE http'), /EXPOSE http is not a port/],
    ];
    for (const [text, error] of bad) assert.throws(() => parseDockerfile(text), error);
  });

  it('writes tars that tar reads back, sorted, owned by 0:0, dated 0, long names included', () => {
    const long = `app/node_modules/.pnpm/${'x'.repeat(120)}/node_modules/${'y'.repeat(90)}/index.js`;
    const entries: TarEntry[] = [
      { name: 'b/', type: '5', mode: 0o755 },
      { name: 'a', type: '0', mode: 0o644, data: Buffer.from('hello\n') },
      { name: 'b/link', type: '2', mode: 0o777, linkname: `../${'z'.repeat(150)}` },
      { name: long, type: '0', mode: 0o755, data: Buffer.from('x') },
      { name: `${'p'.repeat(200)}/f`, type: '0', mode: 0o644, data: Buffer.alloc(0) },
    ];
    const tar = tarOf(entries);
    assert.deepEqual(tarOf([...entries].reverse()), tar, 'the order of the input does not matter');
    const dir = mkdtempSync(join(tmpdir(), 'tar-test-'));
    try {
      writeFileSync(join(dir, 'x.tar'), tar);
      const r = spawnSync('tar', ['--numeric-owner', '--full-time', '-tvf', join(dir, 'x.tar')], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.trim().split('\n');
      assert.deepEqual(lines.map((l) => l.split(/\s+/)[5]), [long, 'a', 'b/', 'b/link', `${'p'.repeat(200)}/f`].sort());
      for (const l of lines) {
        assert.match(l, /^\S+ 0\/0 +\d+ 1970-01-01 00:00:00 /, l);
      }
      assert.ok(lines.some((l) => l.includes(`b/link -> ../${'z'.repeat(150)}`)));
      assert.ok(lines.some((l) => l.startsWith('-rwxr-xr-x') && l.includes(long)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lays out an OCI image whose digest is its manifest\'s and depends only on its inputs', () => {
    const layer = tarOf([{ name: 'f', type: '0', mode: 0o644, data: Buffer.from('1') }]);
    const one = ociLayout({ ref: 'example/x:1', layers: [layer], config: { User: '1:1' } });
    assert.deepEqual(ociLayout({ ref: 'example/x:1', layers: [layer], config: { User: '1:1' } }), one);
    assert.notEqual(ociLayout({ ref: 'example/x:1', layers: [layer], config: { User: '2:2' } }).digest, one.digest);
    const dir = mkdtempSync(join(tmpdir(), 'oci-test-'));
    try {
      writeFileSync(join(dir, 'x.tar'), one.tar);
      assert.equal(spawnSync('tar', ['-xf', join(dir, 'x.tar'), '-C', dir]).status, 0);
      const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations: Record<string, string> }[] };
      assert.equal(index.manifests[0]?.digest, one.digest);
      assert.equal(index.manifests[0]?.annotations['io.containerd.image.name'], 'docker.io/example/x:1');
      const manifest = JSON.parse(readFileSync(join(dir, 'blobs', 'sha256', one.digest.slice(7)), 'utf8')) as { config: { digest: string } };
      const config = JSON.parse(readFileSync(join(dir, 'blobs', 'sha256', manifest.config.digest.slice(7)), 'utf8')) as Record<string, unknown>;
      assert.deepEqual(config.config, { User: '1:1' });
      assert.equal(config.created, '1970-01-01T00:00:00Z');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
