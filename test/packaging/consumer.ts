/**
 * A project of a stranger's, outside the workspace, built from the packed packages.
 *
 * Guarantees: every package under packages/ is packed by `pnpm pack` (what `pnpm publish`
 * uploads) into a fresh temporary directory outside the repository; the project installs those
 * tarballs with plain npm (no workspace links, no `@podlife/source` condition: child processes get
 * no NODE_OPTIONS), so the only network it needs is the npm registry; nothing is written inside
 * the repository; `remove()` deletes the directory.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const ROOT = resolve(import.meta.dirname, '../..');
/** Published packages, in dependency order. */
export const PACKAGES = ['core', 'pod-conditions', 'keystone', 'node-readiness', 'controller'] as const;
export type PackageDir = (typeof PACKAGES)[number];

/** The environment of every child process: the caller's, minus anything that adds Node flags or conditions. */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, COREPACK_INTEGRITY_KEYS: '0', ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

/** Runs a command; a failure throws with its output, so the test names what broke. */
export async function sh(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = childEnv(), timeoutMs = 0): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args, { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: timeoutMs, killSignal: 'SIGKILL' });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.slice(0, 8000));
  }
}

export function readJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export function workspaceManifest(dir: PackageDir): Record<string, unknown> & { name: string; version: string } {
  return readJson(join(ROOT, 'packages', dir, 'package.json'));
}

/** A version the workspace itself installed (so the consumer type-checks against the same @types). */
function installedVersion(name: string): string {
  return readJson<{ version: string }>(join(ROOT, 'node_modules', name, 'package.json')).version;
}

export interface Consumer {
  readonly dir: string;
  /** Tarball file of each package. */
  readonly tarballs: Readonly<Record<PackageDir, string>>;
  /** The installed copy of a package (node_modules/@podlife/<dir>). */
  installed(dir: PackageDir): string;
  remove(): void;
}

/** `pnpm pack` of every package into `<dir>/tarballs`. */
export async function packAll(dir: string): Promise<Record<PackageDir, string>> {
  const out = join(dir, 'tarballs');
  const tarballs = {} as Record<PackageDir, string>;
  for (const pkg of PACKAGES) {
    await sh('corepack', ['pnpm', 'pack', '--pack-destination', out], join(ROOT, 'packages', pkg));
    const manifest = workspaceManifest(pkg);
    tarballs[pkg] = join(out, `${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`);
  }
  const made = readdirSync(out).sort();
  const want = Object.values(tarballs).map((t) => t.slice(out.length + 1)).sort();
  if (made.join() !== want.join()) throw new Error(`pnpm pack made ${made.join(', ')}; expected ${want.join(', ')}`);
  return tarballs;
}

/**
 * Packs every package and installs the tarballs with npm, as a user would: every tarball at once
 * (one alone asks the registry for its siblings), client-node beside them, and the types a strict
 * TypeScript project needs (`@types/ws` for client-node's declarations under `skipLibCheck: false`).
 */
export async function createConsumer(): Promise<Consumer> {
  const dir = mkdtempSync(join(tmpdir(), 'podlife-consumer-'));
  try {
    const tarballs = await packAll(dir);
    const dependencies: Record<string, string> = {};
    for (const pkg of PACKAGES) dependencies[workspaceManifest(pkg).name] = `file:${tarballs[pkg]}`;
    dependencies['@kubernetes/client-node'] = '^2.0.1';
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ name: 'podlife-consumer', private: true, type: 'module', dependencies, devDependencies: { '@types/node': installedVersion('@types/node'), '@types/ws': '^8.18.1' } }, null, 2)}\n`,
    );
    await sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], dir);
    return {
      dir,
      tarballs,
      installed: (pkg) => join(dir, 'node_modules', workspaceManifest(pkg).name),
      remove: () => rmSync(dir, { recursive: true, force: true }),
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Copies an example's TypeScript files (not its README or manifests) into `<consumer>/src/<name>`. */
export function copyExample(consumer: Consumer, name: string): void {
  cpSync(join(ROOT, 'examples', name), join(consumer.dir, 'src', name), { recursive: true, filter: (src) => !/\.(md|ya?ml|json)$/.test(src) && !src.includes('node_modules') });
}

const STRICT = { target: 'ES2023', lib: ['ES2023'], strict: true, skipLibCheck: false, types: ['node'], rootDir: 'src' };

/** Type-checks `<consumer>/src` under `nodenext` (emitting `dist/` to run) or `bundler` (no emit). */
export async function typecheck(consumer: Consumer, resolution: 'nodenext' | 'bundler'): Promise<string> {
  const options =
    resolution === 'nodenext'
      ? { ...STRICT, module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'dist' }
      : { ...STRICT, module: 'ESNext', moduleResolution: 'Bundler', noEmit: true };
  const file = `tsconfig.${resolution}.json`;
  writeFileSync(join(consumer.dir, file), JSON.stringify({ compilerOptions: options, include: ['src'] }, null, 2));
  return sh(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', file], consumer.dir);
}

/** Every file under `dir`, relative paths. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}
