/**
 * Every entry point of the built package (`npm test` builds first) exports exactly the runtime
 * names `public-surface.ts` declares: a name added to an entry by accident (an internal helper
 * re-exported by `export *`) fails here, and so does a declared name that went missing.
 */
import path from 'node:path';
import { PUBLIC_SURFACE } from './public-surface';

const ROOT = path.join(__dirname, '..', '..');
const manifest = require(path.join(ROOT, 'package.json')) as { exports: Record<string, string | { default: string }> };
const entries = Object.entries(manifest.exports).filter(([subpath]) => subpath !== './package.json');

test('every entry point has a declared surface, and every declared surface an entry point', () => {
  expect(entries.map(([subpath]) => subpath).sort()).toEqual(Object.keys(PUBLIC_SURFACE).sort());
});

test.each(entries)('%s exports exactly its declared names', (subpath, target) => {
  const file = path.join(ROOT, typeof target === 'string' ? target : target.default);
  const exported = Object.keys(require(file) as object).sort();
  const declared = [...(PUBLIC_SURFACE[subpath] ?? [])].sort();
  expect({ subpath, undeclared: exported.filter((n) => !declared.includes(n)), missing: declared.filter((n) => !exported.includes(n)) }).toEqual({ subpath, undeclared: [], missing: [] });
});

test('the root stays narrow: no contract schema, no internal helper', () => {
  const root = PUBLIC_SURFACE['.'];
  for (const internal of ['KeyedMutex', 'jsonEqual', 'OPERATIONS', 'errorResponse', 'CursorCodec', 'handleWrite', 'readJsonBody', 'FIRST_CHUNK', 'parseRouterOptions', 'startStoreServer', 'seedDemo', 'lineLogger']) {
    expect(root).not.toContain(internal);
  }
  expect(root.filter((n) => n.endsWith('Schema'))).toEqual([]);
});
