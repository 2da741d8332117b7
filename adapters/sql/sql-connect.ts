/**
 * Connection specs (`--adapter` values) to Kysely instances. The driver is required only when a
 * spec names it (`sql-drivers.ts`), so a user installs only the driver they use.
 */
import type { Kysely } from 'kysely';
import { InvalidOptionError } from '../../lib/errors';
import { SQL_DIALECTS, SQL_KINDS, type SqlKind } from './sql-dialects';
import type { ConnectionOptions } from './sql-drivers';

export { SQLITE_PAGE_SIZE, type ConnectionOptions } from './sql-drivers';

export interface SqlConnectionSpec {
  readonly kind: SqlKind;
  /** SQLite: the file path (or `:memory:`). PostgreSQL / MySQL: the connection URL. */
  readonly target: string;
  /** `?tablePrefix=` of a PostgreSQL / MySQL URL (removed from `target`). */
  readonly tablePrefix?: string;
  /** `?schema=` of a PostgreSQL URL (removed from `target`). */
  readonly schema?: string;
}

/**
 * Parses `sqlite:FILE`, `sqlite::memory:`, `postgres:URL`, `postgres://…`, `postgresql://…`,
 * `mysql:URL`, `mysql://…`, `mariadb:URL`, `mariadb://…`.
 */
export function parseSqlSpec(spec: string): SqlConnectionSpec {
  const m = /^([a-z]+):(.*)$/s.exec(spec);
  const kind = m ? SQL_KINDS.find((k) => SQL_DIALECTS[k].schemes.includes(m[1])) : undefined;
  if (!m || !kind) throw new InvalidOptionError('connection', `"${redactConnectionSpec(spec)}" is not sqlite:FILE, postgres:URL or mysql:URL`);
  const [, scheme, rest] = m;
  const dialect = SQL_DIALECTS[kind];
  if (dialect.target === 'file') {
    if (rest === '') throw new InvalidOptionError('connection', `${scheme}: needs a file name (sqlite:./store.db or sqlite::memory:)`);
    return { kind, target: rest };
  }
  // `postgres://…` is the URL itself; `postgres:postgres://…` wraps one.
  const url = rest.startsWith('//') ? `${scheme}:${rest}` : rest;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidOptionError('connection', `"${redactConnectionSpec(spec)}" has no valid ${kind} URL`);
  }
  const protocols = dialect.schemes.map((p) => `${p}:`);
  if (!protocols.includes(parsed.protocol)) {
    throw new InvalidOptionError('connection', `a ${kind} URL starts with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  if (dialect.driverProtocol) parsed.protocol = dialect.driverProtocol;
  // Adapter options carried in the URL (so a CLI user can isolate tables); never sent to the driver.
  const extra: { tablePrefix?: string; schema?: string } = {};
  for (const name of ['tablePrefix', 'schema'] as const) {
    const value = parsed.searchParams.get(name);
    if (value !== null) extra[name] = value;
    parsed.searchParams.delete(name);
  }
  return { kind, target: parsed.toString(), ...extra };
}

/** The spec with any URL password (userinfo or `password=` parameter) replaced by `***`. Safe to print. */
export function redactConnectionSpec(spec: string): string {
  return spec.replace(/(\/\/[^:/@?#]*:)[^@/?#]*@/g, '$1***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}


/** A Kysely instance for a spec (the driver is loaded here). */
export function connectKysely(spec: string, options: ConnectionOptions = {}): { db: Kysely<any>; kind: SqlKind } {
  const { kind, target } = parseSqlSpec(spec);
  return { kind, db: SQL_DIALECTS[kind].open(target, options) };
}

