/**
 * One description of the wire, and one home per quirk (docs/architecture.md "Rules that keep it
 * so"; issue 23), held on the source text:
 *
 * - the daemon spells no reverse path: it names calls, and their paths come from `REVERSE_ROUTES`;
 * - the request log and the store core re-declare no query pattern and re-read no body they built;
 * - the caller takes its limits from the contract;
 * - no code outside `lib/contract/dialects.ts` branches on a dialect's name, and every member of a
 *   dialect object is read somewhere (no dead quirk);
 * - no file of the SQL adapter or the mapped adapter but `sql-dialects.ts` compares database kinds or
 *   keeps a per-kind table.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DIALECTS, REVERSE_ROUTES, STORE_DIALECT } from '../../lib/contract';
import { SQL_DIALECTS } from '../../adapters/sql/sql-dialects';

const ROOT = path.join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** A file's code without its comments (string and template literals kept, `//` inside them too). */
function code(file: string): string {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return text.replace(/('(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`|"(?:[^"\\\n]|\\.)*")|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (m, literal: string | undefined) => literal ?? '');
}

/** The string and template literals of a file's code (templates with their `${…}` as written). */
function literals(file: string): string[] {
  return [...code(file).matchAll(/'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\]|\\.)*)`/g)].map((m) => m[1] ?? m[2]);
}

/** Every first path segment of a reverse call (`ping`, `pull`, `push`, …). */
const REVERSE_SEGMENTS = [...new Set(REVERSE_ROUTES.map((r) => r.path.split('/')[1]))];

describe('the daemon builds its URLs from the reverse route table', () => {
  test('no literal in lib/reverse/daemon is a reverse path (only GET / is its own)', () => {
    const spelled = sources('lib/reverse/daemon').flatMap((file) =>
      literals(file)
        .filter((text) => (text.startsWith('/') && text !== '/') || REVERSE_SEGMENTS.some((s) => text.startsWith(`${s}/`)) || text.includes('/api/adapters/'))
        .map((text) => `${file}: ${text}`),
    );
    expect(spelled).toEqual([]);
  });

  test('the daemon does not reach for the base path or fill ids itself', () => {
    const offenders = sources('lib/reverse/daemon').filter((file) => /\bREVERSE_BASE_PATH\b|\.replace\(\s*':id'/.test(code(file)) && !file.endsWith('daemon-transport.ts'));
    expect(offenders).toEqual([]);
    // The transport takes method and path from the table and the URL from reverseUrl.
    expect(code('lib/reverse/daemon/daemon-transport.ts')).toMatch(/reverseRoute\(/);
    expect(code('lib/reverse/daemon/daemon-transport.ts')).toMatch(/reverseUrl\(/);
  });
});

describe('the store side re-declares no wire pattern', () => {
  test('no query-parameter pattern (digits of a jobid, an offset) is written in lib/server: the contract query tables parse them', () => {
    const patterns = sources('lib/server').flatMap((file) => [...code(file).matchAll(/\/(?:[^/\n\\]|\\.)+\/[gimsuy]*/g)].map((m) => ({ file, regex: m[0] })));
    const restated = patterns.filter(({ regex }) => /jobid|offset|sortorder/.test(regex) && /\\d/.test(regex));
    expect(restated).toEqual([]);
  });

  test('no code reads paging back out of a list body it built', () => {
    const offenders = sources('lib/server').filter((file) => /\\\{"paging"|"paging":\\\{/.test(code(file)));
    expect(offenders).toEqual([]);
  });

  test('the caller restates no interface limit', () => {
    const offenders = sources('lib/client').filter((file) => /\b(10_000_000|10000000|60_000|60000)\b/.test(code(file)));
    expect(offenders).toEqual([]);
  });
});

describe('each dialect has one home', () => {
  test("no code outside lib/contract/dialects.ts compares a dialect's name", () => {
    const offenders = [...sources('lib'), ...sources('adapters')]
      .filter((file) => !file.endsWith(path.join('contract', 'dialects.ts')))
      // (`origin !== 'spec'` is a parameter's origin, not a dialect.)
      .flatMap((file) => [...code(file).matchAll(/(?<!origin !?)[!=]==?\s*'(?:spec|click2sync)'|'(?:spec|click2sync)'\s*[!=]==?|case\s+'(?:spec|click2sync)'/g)].map((m) => `${file}: ${m[0]}`));
    expect(offenders).toEqual([]);
  });

  test('every member of a dialect object is read somewhere outside its declaration (no dead quirk)', () => {
    const everything = [...sources('lib'), ...sources('adapters')];
    const declaring = new Set([path.join('lib', 'contract', 'dialects.ts'), path.join('adapters', 'sql', 'sql-dialects.ts')]);
    const elsewhere = everything.filter((file) => !declaring.has(file)).map(code).join('\n');
    const inDeclaring = [...declaring].map(code).join('\n');
    const members = [
      ...Object.keys(DIALECTS.spec).filter((m) => m !== 'name' && m !== 'summary'),
      ...Object.keys(DIALECTS.spec.pulled),
      ...Object.keys(STORE_DIALECT),
      ...Object.keys(SQL_DIALECTS.sqlite).filter((m) => m !== 'kind'),
    ];
    // Read as `.member` (or destructured) in a file that uses the dialect, or by the dialect file's own encoders.
    const unread = members.filter((m) => !new RegExp(`\\.${m}\\b|\\{[^}]*\\b${m}\\b[^}]*\\}\\s*=`).test(elsewhere) && !new RegExp(`(?:form|dialect|d)\\.${m}\\b`).test(inDeclaring));
    expect(unread).toEqual([]);
  });

  test('no file of the SQL adapter or the mapped adapter but sql-dialects.ts compares database kinds or keeps a per-kind table', () => {
    // (`source.kind === 'column'` and the like are a mapping source's kind, not a database's: the pattern names only database kinds.)
    const offenders = [...sources('adapters/sql'), ...sources('adapters/mapped')]
      .filter((file) => !file.endsWith('sql-dialects.ts'))
      .flatMap((file) => [...code(file).matchAll(/[!=]==?\s*'(?:sqlite|postgres|postgresql|mysql|mariadb)'|'(?:sqlite|postgres|mysql)'\s*[!=]==?|case\s+'(?:sqlite|postgres|mysql)'|Record<SqlKind\b|\b(?:Sqlite|Postgres|Mysql)Adapter\b/g)].map((m) => `${file}: ${m[0]}`));
    expect(offenders).toEqual([]);
  });
});
