/**
 * The surface rules of issue 23, enforced (docs/architecture.md "A declared surface"):
 *
 * 1. Options are checked through one toolkit (`lib/options.ts`: `defineOptions` and `opt`): a
 *    hand-written `new InvalidOptionError` elsewhere is a second, drifting copy of the policy. The
 *    files below still hold some, each with its count and the reason; the list may only shrink.
 * 2. Each runtime name has one home entry point: no name is exported by two entries of
 *    `package.json` (checked on the declared surface, which test/packaging/public-surface.test.ts
 *    holds equal to the built entries). The root stays small: core errors only.
 * 3. No import cycle among the modules of lib/ and adapters/ (type-only imports count: a cycle of
 *    types is still two modules that cannot be understood apart).
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { PUBLIC_SURFACE } from '../packaging/public-surface';

const ROOT = path.join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

const SOURCES = [...sources(path.join(ROOT, 'lib')), ...sources(path.join(ROOT, 'adapters'))];
const rel = (file: string) => path.relative(ROOT, file).replace(/\\/g, '/');

// ---------------------------------------------------------------------------------------------
// 1. One options toolkit

/** The toolkit itself: where `InvalidOptionError` is meant to be constructed. */
const TOOLKIT = 'lib/options.ts';

/**
 * Files that still construct `InvalidOptionError` by hand, with how many times and why. Not
 * factory options parsed by `defineOptions` (yet): converting one lowers its count here.
 */
const HAND_WRITTEN: Record<string, [count: number, reason: string]> = {
  'adapters/mapped/mapped-adapter.ts': [2, 'checks across options (the mapping against the connection), after defineOptions'],
  'adapters/memory/memory-spec.ts': [1, 'a CLI adapter spec string, not an options object'],
  'adapters/sql/sql-adapter.ts': [2, 'checks across options (exactly one of db, dialect or connection; schema only where the database has schemas), after defineOptions'],
  'adapters/sql/sql-connect.ts': [4, 'a connection spec string (URL/path), not an options object'],
  'adapters/sql/sql-drivers.ts': [1, 'a driver setting read from the connection spec (moved here from sql-connect.ts with the drivers)'],
  'adapters/sql/sql-run.ts': [1, 'the dialect of a given Kysely instance, found by inspecting it when `kind` is absent: not an option\'s value'],
  'lib/adapter-registry.ts': [5, 'a plugin registration checked at registration, not an options object'],
  'lib/cli/adapter-spec.ts': [2, 'a CLI adapter spec string, not an options object'],
  'lib/client/client-options.ts': [1, 'checks across options, after defineOptions'],
  'lib/client/client-urls.ts': [2, 'a base URL checked for path rules the URL reader cannot state'],
  'lib/client/idempotency.ts': [1, 'a per-call idempotency key'],
  'lib/client/store-client.ts': [1, 'a per-call argument'],
  'lib/conformance/endpoint-checker.ts': [1, 'checks across options (`writes` needs an orders URL among the client options), after defineOptions'],
  'lib/dashboard/express/dashboard-router.ts': [1, 'checks across options (`jobs: true` needs a sync source with a BullMQ queue), after defineOptions'],
  'lib/openapi/openapi-document.ts': [2, 'checks across options (two operations on one method and path; a webhook path inside the reverse API), after defineOptions'],
  'lib/reverse/daemon/daemon-options.ts': [1, 'checks across options, after defineOptions'],
  'lib/reverse/service/reverse-registry.ts': [3, 'a registry file (JSON/CSV) whose entries are named in the error, not an options object'],
  'lib/reverse/service/reverse-service-options.ts': [4, 'checks across options and across connections (names and keys unique; adapter or adapterFor), after defineOptions'],
  'lib/server/jwt-key-verifier.ts': [1, 'checks across options (issueSvcKey: an asymmetric `algorithm` needs a PEM private `secret`), after defineOptions'],
  'lib/server/router-options.ts': [6, 'checks across options, after defineOptions'],
  'lib/sync/sync-connection.ts': [1, '`start()` without `intervalMs`: a call the options did not allow, refused when it is made'],
  'lib/sync/sync-run.ts': [1, 'checks across options (the entities asked for against those the client covers), after defineOptions'],
};

/** Constructions in code: comments are dropped first, so a JSDoc example does not count. */
function handWrittenChecks(file: string): number {
  const code = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
  return (code.match(/\bnew\s+InvalidOptionError\b/g) ?? []).length;
}

test('InvalidOptionError is constructed only in the options toolkit, or where the allow-list says why', () => {
  const found: Record<string, number> = {};
  for (const file of SOURCES) {
    const n = handWrittenChecks(file);
    if (n > 0 && rel(file) !== TOOLKIT) found[rel(file)] = n;
  }
  const allowed = Object.fromEntries(Object.entries(HAND_WRITTEN).map(([file, [count]]) => [file, count]));
  // Equal, not at most: a file that dropped its checks leaves the list too, so the list stays true.
  expect(found).toEqual(allowed);
});

test('the hand-written checks count reflects the allow-list total', () => {
  const total = Object.values(HAND_WRITTEN).reduce((sum, [count]) => sum + count, 0);
  expect(Object.values(HAND_WRITTEN).every(([, reason]) => reason.length > 0)).toBe(true);
  // Before issue 23's conversion: 139 in 35 files; 132 in 37 when the factories were converted
  // (docs/architecture.md "One toolkit per concern"); after: 44 in 22. Lower it as the list shrinks.
  expect(total).toBeLessThanOrEqual(44);
});

// ---------------------------------------------------------------------------------------------
// 2. One home per runtime name

/** Names exported by more than one entry, with the entries. */
export function exportedTwice(surface: Readonly<Record<string, readonly string[]>>): Record<string, string[]> {
  const homes = new Map<string, string[]>();
  for (const [entry, names] of Object.entries(surface)) for (const name of new Set(names)) homes.set(name, [...(homes.get(name) ?? []), entry]);
  return Object.fromEntries([...homes].filter(([, entries]) => entries.length > 1));
}

test('no runtime name is exported by two entry points', () => {
  expect(exportedTwice(PUBLIC_SURFACE)).toEqual({});
});

test('the finder of names exported twice finds exactly the shared names', () => {
  const name = fc.constantFrom<string>('a', 'b', 'c', 'd', 'e', 'f');
  fc.assert(
    fc.property(fc.dictionary(fc.constantFrom('.', './x', './y', './z'), fc.array(name)), (surface) => {
      const twice = exportedTwice(surface);
      for (const n of ['a', 'b', 'c', 'd', 'e', 'f']) {
        const holders = Object.keys(surface).filter((entry) => surface[entry].includes(n));
        expect(twice[n]?.slice().sort()).toEqual(holders.length > 1 ? holders.sort() : undefined);
      }
    }),
  );
});

test('the root entry is small: the error root and the core errors only', () => {
  const root = PUBLIC_SURFACE['.'];
  expect(root.every((n) => n.endsWith('Error'))).toBe(true);
  expect(root.length).toBeLessThanOrEqual(12);
});

// ---------------------------------------------------------------------------------------------
// 3. No import cycles

/** The modules a file imports by relative path (static `import`/`export … from`, type-only too). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gms)].map((m) => {
    const target = path.resolve(path.dirname(file), m[1]);
    return fs.existsSync(target) && fs.statSync(target).isDirectory() ? path.join(target, 'index.ts') : `${target}.ts`;
  });
}

/** The strongly connected components of more than one node, or with a self-edge (Tarjan). */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('no import cycle in lib/ and adapters/', () => {
  const graph = new Map(SOURCES.map((file) => [file, importsOf(file)]));
  expect(graph.size).toBeGreaterThan(100);
  expect(cyclesOf(graph).map((cycle) => cycle.map(rel))).toEqual([]);
});

test('the cycle finder finds a cycle exactly when the graph has one', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.nat(7), fc.nat(7)), { maxLength: 20 }), (edges) => {
      const graph = new Map<string, string[]>();
      for (let i = 0; i < 8; i++) graph.set(String(i), []);
      for (const [a, b] of edges) graph.get(String(a))!.push(String(b));
      // Reference: a graph has a cycle iff repeatedly removing nodes without in-edges does not empty it (Kahn).
      const indegree = new Map([...graph.keys()].map((v) => [v, 0]));
      for (const targets of graph.values()) for (const t of targets) indegree.set(t, indegree.get(t)! + 1);
      const ready = [...indegree].filter(([, d]) => d === 0).map(([v]) => v);
      let removed = 0;
      while (ready.length) {
        const v = ready.pop()!;
        removed++;
        for (const t of graph.get(v)!) {
          indegree.set(t, indegree.get(t)! - 1);
          if (indegree.get(t) === 0) ready.push(t);
        }
      }
      expect(cyclesOf(graph).length > 0).toBe(removed < graph.size);
    }),
  );
});
