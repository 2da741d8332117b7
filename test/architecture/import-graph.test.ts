/**
 * The floors of the code (docs/architecture.md), enforced: each area imports only from the areas
 * below it. The store side, the caller, the reverse connection and the OpenAPI document never import
 * each other; what they share is in the contract, the HTTP layer or the adapter interface.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

/** The kit's core: every area may use it. */
const CORE = ['errors', 'logger', 'options', 'contract', 'http', 'adapter', 'adapter-guard', 'adapter-registry', 'metrics'];

/** What each area may import besides itself (`*`: anything). */
const ALLOWED: Record<string, readonly string[]> = {
  errors: [],
  logger: ['errors'],
  // The toolkit reads the kinds of options the core declares (a retry policy, `http/retry.ts`).
  options: ['errors', 'logger', 'http'],
  contract: ['errors'],
  metrics: [],
  http: ['errors', 'contract'],
  adapter: ['errors', 'contract'],
  'adapter-guard': ['errors', 'contract', 'adapter'],
  'adapter-registry': ['errors', 'adapter'],
  'adapter-kit': ['adapter', 'adapter-guard', 'adapter-registry'],
  server: CORE,
  client: CORE,
  reverse: CORE,
  openapi: CORE,
  sync: [...CORE, 'client'],
  conformance: [...CORE, 'client'],
  demo: CORE,
  host: [...CORE, 'server', 'demo'],
  dashboard: [...CORE, 'sync'],
  index: ['*'],
  cli: ['*'],
  'adapters/memory': CORE,
  // It also implements the reverse service's state store (`createSqlReverseStateStore`).
  'adapters/sql': [...CORE, 'reverse'],
  // Existing tables through a mapping file, on the SQL adapter's connection, dialect and run layers.
  'adapters/mapped': [...CORE, 'adapters/sql'],
};

function areaOf(file: string): string {
  const rel = path.relative(ROOT, file).replace(/\\/g, '/');
  const m = /^lib\/([^/]+?)(?:\.ts)?(?:\/|$)/.exec(rel) ?? /^(adapters\/[^/]+)\//.exec(rel);
  if (!m) throw new Error(`no area for ${rel}`);
  return m[1];
}

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Relative module specifiers of a file's import/export statements (comments and strings excluded). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/gms)].map((m) => m[1]);
}

test('every area imports only from the areas below it', () => {
  const violations: string[] = [];
  for (const file of [...sources(path.join(ROOT, 'lib')), ...sources(path.join(ROOT, 'adapters'))]) {
    const from = areaOf(file);
    const allowed = ALLOWED[from];
    expect({ file: path.relative(ROOT, file), known: allowed !== undefined }).toEqual({ file: path.relative(ROOT, file), known: true });
    for (const spec of importsOf(file)) {
      const target = path.resolve(path.dirname(file), spec);
      const to = areaOf(fs.existsSync(target) && fs.statSync(target).isDirectory() ? path.join(target, 'index.ts') : `${target}.ts`);
      if (to !== from && !allowed.includes('*') && !allowed.includes(to)) violations.push(`${path.relative(ROOT, file)} (${from}) imports ${spec} (${to})`);
    }
  }
  expect(violations).toEqual([]);
});
