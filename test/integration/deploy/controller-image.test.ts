/**
 * The controller image as scripts/controller-image.mjs builds it without a container daemon: the
 * base from the pinned Debian packages and Node binary has the digest deploy/Dockerfile pins, two
 * independent builds give the same digests, and the image's own files run the controller as its
 * non-root user (chroot into the unpacked layers, no library of this host used).
 *
 * @releases newest — builds and runs the image; no Kubernetes at all.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOCKERFILE, ensureBaseImage, ensureControllerImage, parseDockerfile, type ControllerImage } from '../../../scripts/controller-image.mjs';

function unpack(tar: string, dir: string): { config: { config: Record<string, unknown> }; layers: string[] } {
  const oci = join(dir, 'oci');
  const rootfs = join(dir, 'rootfs');
  for (const d of [oci, rootfs]) spawnSync('mkdir', ['-p', d]);
  const run = (args: string[]): void => {
    const r = spawnSync('tar', args, { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };
  run(['-xf', tar, '-C', oci]);
  const blob = (digest: string): string => join(oci, 'blobs', 'sha256', digest.slice('sha256:'.length));
  const index = JSON.parse(readFileSync(join(oci, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0]?.digest ?? ''), 'utf8')) as { config: { digest: string }; layers: { digest: string }[] };
  for (const layer of manifest.layers) run(['-xf', blob(layer.digest), '-C', rootfs]);
  return { config: JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8')) as { config: Record<string, unknown> }, layers: manifest.layers.map((l) => l.digest) };
}

describe('the controller image (built without a daemon)', function () {
  this.timeout(10 * 60_000);
  const log = (line: string): void => void process.stderr.write(`      ${line}\n`);
  let image: ControllerImage;
  const scratch = mkdtempSync(join(tmpdir(), 'podlife-image-test-'));
  after(() => rmSync(scratch, { recursive: true, force: true }));

  before(() => {
    image = ensureControllerImage({ log });
  });

  it('is built over the base deploy/Dockerfile pins, and an independent build of that base has the same digest', () => {
    const recipe = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'));
    assert.equal(image.base.digest, recipe.from.digest);
    const again = ensureBaseImage({ log, cacheDir: join(scratch, 'cache') });
    assert.equal(again.digest, recipe.from.digest);
    assert.ok(again.tar.startsWith(scratch), 'the second base was built, not taken from the cache');
  });

  it('has the same digest when built again from this checkout', () => {
    const second = ensureControllerImage({ log });
    log(`${image.ref}@${image.digest}, ${(image.size / 1048576).toFixed(1)} MiB; again: ${second.digest}`);
    assert.equal(second.digest, image.digest);
  });

  it('runs the controller from its own files as its numeric non-root user, and stays under 180 MiB', () => {
    assert.ok(image.size < 180 * 1048576, `${image.size} bytes`);
    const { config } = unpack(image.tar, join(scratch, 'unpacked'));
    assert.equal(config.config.User, '65532:65532');
    assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/node', '/app/dist/main.js']);
    const rootfs = join(scratch, 'unpacked', 'rootfs');
    const r = spawnSync('/usr/sbin/chroot', ['--userspec=65532:65532', rootfs, '/usr/local/bin/node', '/app/dist/main.js', '--help'], {
      encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin' }, timeout: 60_000,
    });
    assert.equal(r.status, 0, `${r.stderr}${r.stdout}`);
    assert.match(r.stdout, /^Usage: podlife-controller/);
    assert.equal(r.stderr, '');
  });
});
