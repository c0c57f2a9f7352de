#!/usr/bin/env node
// Provides the command-line tools the integration suites run: helm (lint and template of
// deploy/helm/podlife), promtool (check and unit-test the alerting rules in deploy/observability)
// and kubectl (the podlife CLI as a kubectl plugin).
//
// Guarantees:
// - PODLIFE_HELM / PODLIFE_PROMTOOL / PODLIFE_KUBECTL, when set, name a binary used as is (nothing is built; a
//   missing file is an error naming it);
// - kubectl comes with the newest pinned Kubernetes release (scripts/control-plane-assets.mjs builds
//   it in the same `go build` as the control plane, from the same module);
// - otherwise each tool is built from its Go module in test/tools/<tool>/ once per version into
//   <cache>/podlife/<tool>-<version>/ and reused afterwards; a stamp names the inputs (go.mod,
//   go.sum, build flags), and a change means a rebuild;
// - a build lands in a temporary folder renamed into place only when complete, so an interrupted
//   build never leaves a binary that looks usable;
// - it prints what it did and how long it took, and exits non-zero with a reason on failure.
//
// Usable as a command (`node scripts/go-tools.mjs [helm] [promtool] [kubectl]`, all by default) or imported
// (`ensureGoTool('helm')`).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureControlPlaneAssets, supportedKubernetesVersions } from './control-plane-assets.mjs';
import { goVersion, podlifeCacheRoot, recordBuildTime, run, seconds, stampedDigest } from './go-build.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Each tool: the module that pins it, the package to build, and the flags that stamp its version. */
export const GO_TOOLS = {
  helm: {
    module: 'helm.sh/helm/v4',
    pkg: 'helm.sh/helm/v4/cmd/helm',
    env: 'PODLIFE_HELM',
    ldflags: (v) => `-s -w -X helm.sh/helm/v4/internal/version.version=${v} -X helm.sh/helm/v4/internal/version.metadata= -X helm.sh/helm/v4/internal/version.gitTreeState=clean`,
  },
  promtool: {
    module: 'github.com/prometheus/prometheus',
    pkg: 'github.com/prometheus/prometheus/cmd/promtool',
    env: 'PODLIFE_PROMTOOL',
    // Rules need no service discovery: upstream's tag leaves out every SD plugin (and their cloud SDKs).
    tags: 'remove_all_sd',
    // Prometheus 3.X.Y is published as module version v0.3XX.Y.
    ldflags: (v) => `-s -w -X github.com/prometheus/common/version.Version=${prometheusRelease(v)} -X github.com/prometheus/common/version.Branch=release`,
  },
  kubectl: {
    // Built with the newest pinned Kubernetes release, from its own module (cmd/kubectl is in the
    // tool block of test/control-plane/kube/<release>/go.mod), by scripts/control-plane-assets.mjs.
    module: 'k8s.io/kubernetes',
    env: 'PODLIFE_KUBECTL',
    withControlPlane: true,
  },
};

/** The newest pinned Kubernetes release: the one that builds kubectl. */
function newestKubernetes() {
  const all = supportedKubernetesVersions();
  return all[all.length - 1];
}

function prometheusRelease(moduleVersion) {
  const m = /^v0\.(\d)(\d\d)\.(\d+)$/.exec(moduleVersion);
  return m ? `${m[1]}.${Number(m[2])}.${m[3]}` : moduleVersion;
}

function toolSpec(name) {
  const spec = GO_TOOLS[name];
  if (!spec) throw new Error(`unknown tool "${name}"; known: ${Object.keys(GO_TOOLS).join(', ')}`);
  return spec;
}

function moduleDir(name) {
  return join(repoRoot, 'test', 'tools', name);
}

/** The version test/tools/<name>/go.mod requires of the tool's module. */
export function pinnedToolVersion(name) {
  const { module, withControlPlane } = toolSpec(name);
  if (withControlPlane) return newestKubernetes();
  const goMod = join(moduleDir(name), 'go.mod');
  const text = readFileSync(goMod, 'utf8');
  const escaped = module.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const m = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm').exec(text);
  if (!m?.[1]) throw new Error(`${goMod} does not require ${module}`);
  return m[1];
}

function buildArgs(name, version, out) {
  const spec = toolSpec(name);
  return ['build', '-trimpath', ...(spec.tags ? ['-tags', spec.tags] : []), '-ldflags', spec.ldflags(version), '-o', out, spec.pkg];
}

function inputsDigest(name, version) {
  const h = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) {
    const p = join(moduleDir(name), f);
    if (existsSync(p)) h.update(f).update(readFileSync(p));
  }
  h.update(JSON.stringify(buildArgs(name, version, '<out>')));
  return h.digest('hex').slice(0, 16);
}

export function toolsCacheRoot() {
  return podlifeCacheRoot();
}

/**
 * Makes sure the tool exists and returns its path.
 * @param {'helm' | 'promtool' | 'kubectl'} name
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<{ path: string, version: string, source: 'env' | 'cache' | 'built' }>}
 */
export async function ensureGoTool(name, opts = {}) {
  const log = opts.log ?? ((line) => process.stderr.write(`go-tools: ${line}\n`));
  const spec = toolSpec(name);
  const version = pinnedToolVersion(name);
  const fromEnv = process.env[spec.env];
  if (fromEnv) {
    const path = resolve(fromEnv);
    if (!existsSync(path)) throw new Error(`${spec.env}=${path} does not exist; unset it to build ${name} ${version}`);
    log(`using ${spec.env}=${path} (pinned: ${spec.module} ${version})`);
    return { path, version, source: 'env' };
  }

  if (spec.withControlPlane) {
    const { dir, source } = await ensureControlPlaneAssets({ kubernetes: version, log });
    const path = join(dir, name);
    if (!existsSync(path)) {
      throw new Error(source === 'env'
        ? `KUBEBUILDER_ASSETS=${dir} has no ${name}; set ${spec.env} to one`
        : `${path} is missing: the Go module of Kubernetes ${version} does not list cmd/${name} as a tool`);
    }
    return { path, version, source: source === 'built' ? 'built' : 'cache' };
  }

  const digest = inputsDigest(name, version);
  const dir = join(toolsCacheRoot(), `${name}-${version}`);
  const path = join(dir, name);
  if (stampedDigest(dir, [name]) === digest) {
    const stamp = JSON.parse(readFileSync(join(dir, 'stamp.json'), 'utf8'));
    log(`reusing ${name} ${version} from ${dir} (built in ${stamp.buildSeconds}s on ${stamp.builtAt})`);
    return { path, version, source: 'cache' };
  }

  const go = goVersion();
  if (!go) throw new Error(`Go is needed to build ${name} ${version} (\`go\` on PATH), or set ${spec.env} to an existing ${name} binary`);
  const started = Date.now();
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  log(`building ${name} from ${spec.module} ${version} with ${go}; the first build takes a few minutes, later runs reuse it`);
  try {
    await run('go', buildArgs(name, version, join(partial, name)), { cwd: moduleDir(name), env: { ...process.env, CGO_ENABLED: '0' } });
    const buildSeconds = seconds(Date.now() - started);
    writeFileSync(join(partial, 'stamp.json'), `${JSON.stringify({ module: spec.module, version, digest, go, buildSeconds, builtAt: new Date().toISOString() }, null, 2)}\n`);
    if (stampedDigest(dir, [name]) === digest) {
      rmSync(partial, { recursive: true, force: true });
    } else {
      rmSync(dir, { recursive: true, force: true });
      renameSync(partial, dir);
    }
    log(`built ${name} ${version} into ${dir} in ${buildSeconds}s`);
    recordBuildTime(`${name} ${version}`, buildSeconds);
    return { path, version, source: 'built' };
  } catch (err) {
    rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(GO_TOOLS);
  const started = Date.now();
  (async () => {
    for (const name of names) await ensureGoTool(name);
  })()
    .then(() => process.stderr.write(`go-tools: ${names.join(', ')} ready in ${seconds(Date.now() - started)}s\n`))
    .catch((err) => {
      process.stderr.write(`go-tools: FAILED: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
