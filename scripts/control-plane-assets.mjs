#!/usr/bin/env node
// Provides the Kubernetes binaries (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// the kubelet) that the integration tests, the e2e tests and the demo run against.
//
// Guarantees:
// - one Kubernetes release per run, chosen by PODLIFE_K8S_VERSION (`v1.37.2`, `1.37.2` or `1.37`)
//   among the supported ones, each pinned by its own Go module test/control-plane/kube/<version>/;
//   unset, the default release; an unknown one is an error listing the supported releases;
// - KUBEBUILDER_ASSETS (envtest's convention), when set, is used as is: nothing is built, and a
//   missing binary there is an error naming the file;
// - otherwise the binaries are built from the Go modules in test/control-plane/ once per version
//   into a cache folder outside the repository, and reused afterwards (a stamp names the inputs:
//   a changed go.mod, go.sum or build flag means a rebuild);
// - a build lands in a temporary folder that is renamed into place only when complete, so an
//   interrupted build never leaves binaries that look usable;
// - it prints what it did and how long it took, and exits non-zero with a reason on failure.
//
// Usable as a command (`node scripts/control-plane-assets.mjs [--all]`), imported
// (`ensureControlPlaneAssets`), or to pin a new release (`--add-version v1.X.Y`, which writes that
// release's Go module: the k8s.io/kubernetes module maps its staging modules to ./staging, so a
// dependent module must point each of them at the published v0.X.Y tag of the same release).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { goVersion, podlifeCacheRoot, recordBuildTime, run, seconds, stampedDigest } from './go-build.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const kubeModules = join(repoRoot, 'test', 'control-plane', 'kube');
const etcdModule = join(repoRoot, 'test', 'control-plane', 'etcd');

/** The release a run uses when PODLIFE_K8S_VERSION is unset. */
export const DEFAULT_KUBERNETES = 'v1.37.2';
export const VERSION_ENV = 'PODLIFE_K8S_VERSION';

export const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet'];
/** The two the harness cannot start without; kube-controller-manager is only needed for Jobs. */
const REQUIRED_FROM_ENV = ['etcd', 'kube-apiserver'];

const releasePattern = /^v(\d+)\.(\d+)\.(\d+)$/;

/** Orders releases `vMAJOR.MINOR.PATCH`, oldest first. */
export function compareReleases(a, b) {
  const pa = releasePattern.exec(a).slice(1).map(Number);
  const pb = releasePattern.exec(b).slice(1).map(Number);
  return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
}

/** The Kubernetes releases this checkout pins (one Go module folder each), oldest first. */
export function supportedKubernetesVersions() {
  return readdirSync(kubeModules, { withFileTypes: true })
    .filter((e) => e.isDirectory() && releasePattern.test(e.name) && existsSync(join(kubeModules, e.name, 'go.mod')))
    .map((e) => e.name)
    .sort(compareReleases);
}

/**
 * The release named by `wanted` (PODLIFE_K8S_VERSION when omitted): `v1.37.2`, `1.37.2`, or a minor
 * (`1.37`, `v1.37`) meaning its pinned patch release.
 */
export function selectedKubernetesVersion(wanted = process.env[VERSION_ENV]) {
  const supported = supportedKubernetesVersions();
  const raw = (wanted ?? '').trim();
  if (raw === '') return DEFAULT_KUBERNETES;
  const v = raw.startsWith('v') ? raw : `v${raw}`;
  const match = releasePattern.test(v) ? supported.filter((s) => s === v)
    : /^v\d+\.\d+$/.test(v) ? supported.filter((s) => s.startsWith(`${v}.`)) : [];
  if (match.length === 0) {
    throw new Error(`${VERSION_ENV}=${raw} is not a supported Kubernetes release; supported: ${supported.join(', ')} (default ${DEFAULT_KUBERNETES})`);
  }
  return match[match.length - 1];
}

/** The Go module folder pinning a release. */
export function kubeModuleDir(kubernetes = selectedKubernetesVersion()) {
  return join(kubeModules, kubernetes);
}

/** Reads the version a go.mod requires for a module path. */
function requiredVersion(goModPath, modulePath) {
  const text = readFileSync(goModPath, 'utf8');
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const m = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(text);
  if (!m?.[1]) throw new Error(`${goModPath} does not require ${modulePath}`);
  return m[1];
}

/** The pinned versions of a run, read from the Go modules (their go.mod files are the single source). */
export function pinnedVersions(release = selectedKubernetesVersion()) {
  const kubernetes = requiredVersion(join(kubeModuleDir(release), 'go.mod'), 'k8s.io/kubernetes');
  if (kubernetes !== release) throw new Error(`${join(kubeModuleDir(release), 'go.mod')} requires k8s.io/kubernetes ${kubernetes}, not ${release}`);
  const etcd = requiredVersion(join(etcdModule, 'go.mod'), 'go.etcd.io/etcd/server/v3');
  return { kubernetes, etcd };
}

function kubeLdflags(version) {
  const m = /^v(\d+)\.(\d+)\./.exec(version);
  if (!m) throw new Error(`k8s.io/kubernetes version ${version} is not vMAJOR.MINOR.PATCH`);
  const flags = ['-s', '-w'];
  // Both packages report a version: component-base for /version and the binaries, client-go for
  // the user agent the controller-manager sends.
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(`-X ${pkg}.gitVersion=${version}`, `-X ${pkg}.gitMajor=${m[1]}`, `-X ${pkg}.gitMinor=${m[2]}`,
      `-X ${pkg}.gitTreeState=clean`);
  }
  return flags.join(' ');
}

/**
 * The commands a release's module lists in its `tool` block beyond BINARIES: kubectl on the newest
 * release, built in the same `go build` as the control plane so that it shares every compiled
 * package with it instead of building a second copy of client-go from another module.
 */
export function extraKubeTools(kubernetes = selectedKubernetesVersion()) {
  const text = readFileSync(join(kubeModuleDir(kubernetes), 'go.mod'), 'utf8');
  const block = /^tool \(\n([\s\S]*?)^\)/m.exec(text)?.[1] ?? '';
  return [...block.matchAll(/k8s\.io\/kubernetes\/cmd\/([\w-]+)/g)].map((m) => m[1]).filter((t) => !BINARIES.includes(t));
}

/** The go build invocations: one per module, each run inside its module folder. */
function buildPlan(versions, outDir) {
  const extra = extraKubeTools(versions.kubernetes);
  return [
    { label: 'etcd', cwd: etcdModule, args: ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(outDir, 'etcd'), '.'] },
    {
      label: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', ...extra].join(', '),
      cwd: kubeModuleDir(versions.kubernetes),
      args: ['build', '-trimpath', '-ldflags', kubeLdflags(versions.kubernetes), '-o', outDir + '/',
        'k8s.io/kubernetes/cmd/kube-apiserver', 'k8s.io/kubernetes/cmd/kube-controller-manager',
        'k8s.io/kubernetes/cmd/kube-scheduler', 'k8s.io/kubernetes/cmd/kubelet', ...extra.map((t) => `k8s.io/kubernetes/cmd/${t}`)],
    },
  ];
}

/** A digest of everything that decides the binaries' content. */
function inputsDigest(versions) {
  const h = createHash('sha256');
  for (const dir of [kubeModuleDir(versions.kubernetes), etcdModule]) {
    for (const f of ['go.mod', 'go.sum', 'main.go']) {
      const p = join(dir, f);
      if (existsSync(p)) h.update(f).update(readFileSync(p));
    }
  }
  h.update(JSON.stringify(buildPlan(versions, '<out>').map((s) => s.args)));
  return h.digest('hex').slice(0, 16);
}

export function cacheRoot() {
  if (process.env.PODLIFE_CONTROL_PLANE_CACHE) return resolve(process.env.PODLIFE_CONTROL_PLANE_CACHE);
  return join(podlifeCacheRoot(), 'control-plane');
}

function missingIn(dir, names) {
  return names.filter((n) => !existsSync(join(dir, n)));
}

export async function ensureControlPlaneAssets(opts = {}) {
  const log = opts.log ?? ((line) => process.stderr.write(`control-plane-assets: ${line}\n`));
  const versions = pinnedVersions(opts.kubernetes ?? selectedKubernetesVersion());

  const fromEnv = process.env.KUBEBUILDER_ASSETS;
  if (fromEnv) {
    const dir = resolve(fromEnv);
    const missing = missingIn(dir, REQUIRED_FROM_ENV);
    if (missing.length > 0) {
      throw new Error(`KUBEBUILDER_ASSETS=${dir} lacks ${missing.join(', ')}; unset it to build the pinned binaries`);
    }
    log(`using KUBEBUILDER_ASSETS=${dir} (its binaries' versions are whatever they are; pinned: kubernetes ${versions.kubernetes}, etcd ${versions.etcd})`);
    return { dir, source: 'env', versions };
  }

  const digest = inputsDigest(versions);
  const dir = join(cacheRoot(), `${versions.kubernetes}-etcd-${versions.etcd}`);
  const stampPath = join(dir, 'stamp.json');
  const required = [...BINARIES, ...extraKubeTools(versions.kubernetes)];
  const cached = stampedDigest(dir, required);
  if (cached === digest) {
    const stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
    log(`reusing kubernetes ${versions.kubernetes} and etcd ${versions.etcd} from ${dir} (built in ${stamp.buildSeconds}s on ${stamp.builtAt})`);
    return { dir, source: 'cache', versions };
  }
  if (cached !== undefined) log(`cached binaries in ${dir} were built from other inputs; rebuilding`);

  const go = goVersion();
  if (!go) {
    throw new Error('Go is needed to build kube-apiserver, kube-controller-manager and etcd (`go` on PATH; the modules ask for Go 1.26, which an older go fetches by itself unless GOTOOLCHAIN=local), ' +
      'or set KUBEBUILDER_ASSETS to a folder that already holds etcd and kube-apiserver');
  }
  const started = Date.now();
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  log(`building kubernetes ${versions.kubernetes} (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet) and etcd ${versions.etcd} with ${go}; ` +
    'the first build takes several minutes, later runs reuse it');
  try {
    for (const step of buildPlan(versions, partial)) {
      const stepStart = Date.now();
      await run('go', step.args, { cwd: step.cwd, env: { ...process.env, CGO_ENABLED: '0' } });
      log(`  ${step.label}: ${seconds(Date.now() - stepStart)}s`);
    }
    const buildSeconds = seconds(Date.now() - started);
    writeFileSync(join(partial, 'stamp.json'),
      `${JSON.stringify({ versions, digest, go, buildSeconds, builtAt: new Date().toISOString() }, null, 2)}\n`);
    if (stampedDigest(dir, required) === digest) {
      // Another run finished the same build meanwhile: keep its folder, which may be in use.
      rmSync(partial, { recursive: true, force: true });
    } else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(partial, dir);
    }
    log(`built into ${dir} in ${buildSeconds}s`);
    recordBuildTime(`kubernetes ${versions.kubernetes} + etcd`, buildSeconds);
    return { dir, source: 'built', versions };
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

function goOutput(args, cwd) {
  const r = spawnSync('go', args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error) throw new Error(`go ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`go ${args.join(' ')} in ${cwd} failed (exit ${r.status}): ${(r.stderr || '').trim().split('\n').slice(-10).join('\n')}`);
  return r.stdout;
}

const TOOLS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet'];

/**
 * Writes the Go module pinning a Kubernetes release: its go and godebug lines and its staging
 * modules are read from that release's own go.mod, each staging module replaced by its published
 * v0.MINOR.PATCH tag; `go mod tidy` then fills go.sum. Nothing is written unless all of it worked.
 */
export function addKubernetesVersion(release, log = (line) => process.stderr.write(`control-plane-assets: ${line}\n`)) {
  const m = releasePattern.exec(release ?? '');
  if (!m) throw new Error(`--add-version wants a release such as v1.37.2, not ${release ?? 'nothing'}`);
  const dir = join(kubeModules, release);
  if (existsSync(join(dir, 'go.mod'))) throw new Error(`${release} is already pinned (${join(dir, 'go.mod')})`);
  const info = JSON.parse(goOutput(['mod', 'download', '-json', `k8s.io/kubernetes@${release}`], kubeModules));
  if (info.Error || !info.GoMod) throw new Error(`k8s.io/kubernetes@${release}: ${info.Error ?? 'no go.mod in the download'}`);
  const upstream = readFileSync(info.GoMod, 'utf8');
  const goLine = /^go \S+$/m.exec(upstream)?.[0];
  const godebug = /^godebug [^\n]+$/m.exec(upstream)?.[0];
  const staging = [...upstream.matchAll(/^\s*(k8s\.io\/[\w./-]+) => \.\/staging\//gm)].map((x) => x[1]).sort();
  if (!goLine || staging.length === 0) throw new Error(`the go.mod of k8s.io/kubernetes@${release} has no go line or no staging replacements`);
  const tag = `v0.${m[2]}.${m[3]}`;
  const text = [
    `// Pins Kubernetes ${release}: builds kube-apiserver, kube-controller-manager, kube-scheduler and the`,
    '// kubelet from the published k8s.io/kubernetes module. Written by',
    `// \`node scripts/control-plane-assets.mjs --add-version ${release}\`; each staging module points at its`,
    `// published tag ${tag}.`,
    'module podlife.dev/test/control-plane/kube',
    '',
    goLine,
    '',
    ...(godebug ? [godebug, ''] : []),
    'tool (',
    ...TOOLS.map((t) => `\tk8s.io/kubernetes/cmd/${t}`),
    ')',
    '',
    `require k8s.io/kubernetes ${release}`,
    '',
    'replace (',
    ...staging.map((s) => `\t${s} => ${s} ${tag}`),
    ')',
    '',
  ].join('\n');
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  try {
    writeFileSync(join(partial, 'go.mod'), text);
    log(`resolving the dependencies of k8s.io/kubernetes ${release} (go mod tidy)`);
    goOutput(['mod', 'tidy'], partial);
    renameSync(partial, dir);
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
  log(`pinned ${release} in ${dir}; build it with ${VERSION_ENV}=${release} node scripts/control-plane-assets.mjs`);
  return dir;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const started = Date.now();
  const args = process.argv.slice(2);
  const addAt = args.indexOf('--add-version');
  const unknown = args.filter((a, i) => !['--all', '--add-version'].includes(a) && !(addAt >= 0 && i === addAt + 1));
  const work = unknown.length > 0
    ? Promise.reject(new Error(`unknown argument ${unknown[0]} (usage: [--all | --add-version v1.X.Y])`))
    : addAt >= 0
      ? Promise.resolve().then(() => ({ dir: addKubernetesVersion(args[addAt + 1]) }))
      : args.includes('--all')
        // One release at a time: each build uses every core.
        ? supportedKubernetesVersions().reduce((prev, kubernetes) => prev.then(() => ensureControlPlaneAssets({ kubernetes })), Promise.resolve())
          .then(() => ({ dir: cacheRoot() }))
        : ensureControlPlaneAssets();
  work
    .then(({ dir }) => {
      process.stderr.write(`control-plane-assets: ready in ${seconds(Date.now() - started)}s: ${dir}\n`);
    })
    .catch((err) => {
      process.stderr.write(`control-plane-assets: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
