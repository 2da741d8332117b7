/**
 * A reverse service's connection registry in a SQL table (the library's counterpart of
 * `reverse-service --connections FILE`): `<prefix>reverse_connections (name, key_digest, dialect)`,
 * beside the adapter's tables, created on open when missing. Only the key's SHA-256 is stored.
 * Follow it with `followRegistry(service, registry)`: rows added, changed or deleted reach the
 * running service (every replica following the same table sees the same list).
 *
 * @example
 * ```ts
 * import { openSqlAdapter, createSqlConnectionRegistry, createSqlReverseStateStore } from 'storebridge/adapters/sql';
 * import { createReverseService, followRegistry } from 'storebridge/reverse';
 * const main = await openSqlAdapter(process.env.DATABASE_URL!);
 * const registry = await createSqlConnectionRegistry(main);
 * await registry.put({ name: 'shop_1', key: process.env.SHOP_1_KEY!, dialect: 'click2sync' });
 * const service = createReverseService({ adapter: main, connections: await registry.list(), stateStore: await createSqlReverseStateStore(main) });
 * followRegistry(service, registry, { intervalMs: 5000 });
 * ```
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../lib/contract/dialects';
import type { ConnectionRegistry } from '../../lib/reverse/service/reverse-registry';
import { REGISTRY_ENTRY } from '../../lib/reverse/service/reverse-registry';
import { digestOf, type ReverseConnectionOption } from '../../lib/reverse/service/reverse-service-options';
import { defineOptions, readOption } from '../../lib/options';
import { SQL_NAME, type SqlAdapter } from './sql-adapter';
import { loadKysely, SQL_DIALECTS } from './sql-dialects';
import { columnText as text } from './sql-run';
import { storageFailures } from './sql-failures';

export interface SqlConnectionRegistryOptions {
  /** The table's name. Default: the adapter's table prefix + `reverse_connections`. */
  readonly table?: string;
}

export interface SqlConnectionRegistry extends ConnectionRegistry {
  /** Adds or replaces a connection (`key` is stored as its SHA-256 only). */
  put(connection: { readonly name: string; readonly key?: string; readonly keyDigest?: string; readonly dialect?: DialectName }): Promise<void>;
  /** Removes a connection (its state stays in the state store). */
  remove(name: string): Promise<void>;
  /** Drops the table (tests, uninstalling). */
  drop(): Promise<void>;
}

/** `createSqlConnectionRegistry`'s options, declared once (`lib/options.ts`). */
const parseRegistryOptions = defineOptions('createSqlConnectionRegistry', {
  table: SQL_NAME.optional(),
});

export async function createSqlConnectionRegistry(adapter: SqlAdapter, options: SqlConnectionRegistryOptions = {}): Promise<SqlConnectionRegistry> {
  const { sql } = loadKysely();
  const db: Kysely<any> = adapter.db;
  // The default name (the adapter's prefix + `reverse_connections`) is checked the same way as a given one.
  const name = readOption('table', SQL_NAME, parseRegistryOptions(options).table ?? `${adapter.tables.products.replace(/products$/, '')}reverse_connections`);
  const table = adapter.tables.schema ? sql.id(adapter.tables.schema, name) : sql.id(name);
  const dialect = SQL_DIALECTS[adapter.kind];
  // Every column holds short ASCII (a registry name, a hex digest, a dialect name): the digest column's type fits all three.
  const t = dialect.columns.digest;
  await sql`create table if not exists ${table} (${sql.id('name')} ${sql.raw(t)} not null primary key, ${sql.id('key_digest')} ${sql.raw(t)} not null, ${sql.id('dialect')} ${sql.raw(t)})${sql.raw(dialect.columns.tableSuffix)}`.execute(db);
  return {
    list: () =>
      storageFailures(async () => {
        const rows = await sql<{ name: unknown; key_digest: unknown; dialect: unknown }>`select ${sql.id('name')}, ${sql.id('key_digest')}, ${sql.id('dialect')} from ${table} order by ${sql.id('name')}`.execute(db);
        return rows.rows.map((r): ReverseConnectionOption => {
          const dialect = r.dialect === null || r.dialect === undefined ? undefined : text(r.dialect);
          return { name: text(r.name), keyDigest: text(r.key_digest), ...(dialect ? { dialect: dialect as DialectName } : {}) };
        });
      }),
    async put(c) {
      readOption('', REGISTRY_ENTRY, c);
      const digest = c.key !== undefined ? digestOf(c.key).toString('hex') : c.keyDigest!.toLowerCase();
      const connectionDialect = c.dialect ?? null;
      await storageFailures(() =>
        dialect.upsertRow(table, 'name', { name: c.name, key_digest: digest, dialect: connectionDialect }).execute(db),
      );
    },
    async remove(n) {
      await storageFailures(() => sql`delete from ${table} where ${sql.id('name')} = ${n}`.execute(db));
    },
    async drop() {
      await sql`drop table if exists ${table}`.execute(db);
    },
  };
}
