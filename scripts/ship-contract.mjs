#!/usr/bin/env node
// The annotation contract in a package's tarball (prepack / postpack of the packages whose README
// points at it): `node ../../scripts/ship-contract.mjs` writes ./annotations.md, a copy of
// docs/annotations.md whose links to other files of the repository are rewritten to the
// repository's address (inside a tarball a relative link has nothing to resolve to); anchors and
// absolute links are kept. `--remove` deletes the copy again. The copy is never committed.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'docs', 'annotations.md');
const REPOSITORY = 'https://github.com/podlife/podlife/blob/main/';
const target = join(process.cwd(), 'annotations.md');

if (relative(ROOT, process.cwd()).split(/[\\/]/)[0] !== 'packages') {
  console.error(`ship-contract: run it from a package folder (packages/<name>), not ${process.cwd()}`);
  process.exit(2);
}
if (process.argv.includes('--remove')) {
  if (existsSync(target)) rmSync(target);
  process.exit(0);
}

/** A link target of docs/annotations.md as the tarball's copy must hold it. */
export function shippedLink(href) {
  if (href.startsWith('#') || /^[a-z][a-z0-9+.-]*:/i.test(href)) return href;
  return REPOSITORY + posix.normalize(posix.join('docs', href));
}

const text = readFileSync(SOURCE, 'utf8').replace(/\]\(([^)\s]+)\)/g, (_, href) => `](${shippedLink(href)})`);
writeFileSync(target, `<!-- A copy of docs/annotations.md of the podlife repository, packed with this package. -->\n\n${text}`);
