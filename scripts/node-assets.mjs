#!/usr/bin/env node
// Provides what a real Kubernetes node needs on this host, next to the control-plane binaries:
// containerd, runc and the CNI plugins (Debian's packages), the kubelet (built with the control
// plane by control-plane-assets.mjs) and the test images, built locally because there is no registry.
// A node may run containerd v2 instead of the host's 1.6 (docs/adr/0213): built from the Go module
// test/node/containerd/ once per version and build flags, into a cache folder, like the kubelet.
//
// Guarantees:
// - the host packages are installed with apt-get when missing and this process is root; otherwise
//   the error names each missing package and file;
// - containerd v2 (containerd, its runc shim, ctr) is built only when asked for, lands in a
//   temporary folder renamed into place when complete, and is reused while its stamp matches;
// - the images (pause from kubernetes' own build/pause/linux/pause.c, busybox from Debian's
//   busybox-static, a distroless image holding one static binary, a quit-endpoint server from the
//   test Go module) are single-layer OCI layout tars, built once per set of inputs into a cache
//   folder and reused; a build lands in a temporary folder renamed into place only when complete;
// - nothing here pulls an image or reaches a registry.
//
// Usable as a command (`node scripts/node-assets.mjs [--if-possible] [--containerd-v2]`) or imported
// (`ensureNodeAssets`, `ensureContainerdV2`). `--host-packages` installs the Debian packages only
// (the unit suite runs the http stop script with busybox's sh and nc before any node is built).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cacheRoot, ensureControlPlaneAssets, kubeModuleDir, selectedKubernetesVersion } from './control-plane-assets.mjs';
import { goVersion, podlifeCacheRoot, recordBuildTime, run, seconds, sh, stampedDigest } from './go-build.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const imagesModule = join(repoRoot, 'test', 'node', 'images');
const containerdModule = join(repoRoot, 'test', 'node', 'containerd');

const CONTAINERD_PACKAGE = 'github.com/containerd/containerd/v2';
const CONTAINERD_BINARIES = ['containerd', 'containerd-shim-runc-v2', 'ctr'];

/** Debian packages and the files of theirs the node uses. */
const HOST_PACKAGES = [
  { pkg: 'containerd', files: ['/usr/bin/containerd', '/usr/bin/containerd-shim-runc-v2', '/usr/bin/ctr'] },
  { pkg: 'runc', files: ['/usr/sbin/runc'] },
  { pkg: 'containernetworking-plugins', files: ['/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback'] },
  { pkg: 'busybox-static', files: ['/bin/busybox'] },
  { pkg: 'iproute2', files: ['/usr/sbin/ip', '/usr/bin/ip'], any: true },
  { pkg: 'mount', files: ['/usr/bin/umount', '/bin/umount'], any: true },
];

/** The test images: reference -> how it is made. */
export const IMAGES = {
  pause: 'podlife.test/pause:3.10',
  busybox: 'podlife.test/busybox:1',
  distroless: 'podlife.test/distroless:1',
  quitserver: 'podlife.test/quitserver:1',
};

function missingPackages() {
  return HOST_PACKAGES.filter((p) => (p.any ? !p.files.some(existsSync) : !p.files.every(existsSync)));
}

/** Installs the Debian packages the node needs, when missing (root only). */
export function ensureHostPackages(log) {
  const missing = missingPackages();
  if (missing.length === 0) return;
  const names = missing.map((p) => p.pkg);
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) {
    throw new Error(`a real node needs the Debian packages ${names.join(', ')} (missing: ${missing.flatMap((p) => p.files).join(', ')}); ` +
      'install them as root with apt-get');
  }
  log(`installing ${names.join(', ')} with apt-get`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  sh('apt-get', ['update', '-q'], { env });
  sh('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...names], { env });
  const still = missingPackages();
  if (still.length > 0) throw new Error(`apt-get installed ${names.join(', ')} but ${still.flatMap((p) => p.files).join(', ')} is still missing`);
}

/** Where the k8s.io/kubernetes module's source is (for build/pause/linux/pause.c). */
function kubernetesSourceDir(version) {
  const out = sh('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${version}`], { cwd: kubeModuleDir(version) });
  const dir = JSON.parse(out).Dir;
  if (!dir || !existsSync(join(dir, 'build', 'pause', 'linux', 'pause.c'))) {
    throw new Error(`k8s.io/kubernetes@${version} has no build/pause/linux/pause.c (module folder: ${dir})`);
  }
  return dir;
}

function listFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out.sort();
}

function imagesDigest(pauseSource) {
  const h = createHash('sha256');
  for (const f of listFiles(imagesModule)) h.update(f.slice(imagesModule.length)).update(readFileSync(f));
  h.update(readFileSync(pauseSource));
  h.update(readFileSync('/bin/busybox'));
  h.update(JSON.stringify(IMAGES));
  return h.digest('hex').slice(0, 16);
}

function buildImages(outDir, pauseSource, log) {
  const work = join(outDir, 'work');
  mkdirSync(work, { recursive: true });
  const goEnv = { ...process.env, CGO_ENABLED: '0' };
  sh('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', work + '/', './cmd/mkimage', './cmd/quitserver'], { cwd: imagesModule, env: goEnv });
  sh('cc', ['-static', '-O2', '-DVERSION=podlife-test', '-o', join(work, 'pause'), pauseSource]);
  sh('cc', ['-static', '-O2', '-o', join(work, 'sleeper'), join(imagesModule, 'c', 'sleeper.c')]);
  const mkimage = join(work, 'mkimage');
  const make = (key, args) => {
    const tar = join(outDir, `${key}.tar`);
    sh(mkimage, ['-out', tar, '-name', IMAGES[key], ...args]);
    return tar;
  };
  const applets = sh('/bin/busybox', ['--list']).split('\n').map((s) => s.trim()).filter((s) => s && s !== 'busybox');
  make('pause', ['-entrypoint', '["/pause"]', '-file', `${join(work, 'pause')}=/pause`, '-user', '65535:65535']);
  make('busybox', ['-cmd', '["/bin/sh"]', '-file', '/bin/busybox=/bin/busybox', ...applets.flatMap((a) => ['-link', `/bin/${a}=busybox`]),
    '-dir', '/tmp', '-dir', '/etc', '-dir', '/root']);
  make('distroless', ['-entrypoint', '["/sleeper"]', '-file', `${join(work, 'sleeper')}=/sleeper`]);
  make('quitserver', ['-entrypoint', '["/quitserver"]', '-file', `${join(work, 'quitserver')}=/quitserver`, '-user', '65532:65532']);
  rmSync(work, { recursive: true, force: true });
  log(`images: ${Object.values(IMAGES).join(', ')}`);
}

/** The containerd v2 release test/node/containerd/go.mod pins. */
export function pinnedContainerdV2() {
  const goMod = join(containerdModule, 'go.mod');
  const m = /^\s*(?:require\s+)?github\.com\/containerd\/containerd\/v2\s+(v\S+)/m.exec(readFileSync(goMod, 'utf8'));
  if (!m?.[1]) throw new Error(`${goMod} does not require ${CONTAINERD_PACKAGE}`);
  return m[1];
}

/** The go build arguments for containerd v2: pure Go (the btrfs snapshotter is the one part needing cgo; devmapper and zfs are not used). */
function containerdBuildArgs(version, outDir) {
  return ['build', '-trimpath', '-tags', 'no_btrfs no_devmapper no_zfs',
    '-ldflags', `-s -w -X ${CONTAINERD_PACKAGE}/version.Version=${version} -X ${CONTAINERD_PACKAGE}/version.Package=${CONTAINERD_PACKAGE}`,
    '-o', `${outDir}/`, ...CONTAINERD_BINARIES.map((b) => `${CONTAINERD_PACKAGE}/cmd/${b}`)];
}

/**
 * containerd v2 (containerd, containerd-shim-runc-v2, ctr), built from its Go module once per set
 * of inputs into `<cache>/containerd/<version>/` and reused afterwards.
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function ensureContainerdV2(opts = {}) {
  const log = opts.log ?? ((line) => process.stderr.write(`node-assets: ${line}\n`));
  const version = pinnedContainerdV2();
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum']) h.update(f).update(readFileSync(join(containerdModule, f)));
  h.update(JSON.stringify(containerdBuildArgs(version, '<out>')));
  const digest = h.digest('hex').slice(0, 16);
  const dir = join(podlifeCacheRoot(), 'containerd', version);
  const paths = { version, dir, containerd: join(dir, 'containerd'), shim: join(dir, 'containerd-shim-runc-v2'), ctr: join(dir, 'ctr') };
  if (stampedDigest(dir, CONTAINERD_BINARIES) === digest) {
    const stamp = JSON.parse(readFileSync(join(dir, 'stamp.json'), 'utf8'));
    log(`reusing containerd ${version} from ${dir} (built in ${stamp.buildSeconds}s on ${stamp.builtAt})`);
    return paths;
  }
  const go = goVersion();
  if (!go) throw new Error(`Go is needed to build containerd ${version} (\`go\` on PATH; its module asks for Go 1.26.6 or newer)`);
  const started = Date.now();
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  log(`building containerd ${version} (${CONTAINERD_BINARIES.join(', ')}) with ${go}; the first build takes minutes, later runs reuse it`);
  try {
    await run('go', containerdBuildArgs(version, partial), { cwd: containerdModule, env: { ...process.env, CGO_ENABLED: '0' } });
    const buildSeconds = seconds(Date.now() - started);
    writeFileSync(join(partial, 'stamp.json'), `${JSON.stringify({ version, digest, go, buildSeconds, builtAt: new Date().toISOString() }, null, 2)}\n`);
    if (stampedDigest(dir, CONTAINERD_BINARIES) === digest) {
      // Another run finished the same build meanwhile: keep its folder, which may be in use.
      rmSync(partial, { recursive: true, force: true });
    } else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(partial, dir);
    }
    log(`built containerd ${version} into ${dir} in ${buildSeconds}s`);
    recordBuildTime(`containerd ${version}`, buildSeconds);
    return paths;
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Makes sure everything a node needs is on this host and returns where it is; the kubelet is the
 * run's release unless `kubernetes` names another supported one (an older node in a mixed cluster);
 * the runtime is the host's containerd 1.6 unless `containerd: 'v2'` asks for the pinned v2.
 * @param {{ log?: (line: string) => void, kubernetes?: string, containerd?: 'host' | 'v2' }} [opts]
 */
export async function ensureNodeAssets(opts = {}) {
  const log = opts.log ?? ((line) => process.stderr.write(`node-assets: ${line}\n`));
  if (process.platform !== 'linux') throw new Error('a real node runs on Linux only');
  if (opts.containerd !== undefined && opts.containerd !== 'host' && opts.containerd !== 'v2') {
    throw new Error(`containerd: ${JSON.stringify(opts.containerd)} is not a runtime the node knows ('host' or 'v2')`);
  }
  ensureHostPackages(log);
  const v2 = opts.containerd === 'v2' ? await ensureContainerdV2({ log }) : undefined;
  const controlPlane = await ensureControlPlaneAssets({ log, ...(opts.kubernetes ? { kubernetes: selectedKubernetesVersion(opts.kubernetes) } : {}) });
  for (const name of ['kubelet', 'kube-scheduler']) {
    if (!existsSync(join(controlPlane.dir, name))) throw new Error(`${join(controlPlane.dir, name)} is missing (KUBEBUILDER_ASSETS must hold the kubelet and kube-scheduler for a real node)`);
  }
  const { kubernetes } = controlPlane.versions;
  const pauseSource = join(kubernetesSourceDir(kubernetes), 'build', 'pause', 'linux', 'pause.c');
  const digest = imagesDigest(pauseSource);
  const dir = join(cacheRoot(), '..', 'node-images', digest);
  const complete = Object.keys(IMAGES).every((k) => existsSync(join(dir, `${k}.tar`)));
  if (complete) {
    log(`reusing test images from ${dir}`);
  } else {
    const started = Date.now();
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    try {
      buildImages(partial, pauseSource, log);
      rmSync(dir, { recursive: true, force: true });
      renameSync(partial, dir);
    } catch (err) {
      rmSync(partial, { recursive: true, force: true });
      throw err;
    }
    log(`built test images into ${dir} in ${Math.round((Date.now() - started) / 100) / 10}s`);
  }
  const images = Object.fromEntries(Object.entries(IMAGES).map(([k, ref]) => [k, { ref, tar: join(dir, `${k}.tar`) }]));
  writeFileSync(join(dir, 'images.json'), `${JSON.stringify(images, null, 2)}\n`);
  return {
    binDir: controlPlane.dir,
    kubelet: join(controlPlane.dir, 'kubelet'),
    containerd: v2?.containerd ?? '/usr/bin/containerd',
    containerdShim: v2?.shim ?? '/usr/bin/containerd-shim-runc-v2',
    ctr: v2?.ctr ?? '/usr/bin/ctr',
    containerdConfigVersion: v2 ? 3 : 2,
    runc: '/usr/sbin/runc',
    cniBinDir: '/usr/lib/cni',
    images,
  };
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const started = Date.now();
  // --if-possible (the demo): on a host that cannot run a node, provide the control plane only.
  const cannot = process.platform !== 'linux' ? 'this is not Linux' : process.getuid?.() !== 0 ? 'this process is not root' : undefined;
  const work = process.argv.includes('--host-packages')
    ? Promise.resolve().then(() => (ensureHostPackages((line) => process.stderr.write(`node-assets: ${line}\n`)), { images: {} }))
    : process.argv.includes('--if-possible') && cannot
    ? (process.stderr.write(`node-assets: ${cannot}, so no real node here; providing the control plane only\n`), ensureControlPlaneAssets().then(() => ({ images: {} })))
    : ensureNodeAssets().then(async (assets) => {
      if (process.argv.includes('--containerd-v2')) await ensureContainerdV2();
      return assets;
    });
  work
    .then(({ images }) => {
      const what = process.argv.includes('--host-packages') ? 'the host packages' : `${Object.keys(images).length} images`;
      process.stderr.write(`node-assets: ready in ${Math.round((Date.now() - started) / 100) / 10}s: ${what}\n`);
    })
    .catch((err) => {
      process.stderr.write(`node-assets: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
