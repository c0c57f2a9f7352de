#!/usr/bin/env node
/**
 * Every relative link in the repository's Markdown points at something that is there.
 *
 * Guarantees:
 * - every `.md` file of the repository (not node_modules, dist or .git) is read; each inline link,
 *   image and reference definition whose target has no scheme must name a file or folder that
 *   exists, and a `#fragment` on a Markdown target (or on the same file) must name one of its
 *   headings (GitHub's slugs) or an explicit `<a id>`/`<a name>` anchor;
 * - links inside fenced code blocks and inline code are not links and are never checked;
 * - each package's Markdown is also checked as its tarball holds it: the files `pnpm pack` ships
 *   (the `files` list, README, LICENSE, CHANGELOG, package.json), so a package README that points
 *   out of its package (`../../docs/…`) is reported even though the link works in the repository;
 * - the output names the file, the line and the target; the exit code is 1 when anything is wrong.
 *
 *     node scripts/link-check.mjs            # the whole repository and every package as packed
 *     node scripts/link-check.mjs README.md  # only these files (still checked as packed, if they ship)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const SKIPPED_DIRS = new Set(['node_modules', 'dist', '.git', '.cache', 'coverage']);

/** Every Markdown file under `dir`, repository-relative. */
export function markdownFiles(dir = ROOT) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) found.push(...markdownFiles(join(dir, entry.name)));
    } else if (entry.isFile() && entry.name.endsWith('.md')) {
      found.push(relative(ROOT, join(dir, entry.name)));
    }
  }
  return found.sort();
}

/**
 * The lines of a Markdown text with fenced code blocks blanked and inline code spans removed,
 * so that what is left holds only prose, links and headings (line numbers preserved).
 */
export function proseLines(text) {
  const lines = text.split('\n');
  let fence;
  return lines.map((line) => {
    const open = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (open && open[1][0] === fence[0] && open[1].length >= fence.length && line.trim() === open[1]) fence = undefined;
      return '';
    }
    if (open) {
      fence = open[1];
      return '';
    }
    return line.replace(/(`+)(?:(?!\1).)*?\1/g, '');
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a Markdown file offers: its headings' slugs (numbered when repeated) and explicit anchors. */
export function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  const raw = text.split('\n');
  const prose = proseLines(text);
  for (let i = 0; i < raw.length; i++) {
    // Headings are read from the raw line: a code span in a heading keeps its text in the slug.
    const heading = prose[i] === '' && raw[i].trim() !== '' ? undefined : /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw[i]);
    if (heading) {
      // Inside a code span `<x>` is text, not a tag: its brackets go as punctuation, its word stays.
      const base = slug(heading[1].replace(/`([^`]*)`/g, (_, code) => code.replace(/[<>]/g, '')));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of prose[i].matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** The link targets of a Markdown text: `{ line, target }`, code excluded. */
export function linksOf(text) {
  const links = [];
  proseLines(text).forEach((line, i) => {
    // Inline links and images: [text](target "title") — the target up to a space or the closing parenthesis.
    for (const m of line.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: i + 1, target: m[1] });
    const ref = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(line);
    if (ref) links.push({ line: i + 1, target: ref[1] });
  });
  return links;
}

const anchorCache = new Map();
function anchorsOfFile(path) {
  if (!anchorCache.has(path)) anchorCache.set(path, anchorsOf(readFileSync(path, 'utf8')));
  return anchorCache.get(path);
}

function isExternal(target) {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}

/**
 * Problems with one file's links. `shipped`, when given, is the set of package-relative paths a
 * tarball holds and `pkgRoot` the package folder: a target must then also be inside the tarball.
 */
export function checkFile(file, { shipped, pkgRoot } = {}) {
  const abs = join(ROOT, file);
  const problems = [];
  for (const { line, target } of linksOf(readFileSync(abs, 'utf8'))) {
    if (target === '' || isExternal(target)) continue;
    const hash = target.indexOf('#');
    const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
    const fragment = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
    const dest = pathPart === '' ? abs : pathPart.startsWith('/') ? join(ROOT, pathPart) : resolve(dirname(abs), pathPart);
    const where = `${file}:${line}`;
    if (!existsSync(dest)) {
      problems.push(`${where}: ${target}: no such file or folder`);
      continue;
    }
    if (shipped) {
      const inPackage = relative(pkgRoot, dest);
      if (inPackage.startsWith('..') || inPackage.startsWith(sep) || !isShipped(inPackage, shipped)) {
        problems.push(`${where}: ${target}: not in the package's tarball (a reader of the installed package finds nothing there)`);
        continue;
      }
    }
    if (fragment !== undefined && statSync(dest).isFile() && dest.endsWith('.md') && !anchorsOfFile(dest).has(fragment)) {
      problems.push(`${where}: ${target}: no heading or anchor "#${fragment}" in ${relative(ROOT, dest)}`);
    }
  }
  return problems;
}

function isShipped(path, shipped) {
  if (path === '') return true;
  for (const entry of shipped) if (path === entry || path.startsWith(`${entry}/`) || entry.startsWith(`${path}/`)) return true;
  return false;
}

/** The packages of the workspace, each with what its tarball ships (package-relative paths). */
export function packages() {
  const dir = join(ROOT, 'packages');
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'package.json')))
    .map((e) => {
      const root = join(dir, e.name);
      const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
      if (manifest.private) return undefined;
      const always = readdirSync(root).filter((f) => /^(readme|license|licence|changelog)(\.|$)/i.test(f));
      const files = (manifest.files ?? []).map((f) => f.replace(/^\.\//, '').replace(/\/$/, ''));
      return { name: manifest.name, root, shipped: new Set(['package.json', ...always, ...files]) };
    })
    .filter(Boolean);
}

function main(args) {
  const files = args.length > 0 ? args.map((f) => relative(ROOT, resolve(f))) : markdownFiles();
  const problems = [];
  for (const file of files) problems.push(...checkFile(file));
  // As packed: the package's own Markdown, read from inside its tarball.
  let packedChecked = 0;
  for (const pkg of packages()) {
    for (const file of files) {
      const inPackage = relative(pkg.root, join(ROOT, file));
      if (inPackage.startsWith('..') || !isShipped(inPackage, pkg.shipped)) continue;
      packedChecked++;
      for (const p of checkFile(file, { shipped: pkg.shipped, pkgRoot: pkg.root })) problems.push(`${p} [${pkg.name}, as packed]`);
    }
  }
  const unique = [...new Set(problems)];
  for (const p of unique) console.error(p);
  if (unique.length > 0) {
    console.error(`link-check: ${unique.length} broken link${unique.length === 1 ? '' : 's'} in ${files.length} Markdown files`);
    process.exit(1);
  }
  console.log(`link-check: ${files.length} Markdown files (${packedChecked} as packed), every relative link resolves`);
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
