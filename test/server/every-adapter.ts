/**
 * The store router's write tests on every bundled adapter: memory, SQLite (a file, so the store can
 * be restarted), PostgreSQL and MariaDB (each on its own table prefix), seeded with the demo data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryAdapter } from '../../adapters/memory';
import { createSqlAdapter, type SqlAdapter } from '../../adapters/sql';
import type { StoreAdapter } from '../../lib/adapter';
import { demoCatalog, seedDemo } from '../../lib/demo';
import { DATABASE_URLS, describeDatabase, uniquePrefix } from '../adapters/sql-databases';

export interface AdapterKind {
  readonly name: string;
  /** A fresh store holding the demo catalog of `n`. */
  fresh(n: number): Promise<StoreUnderTest>;
}

export interface StoreUnderTest {
  readonly adapter: StoreAdapter;
  /** The same store opened again (what a restarted `serve` sees), or `undefined` when it keeps nothing (memory). */
  reopen(): Promise<StoreAdapter> | undefined;
  /** Drops what it stored. */
  dispose(): Promise<void>;
}

function sqlKind(name: string, connection: () => { spec: string; cleanup?: () => void }): AdapterKind {
  return {
    name,
    async fresh(n) {
      const { spec, cleanup } = connection();
      const tablePrefix = uniquePrefix();
      const adapter = await createSqlAdapter({ connection: spec, tablePrefix, poolSize: 12 });
      await seedDemo(adapter, n);
      const opened: SqlAdapter[] = [adapter];
      return {
        adapter,
        reopen: () => createSqlAdapter({ connection: spec, tablePrefix, poolSize: 12 }).then((a) => (opened.push(a), a)),
        async dispose() {
          await opened[0].dropTables();
          for (const a of opened) await a.close();
          cleanup?.();
        },
      };
    },
  };
}

const memory: AdapterKind = {
  name: 'memory',
  async fresh(n) {
    return { adapter: createMemoryAdapter(structuredClone(demoCatalog(n))), reopen: () => undefined, dispose: async () => undefined };
  },
};

const sqlite = sqlKind('SQLite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-writes-'));
  return { spec: `sqlite:${join(dir, 'store.db')}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
});

/**
 * Registers `body` once per adapter: memory and SQLite always, PostgreSQL and MariaDB when their
 * servers answer (or failing under STOREBRIDGE_REQUIRE_DB=1).
 */
export function describeEveryAdapter(name: string, body: (kind: AdapterKind) => void): void {
  describe(`${name} on memory`, () => body(memory));
  describe(`${name} on SQLite`, () => body(sqlite));
  describeDatabase('postgres', `${name} on PostgreSQL`, () => body(sqlKind('PostgreSQL', () => ({ spec: DATABASE_URLS.postgres }))));
  describeDatabase('mysql', `${name} on MariaDB`, () => body(sqlKind('MariaDB', () => ({ spec: DATABASE_URLS.mysql }))));
}
