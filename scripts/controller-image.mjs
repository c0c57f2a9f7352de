#!/usr/bin/env node
// Builds the podlife-controller image without a container daemon, as an OCI image layout tar that
// `ctr images import`, `skopeo copy oci-archive:...` and registries take.
//
// Guarantees:
// - deploy/Dockerfile is the recipe: FROM (a digest), COPY, WORKDIR, USER (numeric, not root),
//   EXPOSE and ENTRYPOINT are read from it and anything else there is refused, so the file and the
//   image cannot disagree;
// - the base is made here from exactly the inputs deploy/image-base.json pins (Debian's libc6,
//   libgcc-s1 and libstdc++6 by version and SHA-256, the Node binary by version and SHA-256), and
//   its digest must equal the Dockerfile's FROM digest, or the build stops naming both;
// - byte-reproducible: sorted entries, owner 0:0, mtime 0, normalised modes, uncompressed layers
//   (compression output may differ between zlib builds; a registry push compresses), no build time
//   in the config — the same inputs give the same digests;
// - built once per set of inputs into ${XDG_CACHE_HOME:-~/.cache}/podlife/controller-image, in a
//   temporary folder renamed into place only when complete; nothing pulls from a registry.
//
// Usage: node scripts/controller-image.mjs [--out FILE] [--update-base]
//   --out FILE      also copy the image tar there
//   --base-out FILE also copy the base image tar there (to push it where a daemon's build pulls FROM)
//   --update-base   pin the packages the Debian mirror has now and the installed Node binary:
//                   rewrites deploy/image-base.json and the Dockerfile's FROM digest.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync, existsSync, lstatSync, utimesSync, mkdirSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { podlifeCacheRoot, sh } from './go-build.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DOCKERFILE = join(repoRoot, 'deploy', 'Dockerfile');
export const BASE_LOCK = join(repoRoot, 'deploy', 'image-base.json');
const nodeBinary = join(repoRoot, 'node_modules', 'node', 'bin', 'node');
const controllerVersion = JSON.parse(readFileSync(join(repoRoot, 'packages', 'controller', 'package.json'), 'utf8')).version;
export const IMAGE_NAME = 'podlife/podlife-controller';
export const IMAGE_REF = `${IMAGE_NAME}:${controllerVersion}`;
const ARCH = 'amd64';

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const sha256File = (path) => sha256(readFileSync(path));

// ---------------------------------------------------------------------------------------------
// The Dockerfile, read as the recipe.

/**
 * The instructions of `text`: only the subset this builder implements, each at most once.
 * @returns {{ from: { name: string, digest: string }, copy: { src: string, dest: string }, workdir?: string, user: string, expose: string[], entrypoint: string[] }}
 */
export function parseDockerfile(text, file = 'Dockerfile') {
  const seen = new Map();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Z]+)\s+(.+)$/.exec(line);
    const where = `${file}:${i + 1}`;
    if (!m) throw new Error(`${where}: not an instruction: ${line}`);
    const [, op, rest] = m;
    if (!['FROM', 'COPY', 'WORKDIR', 'USER', 'EXPOSE', 'ENTRYPOINT'].includes(op)) {
      throw new Error(`${where}: ${op} is not built here (FROM, COPY, WORKDIR, USER, EXPOSE, ENTRYPOINT only)`);
    }
    if (seen.has(op)) throw new Error(`${where}: a second ${op}`);
    seen.set(op, { rest: rest.trim(), where });
  }
  const get = (op) => {
    const v = seen.get(op);
    if (!v) throw new Error(`${file}: no ${op}`);
    return v;
  };
  const from = get('FROM');
  const fm = /^(\S+?)@sha256:([0-9a-f]{64})$/.exec(from.rest);
  if (!fm) throw new Error(`${from.where}: FROM must name its base by digest (name@sha256:<64 hex>), not ${from.rest}`);
  const copy = get('COPY');
  const cm = /^(\S+)\s+(\/\S*)$/.exec(copy.rest);
  if (!cm) throw new Error(`${copy.where}: COPY wants one source and an absolute destination, not ${copy.rest}`);
  const user = get('USER');
  const um = /^(\d+):(\d+)$/.exec(user.rest);
  if (!um) throw new Error(`${user.where}: USER must be numeric uid:gid (Kubernetes checks runAsNonRoot on numbers), not ${user.rest}`);
  if (um[1] === '0') throw new Error(`${user.where}: USER must not be root`);
  const entry = get('ENTRYPOINT');
  let entrypoint;
  try {
    entrypoint = JSON.parse(entry.rest);
  } catch {
    entrypoint = undefined;
  }
  if (!Array.isArray(entrypoint) || entrypoint.length === 0 || !entrypoint.every((a) => typeof a === 'string')) {
    throw new Error(`${entry.where}: ENTRYPOINT must be a JSON array of strings (exec form), not ${entry.rest}`);
  }
  const expose = seen.has('EXPOSE') ? get('EXPOSE').rest.split(/\s+/) : [];
  for (const p of expose) if (!/^\d+(\/(tcp|udp))?$/.test(p)) throw new Error(`${get('EXPOSE').where}: EXPOSE ${p} is not a port`);
  const workdir = seen.get('WORKDIR')?.rest;
  if (workdir !== undefined && !workdir.startsWith('/')) throw new Error(`${get('WORKDIR').where}: WORKDIR must be absolute`);
  return { from: { name: fm[1], digest: `sha256:${fm[2]}` }, copy: { src: cm[1], dest: cm[2] }, workdir, user: user.rest, expose, entrypoint };
}

// ---------------------------------------------------------------------------------------------
// Tar and OCI layout, deterministic.

const BLOCK = 512;

function octal(n, width) {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

function rawHeader({ name, prefix = '', mode, size, type, linkname = '' }) {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(0, 12), 136, 'ascii'); // mtime
  h.write('        ', 148, 'ascii');
  h.write(type, 156, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

function pad(size) {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** ustar when the names fit, else a PAX extended header carrying them. */
function entryHeader(e) {
  const bytes = (s) => Buffer.byteLength(s, 'utf8');
  let name = e.name;
  let prefix = '';
  const pax = [];
  if (bytes(name) > 100) {
    const cut = name.lastIndexOf('/', name.length - 2);
    const fits = cut > 0 && bytes(name.slice(0, cut)) <= 155 && bytes(name.slice(cut + 1)) <= 100 && name.slice(cut + 1) !== '';
    if (fits) {
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    } else {
      pax.push(['path', e.name]);
      name = name.slice(0, 100);
    }
  }
  let linkname = e.linkname ?? '';
  if (bytes(linkname) > 100) {
    pax.push(['linkpath', linkname]);
    linkname = linkname.slice(0, 100);
  }
  const out = [];
  if (pax.length > 0) {
    const body = Buffer.from(pax.map(([k, v]) => {
      const rec = ` ${k}=${v}\n`;
      let len = bytes(rec) + 1;
      while (`${len}`.length + bytes(rec) !== len) len = `${len}`.length + bytes(rec);
      return `${len}${rec}`;
    }).join(''), 'utf8');
    out.push(rawHeader({ name: 'PaxHeader', mode: 0o644, size: body.length, type: 'x' }), body, pad(body.length));
  }
  out.push(rawHeader({ name, prefix, mode: e.mode, size: e.type === '0' ? e.data.length : 0, type: e.type, linkname }));
  return out;
}

/**
 * A tar of `entries` (name without a leading slash; type '0' file, '2' symlink, '5' directory),
 * sorted by name, owner 0:0, mtime 0.
 */
export function tarOf(entries) {
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const parts = [];
  for (const e of sorted) {
    parts.push(...entryHeader(e));
    if (e.type === '0') parts.push(e.data, pad(e.data.length));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

/**
 * Entries for everything under `root`, placed under `at` (`''` for /), with modes normalised
 * (directories 0755, files 0755 when executable by anyone, else 0644). `skip(rel, isDir)` drops a path.
 */
function treeEntries(root, at, skip = () => false) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const rel = relative(root, full);
      const st = lstatSync(full);
      if (skip(rel, st.isDirectory())) continue;
      const tarName = at ? `${at}/${rel}` : rel;
      if (st.isSymbolicLink()) out.push({ name: tarName, type: '2', mode: 0o777, linkname: readlinkSync(full) });
      else if (st.isDirectory()) {
        out.push({ name: `${tarName}/`, type: '5', mode: 0o755 });
        walk(full);
      } else if (st.isFile()) out.push({ name: tarName, type: '0', mode: st.mode & 0o111 ? 0o755 : 0o644, data: readFileSync(full) });
      else throw new Error(`${full}: neither a file, a folder nor a symlink`);
    }
  };
  walk(root);
  return out;
}

const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar',
};

const descriptor = (mediaType, data) => ({ mediaType, digest: `sha256:${sha256(data)}`, size: data.length });

/**
 * An OCI image layout tar holding one image of `layers` (tars) and `config` (the runtime part).
 * @returns {{ tar: Buffer, digest: string, size: number }} digest: the manifest's; size: the image's bytes (layers + config + manifest)
 */
export function ociLayout({ ref, layers, config }) {
  const configJson = Buffer.from(JSON.stringify({
    architecture: ARCH,
    os: 'linux',
    created: '1970-01-01T00:00:00Z',
    config,
    rootfs: { type: 'layers', diff_ids: layers.map((l) => `sha256:${sha256(l)}`) },
  }));
  const manifestJson = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: descriptor(MEDIA.config, configJson),
    layers: layers.map((l) => descriptor(MEDIA.layer, l)),
  }));
  const tag = ref.slice(ref.lastIndexOf(':') + 1);
  // containerd keeps the name as written; Kubernetes looks images up by the normalised name.
  const first = ref.split('/')[0];
  const qualified = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost') ? ref : `docker.io/${ref.includes('/') ? '' : 'library/'}${ref}`;
  const index = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [{ ...descriptor(MEDIA.manifest, manifestJson), annotations: { 'io.containerd.image.name': qualified, 'org.opencontainers.image.ref.name': tag } }],
  }));
  const file = (name, data) => ({ name, type: '0', mode: 0o644, data });
  const blobs = new Map([...layers, configJson, manifestJson].map((b) => [sha256(b), b]));
  const tar = tarOf([
    file('oci-layout', Buffer.from('{"imageLayoutVersion":"1.0.0"}')),
    file('index.json', index),
    { name: 'blobs/', type: '5', mode: 0o755 },
    { name: 'blobs/sha256/', type: '5', mode: 0o755 },
    ...[...blobs].map(([hex, data]) => file(`blobs/sha256/${hex}`, data)),
  ]);
  const size = layers.reduce((n, l) => n + l.length, 0) + configJson.length + manifestJson.length;
  return { tar, digest: `sha256:${sha256(manifestJson)}`, size };
}

// ---------------------------------------------------------------------------------------------
// The base: Debian's C and C++ runtime plus the pinned Node binary.

/** What a file of the Debian packages is kept for: the shared libraries and loader, and the copyright notices. */
function skipDebianPath(rel, isDir) {
  const p = `/${rel}`;
  if (p.startsWith('/usr/share/doc/')) return !isDir && !p.endsWith('/copyright');
  // gconv: iconv's converters (8 MiB); Node converts text with its own ICU and never loads them.
  return ['/usr/share/lintian', '/usr/share/gdb', '/usr/share/gcc', '/usr/share/man', '/usr/share/info', '/usr/share/locale', '/usr/lib/x86_64-linux-gnu/gconv']
    .some((d) => p === d || p.startsWith(`${d}/`));
}

function readLock() {
  if (!existsSync(BASE_LOCK)) throw new Error(`${BASE_LOCK} is missing`);
  const lock = JSON.parse(readFileSync(BASE_LOCK, 'utf8'));
  if (!Array.isArray(lock.debian) || !lock.node?.version || !/^[0-9a-f]{64}$/.test(lock.node.sha256 ?? '')) {
    throw new Error(`${BASE_LOCK}: wants { debian: [{ package, version, sha256 }], node: { version, sha256 } }`);
  }
  return lock;
}

function nodeBinaryFacts() {
  if (!existsSync(nodeBinary)) {
    throw new Error(`${nodeBinary} is missing: \`pnpm install\` unpacks the Node binary the repository pins (the \`node\` devDependency)`);
  }
  const version = sh(nodeBinary, ['--version']).trim().replace(/^v/, '');
  return { version, sha256: sha256File(nodeBinary) };
}

let aptUpdated = false;
function aptGet(args, cwd) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  return spawnSync('apt-get', args, { cwd, env, encoding: 'utf8' });
}

/** The .deb of `pkg=version` in `dir`, downloaded with apt-get when missing; its SHA-256 checked when given. */
function debFile(dir, pkg, version, expectSha) {
  const file = join(dir, `${pkg}_${version.replace(/:/g, '%3a')}_${ARCH}.deb`);
  if (!existsSync(file)) {
    if (!existsSync('/usr/bin/apt-get') || process.getuid?.() !== 0) {
      throw new Error(`the image base needs ${pkg}=${version} (a Debian package): run this as root on Debian, where apt-get can download it`);
    }
    let r = aptGet(['download', '-q', `${pkg}=${version}`], dir);
    if (r.status !== 0 && !aptUpdated) {
      aptUpdated = true;
      aptGet(['update', '-q'], dir);
      r = aptGet(['download', '-q', `${pkg}=${version}`], dir);
    }
    if (r.status !== 0 || !existsSync(file)) {
      throw new Error(`apt-get download ${pkg}=${version} failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}. ` +
        `When the mirror no longer has the version ${relative(repoRoot, BASE_LOCK)} pins, run \`node scripts/controller-image.mjs --update-base\` ` +
        'to pin the current packages (the base digest in deploy/Dockerfile changes with them).');
    }
  }
  const got = sha256File(file);
  if (expectSha && got !== expectSha) {
    rmSync(file, { force: true });
    throw new Error(`${pkg}=${version}: the downloaded .deb has SHA-256 ${got}, ${relative(repoRoot, BASE_LOCK)} pins ${expectSha}`);
  }
  return { file, sha256: got };
}

function baseRef(lock) {
  return `podlife/node-base:${lock.node.version}-${lock.debianSuite ?? 'debian'}`;
}

/** The base image's single layer and config, from the lock's inputs. */
function buildBase(lock, debDir, work) {
  const node = nodeBinaryFacts();
  if (node.version !== lock.node.version || node.sha256 !== lock.node.sha256) {
    throw new Error(`${nodeBinary} is Node ${node.version} (SHA-256 ${node.sha256}); ${relative(repoRoot, BASE_LOCK)} pins ${lock.node.version} (${lock.node.sha256}). ` +
      'Run `pnpm install`, or `node scripts/controller-image.mjs --update-base` after changing the pinned Node release.');
  }
  const root = join(work, 'rootfs');
  mkdirSync(root, { recursive: true });
  for (const d of lock.debian) {
    const { file } = debFile(debDir, d.package, d.version, d.sha256);
    sh('dpkg-deb', ['-x', file, root]);
  }
  const entries = treeEntries(root, '', skipDebianPath);
  const text = (name, s) => ({ name, type: '0', mode: 0o644, data: Buffer.from(s) });
  entries.push(
    { name: 'etc/', type: '5', mode: 0o755 },
    text('etc/passwd', 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n'),
    text('etc/group', 'root:x:0:\nnonroot:x:65532:\n'),
    { name: 'tmp/', type: '5', mode: 0o1777 },
    { name: 'usr/local/', type: '5', mode: 0o755 },
    { name: 'usr/local/bin/', type: '5', mode: 0o755 },
    { name: 'usr/local/bin/node', type: '0', mode: 0o755, data: readFileSync(nodeBinary) },
  );
  const byName = new Map(entries.map((e) => [e.name, e]));
  const layer = tarOf([...byName.values()]);
  const config = { Env: ['PATH=/usr/local/bin:/usr/bin:/bin'], Entrypoint: ['/usr/local/bin/node'], User: '65532:65532' };
  return { layer, config };
}

// ---------------------------------------------------------------------------------------------
// The controller: `pnpm deploy` of @podlife/controller, without what only a compiler or an editor reads.

/**
 * What the controller's tree keeps: not declarations, source maps, TypeScript sources, Markdown or
 * pnpm's bookkeeping (absolute paths, dates); not a workspace package's compiled file whose source is
 * gone (a stale build output in a checkout); not a link that leads outside the tree (pnpm links the
 * deployed package's own folder in the workspace).
 */
function appSkipper(root) {
  const workspaceDist = /^(?:|.*\/node_modules\/@podlife\/[^/]+\/)dist\/(.+)\.js$/;
  return (rel, isDir) => {
    const base = rel.slice(rel.lastIndexOf('/') + 1);
    if (isDir) return base === '.bin';
    if (base === '.modules.yaml') return true;
    if (/\.(d\.[cm]?ts|map|[cm]?ts|tsx|md|markdown)$/i.test(base)) return true;
    const full = join(root, rel);
    if (lstatSync(full).isSymbolicLink()) return relative(root, resolve(dirname(full), readlinkSync(full))).startsWith('..');
    const m = workspaceDist.exec(rel);
    if (m && (rel.startsWith('dist/') || rel.startsWith('node_modules/.pnpm/@podlife+'))) {
      const pkgRoot = rel.slice(0, rel.length - `dist/${m[1]}.js`.length);
      return !['.ts', '.mts', '.tsx'].some((ext) => existsSync(join(root, pkgRoot, 'src', `${m[1]}${ext}`)));
    }
    return false;
  };
}

/** The entries without folders left empty by what was skipped. */
function withoutEmptyDirs(entries) {
  const used = new Set();
  for (const e of entries) {
    if (e.type === '5') continue;
    for (let i = e.name.indexOf('/'); i >= 0; i = e.name.indexOf('/', i + 1)) used.add(e.name.slice(0, i + 1));
  }
  return entries.filter((e) => e.type !== '5' || used.has(e.name));
}

function appTree(out) {
  sh('corepack', ['pnpm', 'exec', 'tsc', '-b', 'packages/controller'], { cwd: repoRoot });
  rmSync(out, { recursive: true, force: true });
  sh('corepack', ['pnpm', '--filter', '@podlife/controller', 'deploy', '--prod', '--legacy', '--prefer-offline', out], { cwd: repoRoot });
  return out;
}

// ---------------------------------------------------------------------------------------------

export function imageCacheDir() {
  return join(podlifeCacheRoot(), 'controller-image');
}

function atomicDir(dir, build) {
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    build(partial);
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

/**
 * The base image, built once per lock into the cache.
 * @returns {{ ref: string, digest: string, tar: string, layer: string, config: object, size: number }}
 */
export function ensureBaseImage(opts = {}) {
  const log = opts.log ?? ((line) => process.stderr.write(`controller-image: ${line}\n`));
  const lock = opts.lock ?? readLock();
  const key = sha256(JSON.stringify(lock)).slice(0, 16);
  // cacheDir: build elsewhere (a second, independent build); the .debs are shared, checked by SHA-256.
  const dir = join(opts.cacheDir ?? imageCacheDir(), `base-${key}`);
  const debDir = join(imageCacheDir(), 'debs');
  mkdirSync(debDir, { recursive: true });
  if (!existsSync(join(dir, 'base.json'))) {
    const started = Date.now();
    atomicDir(dir, (partial) => {
      const { layer, config } = buildBase(lock, debDir, join(partial, 'work'));
      rmSync(join(partial, 'work'), { recursive: true, force: true });
      const ref = baseRef(lock);
      const image = ociLayout({ ref, layers: [layer], config });
      writeFileSync(join(partial, 'layer.tar'), layer);
      writeFileSync(join(partial, 'base.tar'), image.tar);
      writeFileSync(join(partial, 'base.json'), `${JSON.stringify({ ref, digest: image.digest, size: image.size, config }, null, 2)}\n`);
    });
    log(`built the base into ${dir} in ${Math.round((Date.now() - started) / 100) / 10}s`);
  }
  const facts = JSON.parse(readFileSync(join(dir, 'base.json'), 'utf8'));
  return { ...facts, tar: join(dir, 'base.tar'), layer: join(dir, 'layer.tar') };
}

/**
 * Each change of the controller makes a new image (~170 MiB): those not built or used for a day go.
 * Recent ones stay, since another checkout on this machine may be about to import its own.
 */
function pruneOldImages(keep) {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(imageCacheDir())) {
    const path = join(imageCacheDir(), name);
    if (!/^controller-[0-9a-f]{16}$/.test(name) || path === keep) continue;
    try {
      if (statSync(join(path, 'image.json')).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Being written or removed by another build.
    }
  }
}

/** Config of the controller image: the base's, with what the Dockerfile sets. */
function controllerConfig(baseConfig, recipe) {
  const config = { ...baseConfig, Entrypoint: recipe.entrypoint, User: recipe.user };
  if (recipe.workdir) config.WorkingDir = recipe.workdir;
  if (recipe.expose.length > 0) {
    config.ExposedPorts = Object.fromEntries(recipe.expose.map((p) => [p.includes('/') ? p : `${p}/tcp`, {}]));
  }
  return config;
}

/**
 * The controller image: the Dockerfile's recipe over the pinned base, with the controller as
 * built from this checkout. Cached by the digests of the base and the app layer.
 * @returns {{ ref: string, digest: string, tar: string, size: number, base: { ref: string, digest: string, size: number } }}
 */
export function ensureControllerImage(opts = {}) {
  const log = opts.log ?? ((line) => process.stderr.write(`controller-image: ${line}\n`));
  const started = Date.now();
  const recipe = parseDockerfile(readFileSync(DOCKERFILE, 'utf8'), relative(repoRoot, DOCKERFILE));
  const base = ensureBaseImage({ log });
  if (base.digest !== recipe.from.digest) {
    throw new Error(`the base built from ${relative(repoRoot, BASE_LOCK)} is ${base.digest}, but deploy/Dockerfile pins ${recipe.from.digest}: ` +
      'the two must change together (`node scripts/controller-image.mjs --update-base` writes both)');
  }
  const work = join(imageCacheDir(), `app.partial-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  let appLayer;
  try {
    const app = appTree(join(work, 'app'));
    // Every file 0644: modes in a checkout depend on what pnpm linked as a bin, and node reads them all.
    appLayer = tarOf(withoutEmptyDirs(treeEntries(app, recipe.copy.dest.replace(/^\/+|\/+$/g, ''), appSkipper(app))).map((e) => (e.type === '0' ? { ...e, mode: 0o644 } : e)).concat(
      recipe.copy.dest.split('/').filter(Boolean).map((_, i, parts) => ({ name: `${parts.slice(0, i + 1).join('/')}/`, type: '5', mode: 0o755 })),
    ));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const config = controllerConfig(base.config, recipe);
  const image = ociLayout({ ref: IMAGE_REF, layers: [readFileSync(base.layer), appLayer], config });
  // By the whole archive (its index too, which names the image), not only the manifest digest.
  const dir = join(imageCacheDir(), `controller-${sha256(image.tar).slice(0, 16)}`);
  if (!existsSync(join(dir, 'image.json'))) {
    atomicDir(dir, (partial) => {
      writeFileSync(join(partial, 'image.tar'), image.tar);
      writeFileSync(join(partial, 'image.json'), `${JSON.stringify({ ref: IMAGE_REF, digest: image.digest, size: image.size }, null, 2)}\n`);
    });
  }
  const now = new Date();
  utimesSync(join(dir, 'image.json'), now, now);
  pruneOldImages(dir);
  log(`${IMAGE_REF}@${image.digest}: ${(image.size / 1048576).toFixed(1)} MiB (base ${(base.size / 1048576).toFixed(1)} MiB) in ${Math.round((Date.now() - started) / 100) / 10}s`);
  return { ref: IMAGE_REF, digest: image.digest, tar: join(dir, 'image.tar'), size: image.size, base: { ref: base.ref, digest: base.digest, size: base.size } };
}

/** Pins what the mirror and the installed Node binary are now; rewrites the lock and the Dockerfile's FROM. */
function updateBase(log) {
  const old = readLock();
  const debDir = join(imageCacheDir(), 'debs');
  mkdirSync(debDir, { recursive: true });
  aptGet(['update', '-q'], debDir);
  const debian = old.debian.map((d) => {
    const candidate = /Candidate:\s*(\S+)/.exec(sh('apt-cache', ['policy', d.package]))?.[1];
    if (!candidate || candidate === '(none)') throw new Error(`apt-cache policy ${d.package}: no candidate version`);
    const { sha256: sum } = debFile(debDir, d.package, candidate, undefined);
    return { package: d.package, version: candidate, sha256: sum };
  });
  const lock = { ...old, debian, node: nodeBinaryFacts() };
  const base = ensureBaseImage({ log, lock });
  writeFileSync(BASE_LOCK, `${JSON.stringify(lock, null, 2)}\n`);
  const text = readFileSync(DOCKERFILE, 'utf8');
  const updated = text.replace(/^FROM \S+$/m, `FROM ${base.ref}@${base.digest}`);
  if (updated === text && !text.includes(`${base.ref}@${base.digest}`)) throw new Error('deploy/Dockerfile has no FROM line to update');
  writeFileSync(DOCKERFILE, updated);
  log(`pinned ${debian.map((d) => `${d.package}=${d.version}`).join(', ')}, Node ${lock.node.version}: base ${base.ref}@${base.digest}`);
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const args = process.argv.slice(2);
  const log = (line) => process.stderr.write(`controller-image: ${line}\n`);
  try {
    if (args.includes('--update-base')) updateBase(log);
    const image = ensureControllerImage({ log });
    const baseAt = args.indexOf('--base-out');
    if (baseAt >= 0) {
      if (!args[baseAt + 1]) throw new Error('--base-out wants a file name');
      copyFileSync(ensureBaseImage({ log }).tar, args[baseAt + 1]);
      log(`wrote ${args[baseAt + 1]}`);
    }
    const outAt = args.indexOf('--out');
    if (outAt >= 0) {
      const out = args[outAt + 1];
      if (!out) throw new Error('--out wants a file name');
      copyFileSync(image.tar, out);
      log(`wrote ${out} (${(statSync(out).size / 1048576).toFixed(1)} MiB)`);
    }
    process.stdout.write(`${image.ref}@${image.digest}\n`);
  } catch (err) {
    process.stderr.write(`controller-image: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
