/**
 * The documentation checks (docs/adr/0262): link-check finds every relative link and anchor, code
 * excluded, and reports one that leaves a package's tarball; doc-snippets reads the blocks and
 * their markers, and refuses a marker it does not know or a skip without a reason.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { after, describe, it } from 'mocha';
import { blocksOf, documents, parseMarker } from '../../scripts/doc-snippets.mjs';
import { anchorsOf, checkFile, linksOf, slug } from '../../scripts/link-check.mjs';

const ROOT = resolve(import.meta.dirname, '../..');

describe('link-check: what is a link and what is an anchor', () => {
  it("slugs headings as GitHub does: lower case, punctuation dropped, a code span's <word> kept", () => {
    assert.equal(slug('Why is my pod stuck?'), 'why-is-my-pod-stuck');
    assert.deepEqual([...anchorsOf('## `role.podlife.dev/<container>`\n## Tables\n## Tables\n<a id="x"></a>')], ['rolepodlifedevcontainer', 'tables', 'tables-1', 'x']);
  });
  it('finds inline links, images and reference definitions, never inside code', () => {
    const text = 'see [a](b.md#c), ![i](img.png "t") and `[x](y)`\n```\n[q](r)\n```\n[ref]: ../z.md';
    assert.deepEqual(linksOf(text), [
      { line: 1, target: 'b.md#c' },
      { line: 1, target: 'img.png' },
      { line: 5, target: '../z.md' },
    ]);
  });

  const dir = mkdtempSync(join(tmpdir(), 'podlife-links-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return relative(ROOT, join(dir, name));
  };

  it('reports a missing file and a missing anchor, by line; accepts what is there', () => {
    write('target.md', '# Target\n## Second part\n');
    const file = write('doc.md', '[ok](target.md#second-part)\n[gone](missing.md)\n[bad](target.md#third)\n[web](https://example.com/x)\n');
    const problems = checkFile(file);
    assert.equal(problems.length, 2, problems.join('\n'));
    assert.match(problems[0] ?? '', /doc\.md:2: missing\.md: no such file/);
    assert.match(problems[1] ?? '', /doc\.md:3: target\.md#third: no heading or anchor "#third"/);
  });
  it('as packed: a link out of the package is reported though the file exists', () => {
    write('outside.md', '# Outside\n');
    const pkgRoot = join(dir, 'pkg');
    mkdirSync(pkgRoot, { recursive: true });
    writeFileSync(join(pkgRoot, 'README.md'), '[contract](../outside.md)\n');
    const file = relative(ROOT, join(pkgRoot, 'README.md'));
    assert.deepEqual(checkFile(file), []);
    const packed = checkFile(file, { shipped: new Set(['README.md', 'dist']), pkgRoot });
    assert.equal(packed.length, 1);
    assert.match(packed[0] ?? '', /not in the package's tarball/);
  });
});

describe('doc-snippets: blocks and their markers', () => {
  it('reads each fenced block with its language, first code line and the marker before it', () => {
    const text = ['# Doc', '', '<!-- snippet: run file=a.ts -->', '```ts', 'const a = 1;', '```', '', '```yaml', 'k: v', '```'].join('\n');
    const { blocks, problems } = blocksOf(text, 'doc.md');
    assert.deepEqual(problems, []);
    assert.deepEqual(
      blocks.map((b) => [b.lang, b.line, b.code, b.marker.run, b.marker.file]),
      [
        ['ts', 5, 'const a = 1;', true, 'a.ts'],
        ['yaml', 9, 'k: v', false, undefined],
      ],
    );
  });
  it('refuses an unknown directive, a skip without a reason, and a marker with no block after it', () => {
    assert.match(parseMarker(' runn ', 'd.md:3').problems[0] ?? '', /d\.md:3: unknown snippet directive "runn"/);
    assert.match(parseMarker(' skip: ', 'd.md:3').problems[0] ?? '', /needs a reason/);
    assert.equal(parseMarker(' skip: a fragment of the block above ', 'd.md:3').directives.skip, 'a fragment of the block above');
    assert.match(blocksOf('<!-- snippet: run -->\n\nsome prose\n', 'd.md').problems[0] ?? '', /d\.md:1: a snippet marker must come right before a code block/);
  });
  it('checks README.md and docs/, never the decision records', () => {
    const docs = documents();
    assert.ok(docs.includes('README.md') && docs.includes('docs/annotations.md'));
    assert.deepEqual(docs.filter((d) => d.startsWith('docs/adr/')), []);
  });
});
