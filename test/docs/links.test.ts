/**
 * Every relative link in the README, docs/ and examples/ Markdown leads somewhere inside the
 * repository: a file or directory that exists, and, for `file.md#anchor` (or `#anchor` within a
 * page), a heading of that page. A reader on npm or in a clone must never meet a dead link.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { anchorsOf, brokenLink, markdownLinks, slug } from './markdown-links';

const ROOT = resolve(__dirname, '..', '..');

function markdownFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? markdownFiles(join(dir, d.name)) : d.name.endsWith('.md') ? [join(dir, d.name)] : [],
  );
}

const FILES = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs')), ...markdownFiles(join(ROOT, 'examples'))];

test('the pages exist', () => {
  expect(FILES.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['README.md', 'docs/interface.md', 'docs/contract.md']));
});

test.each(FILES.map((f) => [relative(ROOT, f), f]))('every relative link in %s leads somewhere', (_name, file) => {
  const broken = markdownLinks(readFileSync(file, 'utf8'))
    .map(({ line, target }) => ({ line, problem: brokenLink(file, target, ROOT) }))
    .filter((x) => x.problem !== undefined)
    .map(({ line, problem }) => `line ${line}: ${problem}`);
  expect(broken).toEqual([]);
});

describe('the checker', () => {
  const page = join(ROOT, 'docs', 'interface.md');
  test('finds links, not code', () => {
    const text = ['See [a](a.md), [b](<b c.md> "title") and ![i](img.png).', '`[no](code.md)`', '```', '[no](fenced.md)', '```', '[ref]: ./ref.md'].join('\n');
    expect(markdownLinks(text)).toEqual([
      { line: 1, target: 'a.md' },
      { line: 1, target: 'b c.md' },
      { line: 1, target: 'img.png' },
      { line: 6, target: './ref.md' },
    ]);
  });
  test("slugs headings like GitHub, numbering repeats", () => {
    expect(slug('The SQL adapter (`storebridge/adapters/sql`)')).toBe('the-sql-adapter-storebridgeadapterssql');
    expect(slug('SQL_DRIVER_UNAVAILABLE')).toBe('sql_driver_unavailable');
    expect(slug('Ids: the [link](x.md) text, café')).toBe('ids-the-link-text-café');
    expect([...anchorsOf('# A\n## A\n```\n# Not\n```\n<a name="x"></a>')]).toEqual(['a', 'a-1', 'x']);
  });
  test('refuses a missing file, a missing anchor and a way out of the repository; takes URLs and good links', () => {
    expect(brokenLink(page, 'nowhere.md', ROOT)).toMatch(/no such file/);
    expect(brokenLink(page, 'errors.md#no-such-heading', ROOT)).toMatch(/no heading "#no-such-heading"/);
    expect(brokenLink(page, '#no-such-heading', ROOT)).toMatch(/no heading/);
    expect(brokenLink(page, '../../shared/spec/connector-interface.md', ROOT)).toMatch(/outside the repository/);
    expect(brokenLink(page, 'https://example.com/x.md', ROOT)).toBeUndefined();
    expect(brokenLink(page, 'errors.md#sql_driver_unavailable', ROOT)).toBeUndefined();
    expect(brokenLink(page, '#dialects', ROOT)).toBeUndefined();
    expect(brokenLink(page, '../examples/custom-adapter.ts', ROOT)).toBeUndefined();
    expect(brokenLink(page, '../docs', ROOT)).toBeUndefined();
  });
});
