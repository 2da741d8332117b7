/**
 * The entity registry (lib/contract/entities.ts) is the one place the entities are named as a set:
 * types come from `EntityTypes` (`ItemOf<E>`), lists from `ENTITIES`, per-entity facts from the
 * descriptor (`entityOf(e).naturalKey`). A type that branches on an entity's name, or a literal list
 * of the entities, anywhere else would silently leave out an entity added to the registry (a third
 * entity would type as `Order`, or be skipped by a loop), so these fail here.
 */
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const REGISTRY = 'lib/contract/entities.ts';

/**
 * The floor below the contract may not import it (test/architecture/import-graph.test.ts), so its
 * one mention of the entities' names stays: `DuplicateKeyError.entity`.
 */
const ALLOWED: Readonly<Record<string, number>> = { 'lib/errors.ts': 1 };

const RULES: ReadonlyArray<{ readonly what: string; readonly pattern: RegExp }> = [
  { what: "a type conditional on an entity's name (use EntityTypes / ItemOf<E>)", pattern: /\bextends\s+'(?:products|orders)'/g },
  { what: 'a literal list of the entities (use ENTITIES)', pattern: /\[\s*'(?:products|orders)'\s*,\s*'(?:products|orders)'\s*\]/g },
  { what: 'the entities as arguments (use ...ENTITIES or EntitySchema)', pattern: /\(\s*'(?:products|orders)'\s*,\s*'(?:products|orders)'\s*\)/g },
  { what: 'a union of the entity names (use Entity)', pattern: /'(?:products|orders)'\s*\|\s*'(?:products|orders)'/g },
];

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Every hard-wired mention of the entities outside the registry: `file:line: what`. */
export function hardWiredEntities(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const rel = path.relative(ROOT, file).replace(/\\/g, '/');
    if (rel === REGISTRY) continue;
    const text = fs.readFileSync(file, 'utf8');
    const hits: string[] = [];
    for (const { what, pattern } of RULES) {
      for (const m of text.matchAll(pattern)) hits.push(`${rel}:${text.slice(0, m.index).split('\n').length}: ${what}`);
    }
    if (hits.length > (ALLOWED[rel] ?? 0)) found.push(...hits);
  }
  return found;
}

const kitSources = () => [...sources(path.join(ROOT, 'lib')), ...sources(path.join(ROOT, 'adapters'))];

test('no entity list or entity-name type conditional outside the registry', () => {
  expect(hardWiredEntities(kitSources())).toEqual([]);
});

test('the check sees each kind of hard-wiring (it can fail)', () => {
  const dir = fs.mkdtempSync(path.join(ROOT, 'test', 'architecture', '.tmp-entities-'));
  try {
    const samples = [
      "type T<E> = E extends 'products' ? A : B;",
      "for (const e of ['products', 'orders'] as const) {}",
      "fc.constantFrom('orders', 'products');",
      "function f(e: 'products' | 'orders') {}",
    ];
    const files = samples.map((text, i) => {
      const file = path.join(dir, `sample${i}.ts`);
      fs.writeFileSync(file, `${text}\n`);
      return file;
    });
    expect(hardWiredEntities(files).map((h) => h.replace(/^.*sample(\d)\.ts:1: .*$/, '$1'))).toEqual(['0', '1', '2', '3']);
    // The registry itself names them, and is allowed to.
    expect(hardWiredEntities([path.join(ROOT, REGISTRY)])).toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
