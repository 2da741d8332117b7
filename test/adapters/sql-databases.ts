/**
 * Database gating and isolation for the SQL adapter tests.
 *
 * Each database suite probes its server first. Unreachable: a clear notice and the suite is
 * skipped — unless STOREBRIDGE_REQUIRE_DB=1 (set by .ci/run), where an unreachable server fails.
 * Every adapter gets its own table prefix, so parallel jest workers never collide.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createSqlAdapter, type SqlAdapter, type SqlAdapterOptions } from '../../adapters/sql';
import { connectKysely } from '../../adapters/sql/sql-connect';
import type { SqlKind } from '../../adapters/sql/sql-dialects';
import { describeWhen, withoutCredentials } from '../support/describe-when';

export type ServerKind = Exclude<SqlKind, 'sqlite'>;

export const DATABASE_URLS: Record<ServerKind, string> = {
  postgres: process.env.STOREBRIDGE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  mysql: process.env.STOREBRIDGE_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
};

const LABEL: Record<ServerKind, string> = { postgres: 'PostgreSQL', mysql: 'MariaDB/MySQL' };

const PROBE: Record<ServerKind, string> = {
  postgres: `const { Client } = require('pg');
const c = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
c.connect().then(() => c.query('select 1')).then(() => c.end()).then(() => process.exit(0), (e) => { console.error(e.message); process.exit(1); });`,
  mysql: `const mysql = require('mysql2');
const c = mysql.createConnection({ uri: process.argv[1], connectTimeout: 3000 });
c.query('select 1', (e) => { if (e) { console.error(e.message); process.exit(1); } c.end(() => process.exit(0)); });`,
};

const probed = new Map<ServerKind, string | undefined>();

/** Why the server cannot be used, or undefined when it answers. Probed once per worker (synchronously, so suites can be skipped). */
export function unreachable(kind: ServerKind): string | undefined {
  if (!probed.has(kind)) {
    const r = spawnSync(process.execPath, ['-e', PROBE[kind], DATABASE_URLS[kind]], { encoding: 'utf8', timeout: 10_000, cwd: __dirname });
    probed.set(kind, r.status === 0 ? undefined : (r.stderr || r.error?.message || 'no answer').trim().split('\n')[0]);
  }
  return probed.get(kind);
}

export { REQUIRE_DB } from '../support/describe-when';

/**
 * `describe` for a database suite: runs it when the server answers; otherwise skips it with a
 * notice, or fails when STOREBRIDGE_REQUIRE_DB=1.
 */
export function describeDatabase(kind: ServerKind, name: string, body: () => void): void {
  const why = unreachable(kind);
  const requirement = { unavailable: why === undefined ? undefined : `is unreachable (${why})`, what: `${LABEL[kind]} at ${withoutCredentials(DATABASE_URLS[kind])}`, check: `${LABEL[kind]} is reachable`, suite: 'database' };
  describeWhen(requirement, name, body);
}

/** A table prefix no other test, worker or run uses. */
export function uniquePrefix(): string {
  return `sbt_${randomBytes(5).toString('hex')}_`;
}

/** One Kysely instance (one pool) per test file, shared by the adapters it creates; closed by `close()`. */
export function sharedDatabase(kind: ServerKind): { db: () => Kysely<any>; close: () => Promise<void> } {
  let db: Kysely<any> | undefined;
  return {
    db: () => (db ??= connectKysely(DATABASE_URLS[kind], { poolSize: 10 }).db),
    close: async () => {
      await db?.destroy();
      db = undefined;
    },
  };
}

/** A fresh adapter on its own tables. Drop them with `dropAndClose`. */
export async function isolatedAdapter(db: Kysely<any>, options: Omit<SqlAdapterOptions, 'db' | 'dialect' | 'connection'> = {}): Promise<SqlAdapter> {
  return createSqlAdapter({ db, tablePrefix: uniquePrefix(), ...options });
}

export async function dropAndClose(adapter: SqlAdapter): Promise<void> {
  await adapter.dropTables();
  await adapter.close();
}
