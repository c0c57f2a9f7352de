// House rules that the compiler does not check:
// - every package has an `exports` map, so its internals stay private;
// - dependencies point one way: core <- pod-conditions <- keystone, node-readiness <- controller;
// - a package's public surface is what its `src/index.ts` names: the index re-exports by name
//   (no `export *`), every name it exports has a doc comment, and no file outside the package
//   (another package, examples, bench, test) imports a name the index does not export or reaches
//   into the package's code (`@podlife/x/src/...`, a relative path into packages/x/src or dist).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const layers = { core: 0, 'pod-conditions': 1, keystone: 2, 'node-readiness': 1, controller: 3 };
const outside = ['examples', 'bench', 'test', 'scripts'];
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|mjs|js)$/.test(p) && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

function parse(file) {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
}

/** The module specifiers a file imports or re-exports from, with the names it takes (undefined: the whole module). */
function importsOf(source) {
  const found = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      let names;
      if (ts.isImportDeclaration(node)) {
        const bindings = node.importClause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings)) names = bindings.elements.map((e) => (e.propertyName ?? e.name).text);
        else if (node.importClause?.name || bindings) names = undefined;
        else names = [];
      } else if (node.exportClause && ts.isNamedExports(node.exportClause)) {
        names = node.exportClause.elements.map((e) => (e.propertyName ?? e.name).text);
      }
      found.push({ spec, names, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0] ?? {})) {
      found.push({ spec: node.arguments[0].text, names: undefined, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** True when a declaration (or the statement holding it) carries a `/** … *\/` comment. */
function documented(node) {
  const holder = ts.isVariableDeclaration(node) ? node.parent.parent : node;
  return ts.getJSDocCommentsAndTags(holder).length > 0 || (ts.isExportSpecifier(node) && ts.getJSDocCommentsAndTags(node.parent.parent).length > 0);
}

/** The top-level declaration named `name` in a source file (or the `export { name }` that re-exports it). */
function declarationIn(source, name) {
  for (const st of source.statements) {
    if ((ts.isFunctionDeclaration(st) || ts.isClassDeclaration(st) || ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st) || ts.isEnumDeclaration(st)) && st.name?.text === name) return st;
    if (ts.isVariableStatement(st)) for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name) && d.name.text === name) return d;
    if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const e of st.exportClause.elements) if (e.name.text === name) return e;
    }
  }
  return undefined;
}

/** The names an entry file (a package's index, or a subpath's) exports; checks that it names them and documents each. */
function surfaceOf(index) {
  const source = parse(index);
  const names = new Set();
  for (const st of source.statements) {
    if (!ts.isExportDeclaration(st)) {
      if (st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) problems.push(`${index}: declares an export itself; an index only re-exports by name`);
      continue;
    }
    const from = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : undefined;
    if (!st.exportClause) {
      problems.push(`${index}: \`export *\` from ${from}; name each export`);
      continue;
    }
    if (!ts.isNamedExports(st.exportClause) || !from) {
      problems.push(`${index}: exports must be \`export { a, b } from './file.js'\``);
      continue;
    }
    const file = join(dirname(index), from.replace(/\.js$/, '.ts'));
    const target = parse(file);
    for (const e of st.exportClause.elements) {
      const local = (e.propertyName ?? e.name).text;
      names.add(e.name.text);
      const decl = declarationIn(target, local);
      if (!decl) problems.push(`${index}: ${local} is not declared in ${file}`);
      else if (!documented(decl)) problems.push(`${file}: exported ${local} has no doc comment`);
    }
  }
  return names;
}

// Package -> its public names; subpaths of its exports map (`@podlife/core/testing`) -> theirs.
const surfaces = {};
const subpaths = {};
for (const pkg of Object.keys(layers)) {
  const dir = join('packages', pkg);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (!manifest.exports) problems.push(`${dir}/package.json has no exports map`);
  surfaces[pkg] = surfaceOf(join(dir, 'src', 'index.ts'));
  subpaths[pkg] = {};
  for (const [sub, target] of Object.entries(manifest.exports ?? {})) {
    const source = target?.['@podlife/source'];
    if (sub !== '.' && typeof source === 'string') subpaths[pkg][sub.slice(1)] = surfaceOf(join(dir, source));
  }
}

/** Which package a path lies in, if any. */
function packageOf(path) {
  const parts = relative(process.cwd(), resolve(path)).split(sep);
  return parts[0] === 'packages' && parts[1] in layers ? parts[1] : undefined;
}

/** The package whose shipped code (src, dist) a path is part of: its test helpers are not its surface. */
function codeOf(path) {
  const parts = relative(process.cwd(), resolve(path)).split(sep);
  return parts[0] === 'packages' && parts[1] in layers && (parts[2] === 'src' || parts[2] === 'dist') ? parts[1] : undefined;
}

const files = [...walk('packages'), ...outside.flatMap((d) => walk(d))];
for (const file of files) {
  const home = packageOf(file);
  const inSrc = home !== undefined && file.startsWith(join('packages', home, 'src') + sep);
  for (const { spec, names, line } of importsOf(parse(file))) {
    const at = `${file}:${line}`;
    const [, dep, sub] = /^@podlife\/([^/]+)(\/.*)?$/.exec(spec) ?? [];
    const surface = dep === undefined ? undefined : sub === undefined ? surfaces[dep] : subpaths[dep]?.[sub];
    if (dep && sub !== undefined && !surface) problems.push(`${at}: deep import ${spec}; import from @podlife/${dep}`);
    if (spec.startsWith('.')) {
      const target = codeOf(join(dirname(file), spec));
      if (target !== undefined && target !== home) problems.push(`${at}: imports ${spec}, a file of @podlife/${target}; import from @podlife/${target}`);
    }
    if (!dep || !(dep in layers)) continue;
    if (inSrc && dep !== home && !(layers[dep] < layers[home])) problems.push(`${at}: ${home} must not depend on ${dep}`);
    if (dep === home) continue;
    for (const name of names ?? []) {
      if (surface && !surface.has(name)) problems.push(`${at}: ${spec} does not export ${name}`);
    }
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
const counts = Object.entries(surfaces).map(([p, s]) => `${p} ${s.size}`).join(', ');
console.log(`exports and layering: ${Object.keys(layers).length} packages checked; public names: ${counts}`);
