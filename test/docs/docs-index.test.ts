/**
 * docs/README.md is the way into the documentation: it lists every page of docs/ (a page added
 * without a line there is a page nobody finds), and the README points to it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { markdownLinks } from './markdown-links';

const ROOT = resolve(__dirname, '..', '..');
const DOCS = join(ROOT, 'docs');

test('docs/README.md links every page of docs/ in its "Every page" table', () => {
  const index = readFileSync(join(DOCS, 'README.md'), 'utf8');
  const table = index.slice(index.indexOf('## Every page'), index.indexOf('## Glossary'));
  const listed = new Set(markdownLinks(table).map((l) => l.target.replace(/#.*$/, '')));
  const pages = readdirSync(DOCS).filter((f) => f.endsWith('.md') && f !== 'README.md');
  expect(pages.filter((p) => !listed.has(p))).toEqual([]);
});

test('the README sends a newcomer to docs/README.md before the details', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const pointer = readme.indexOf('(docs/README.md)');
  expect(pointer).toBeGreaterThan(0);
  // serve → sync → check comes before the deployed system's specifics (dialects, Click2Sync).
  expect(pointer).toBeLessThan(readme.indexOf('## Serve, sync, check'));
  expect(readme.indexOf('## Serve, sync, check')).toBeLessThan(readme.indexOf('## Connecting to Click2Sync'));
  // The first two commands stay as they are.
  expect(readme).toMatch(/```sh\nnpm install && npm start {5}# installs, builds, starts a demo store on SQLite and shows it working\nnpm test {21}# builds and runs every test\n```/);
});
