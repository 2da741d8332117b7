/**
 * The SQL adapter: one Kysely implementation for SQLite (better-sqlite3), PostgreSQL (pg) and
 * MySQL/MariaDB (mysql2). See docs/sql-adapter.md for the schema, paging plans and dialect notes.
 */
import type { Dialect, Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import { defineOptions, opt } from '../../lib/options';
import {
  resolveWrite,
  rawJson,
  uniqueKeyOf,
  UNIQUE_MEMBERS,
  type EntityStore,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListOptions,
  type RawJsonItem,
  type SignalOptions,
  type SortKey,
  type StoreAdapter,
  type UpsertResult,
  type WriteOptions,
} from '../../lib/adapter';
import type { Order, Product } from '../../lib/contract/webhook';
import type { Entity } from '../../lib/contract/entities';
import { DuplicateKeyError, InvalidOptionError, StorebridgeError, UnstorableValueError } from '../../lib/errors';
import { keysetPredicate, loadKysely, SQL_DIALECTS, SQL_KINDS, SqlDriverUnavailableError, type SqlKind } from './sql-dialects';
import { dropSqlSchema, migrateSqlSchema, tableNames, type SqlTableNames } from './sql-migrations';
import { connectKysely, parseSqlSpec, redactConnectionSpec, type ConnectionOptions } from './sql-connect';
import { abortable, columnText as text, detectSqlKind as detectKind, runWriteTransaction } from './sql-run';

export interface SqlAdapterOptions extends ConnectionOptions {
  /** A Kysely instance you created (its dialect decides the SQL). Not destroyed by `close()` unless `destroyOnClose`. */
  readonly db?: Kysely<any>;
  /** A Kysely dialect (`SqliteDialect`, `PostgresDialect`, `MysqlDialect`). Destroyed by `close()`. */
  readonly dialect?: Dialect;
  /** A connection spec: `sqlite:FILE`, `sqlite::memory:`, `postgres://…`, `mysql://…` (see `openSqlAdapter`). */
  readonly connection?: string;
  /** Which SQL to speak; detected from `db` / `dialect` when omitted. */
  readonly kind?: SqlKind;
  /** Prefix of every table name (default `storebridge_`): letters, digits, `_`; at most 40 characters. */
  readonly tablePrefix?: string;
  /** PostgreSQL schema for the tables (created if missing). Default: the connection's search path. */
  readonly schema?: string;
  /** Run the migrations on open (default `true`). Turn off when you migrate separately (`migrateSqlSchema`). */
  readonly migrate?: boolean;
  /** Destroy the Kysely instance on `close()` (default: only when the adapter created it). */
  readonly destroyOnClose?: boolean;
  /** How often a write transaction is retried after a deadlock or a concurrent create (default 8). */
  readonly maxWriteAttempts?: number;
}

interface SqlConfig {
  readonly kind: SqlKind;
  readonly names: SqlTableNames;
  readonly migrate: boolean;
  readonly destroyOnClose: boolean;
  readonly maxWriteAttempts: number;
}

const PREFIX_RULE = 'letters, digits and "_" only, not starting with a digit, at most 40 characters';
const NAME_RULE = 'letters, digits and "_" only, not starting with a digit, at most 63 characters';
/** A schema or table name the adapter's SQL can use unquoted-safe (schema, the state and registry tables). */
export const SQL_NAME = z.string({ error: NAME_RULE }).regex(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/, NAME_RULE);

/** `createSqlAdapter`'s options, declared once (`lib/options.ts`). */
const parseSqlAdapterOptions = defineOptions('createSqlAdapter', {
  db: opt.object<Kysely<any>>('a Kysely instance').optional(),
  dialect: opt.object<Dialect>('a Kysely dialect').optional(),
  connection: opt.text('a connection spec (sqlite:FILE, postgres://…, mysql://…)').optional(),
  kind: opt.oneOf(SQL_KINDS as readonly SqlKind[] as [SqlKind, ...SqlKind[]]).optional(),
  tablePrefix: z.string({ error: PREFIX_RULE }).regex(/^(?:[A-Za-z_][A-Za-z0-9_]{0,39})?$/, PREFIX_RULE).optional(),
  schema: SQL_NAME.optional(),
  migrate: opt.boolean().optional(),
  destroyOnClose: opt.boolean().optional(),
  maxWriteAttempts: opt.int({ min: 1, max: 1000 }).optional(),
  // The driver settings: checked where a connection spec's query can set them too (`sql-drivers.ts`).
  poolSize: z.unknown().optional(),
  busyTimeoutMs: z.unknown().optional(),
  statementTimeoutMs: z.unknown().optional(),
});

/** The options as checked, with their defaults; `schema` only where the database has schemas (a check across options). */
function parseConfig(options: ReturnType<typeof parseSqlAdapterOptions>, kind: SqlKind, created: boolean): SqlConfig {
  const prefix = options.tablePrefix ?? 'storebridge_';
  const schema = options.schema;
  if (schema !== undefined && !SQL_DIALECTS[kind].schemas) throw new InvalidOptionError('schema', 'is supported on PostgreSQL only (use tablePrefix)');
  const maxWriteAttempts = options.maxWriteAttempts ?? 8;
  return {
    kind,
    names: tableNames(prefix, schema),
    migrate: options.migrate ?? true,
    destroyOnClose: options.destroyOnClose ?? created,
    maxWriteAttempts,
  };
}

/** Rows per multi-row statement of `upsertMany` (5 parameters a row stays far under every driver's limit). */
const BATCH_ROWS = 100;

interface Row {
  _id: unknown;
  last_updated: unknown;
  doc: string;
}

/**
 * One entity's table. Lists are keyset seeks on `(last_updated, _id)` (or `LIMIT … OFFSET …`,
 * O(offset)) returning the stored JSON as `rawJson` items; `count` reads the maintained counts
 * row; `upsert` is a transaction that locks the row (`SELECT … FOR UPDATE`; on SQLite the
 * database write lock), applies `resolveWrite`, and retries on a concurrent create or a deadlock.
 */
export class SqlEntityStore<T extends { _id: string; last_updated?: number }> implements EntityStore<T> {
  private readonly table: string;
  /** The unique key column: `sku` or `orderid` (`UNIQUE_MEMBERS`). */
  private readonly keyName: string;
  constructor(
    private readonly db: Kysely<any>,
    private readonly config: SqlConfig,
    readonly entity: Entity,
  ) {
    this.table = entity === 'products' ? config.names.products : config.names.orders;
    this.keyName = UNIQUE_MEMBERS[entity];
  }

  private scoped<D extends Kysely<any> | Transaction<any>>(db: D): D {
    return (this.config.names.schema ? db.withSchema(this.config.names.schema) : db) as D;
  }

  /** The list query, as run by `list` (exposed for plan checks: `EXPLAIN` it). */
  listQuery({ sortorder, limit, offset = 0, after }: Omit<ListOptions, 'signal'>) {
    let q = this.scoped(this.db).selectFrom(this.table).select(['_id', 'last_updated', 'doc']);
    if (after) q = q.where(keysetPredicate(this.config.kind, sortorder, after));
    q = q.orderBy('last_updated', sortorder).orderBy('_id', sortorder).limit(limit);
    if (!after && offset > 0) q = q.offset(offset);
    return q;
  }

  async list(options: ListOptions): Promise<RawJsonItem[]> {
    const rows = (await abortable(options.signal, () => this.listQuery(options).execute())) as Row[];
    return rows.map((r) => rawJson(text(r._id), Number(r.last_updated), r.doc));
  }

  /** The keys alone: the documents are never read (the list index covers `(last_updated, _id)`). */
  async listKeys({ sortorder, limit, offset = 0, after, signal }: ListOptions): Promise<SortKey[]> {
    let q = this.scoped(this.db).selectFrom(this.table).select(['_id', 'last_updated']);
    if (after) q = q.where(keysetPredicate(this.config.kind, sortorder, after));
    q = q.orderBy('last_updated', sortorder).orderBy('_id', sortorder).limit(limit);
    if (!after && offset > 0) q = q.offset(offset);
    const rows = (await abortable(signal, () => q.execute())) as Row[];
    return rows.map((r) => ({ _id: text(r._id), last_updated: Number(r.last_updated) }));
  }

  async count(options: SignalOptions): Promise<number> {
    const row = await abortable(options.signal, () =>
      this.scoped(this.db).selectFrom(this.config.names.counts).select('n').where('entity', '=', this.entity).executeTakeFirst(),
    );
    return Number(row?.n ?? 0);
  }

  /**
   * Whether a value can never be in this table's key columns: PostgreSQL `text` cannot hold U+0000
   * (writes carrying one are refused), so a lookup of it finds nothing, without asking the server
   * (which would fail with "invalid byte sequence for encoding UTF8: 0x00").
   */
  private neverStored(value: string): boolean {
    return !SQL_DIALECTS[this.config.kind].textHoldsNul && value.includes('\u0000');
  }

  /** Refuses, before anything is written, items whose `_id` or `sku` this database cannot hold exactly. */
  private assertStorable(items: readonly T[], operation: string): void {
    for (const item of items) {
      for (const field of ['_id', this.keyName]) {
        const value = (item as Record<string, unknown>)[field];
        if (typeof value !== 'string' || !this.neverStored(value)) continue;
        const shown = JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
        throw new UnstorableValueError(`${this.entity}.${operation}`, field, `PostgreSQL text cannot hold U+0000 (NUL), found in ${shown}`);
      }
    }
  }

  async get(id: string, options: SignalOptions): Promise<T | undefined> {
    if (this.neverStored(id)) {
      options.signal?.throwIfAborted();
      return undefined;
    }
    const row = await abortable(options.signal, () =>
      this.scoped(this.db).selectFrom(this.table).select('doc').where('_id', '=', id).executeTakeFirst(),
    );
    return row ? (JSON.parse(row.doc) as T) : undefined;
  }

  /**
   * The items with these `_id`s: one `WHERE _id IN (…)` query per `BATCH_ROWS` ids (the store's
   * batched by-ID read asks for at most `MAX_BY_IDS`, one query). Rows are matched to the ids asked
   * by exact string, in the order asked.
   */
  async getMany(ids: readonly string[], options: SignalOptions): Promise<T[]> {
    const wanted = ids.filter((id) => !this.neverStored(id));
    options.signal?.throwIfAborted();
    const docs = new Map<string, string>();
    for (let i = 0; i < wanted.length; i += BATCH_ROWS) {
      const chunk = wanted.slice(i, i + BATCH_ROWS);
      const rows = (await abortable(options.signal, () => this.scoped(this.db).selectFrom(this.table).select(['_id', 'doc']).where('_id', 'in', chunk).execute())) as Row[];
      for (const row of rows) docs.set(text(row._id), row.doc);
    }
    const out: T[] = [];
    for (const id of wanted) {
      const doc = docs.get(id);
      if (doc !== undefined) out.push(JSON.parse(doc) as T);
    }
    return out;
  }

  /** The item this `sku` (products) or `orderid` (orders) names: the key column is unique. */
  async byUniqueKey(value: string, options: SignalOptions): Promise<T | undefined> {
    const key = this.indexable(uniqueKeyOf(this.entity, { [this.keyName]: value }));
    if (key === null || this.neverStored(key)) {
      options.signal?.throwIfAborted();
      return undefined;
    }
    const row = await abortable(options.signal, () => this.scoped(this.db).selectFrom(this.table).select('doc').where(this.keyName, '=', key).executeTakeFirst());
    return row ? (JSON.parse(row.doc) as T) : undefined;
  }

  /**
   * Writes are not raced against the signal: the signal is checked before the transaction and
   * again before anything is written (then the transaction rolls back), but a committed write is
   * never reported as failed.
   */
  async upsert(item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    this.assertStorable([item], 'upsert');
    return this.writeTransaction(options.signal, (trx) => this.writeOne(trx, item, options));
  }

  /** Many upserts in one transaction per batch (seeding, replication). Same rule as `upsert`. */
  async upsertMany(items: readonly T[], options: WriteOptions & { batchSize?: number }): Promise<UpsertResult<T>[]> {
    this.assertStorable(items, 'upsertMany');
    const out: UpsertResult<T>[] = [];
    const size = options.batchSize ?? 500;
    for (let i = 0; i < items.length; i += size) {
      const batch = items.slice(i, i + size);
      out.push(
        ...(await this.writeTransaction(options.signal, async (trx) => {
          if (new Set(batch.map((item) => item._id)).size < batch.length) {
            // The same _id twice: each write must see the one before it, so one at a time.
            const results: UpsertResult<T>[] = [];
            for (const item of batch) results.push(await this.writeOne(trx, item, options));
            return results;
          }
          return this.writeBatch(trx, batch, options);
        })),
      );
    }
    return out;
  }

  /**
   * A batch of distinct ids in one transaction with few statements: one read of the existing rows
   * (locked on PostgreSQL / MySQL), `resolveWrite` per item, updates one by one, new rows in
   * multi-row inserts, the count incremented once. Same outcome as `writeOne` per item.
   */
  private async writeBatch(trx: Transaction<any>, batch: readonly T[], options: WriteOptions): Promise<UpsertResult<T>[]> {
    const db = this.scoped(trx);
    const existing = new Map<string, string>();
    for (let i = 0; i < batch.length; i += BATCH_ROWS) {
      const ids = batch.slice(i, i + BATCH_ROWS).map((item) => item._id);
      let select = db.selectFrom(this.table).select(['_id', 'doc']).where('_id', 'in', ids);
      if (SQL_DIALECTS[this.config.kind].rowLocks) select = select.forUpdate();
      for (const row of (await select.execute()) as Row[]) existing.set(text(row._id), row.doc);
    }
    const holders = await this.keyHolders(db, batch);
    const results: UpsertResult<T>[] = [];
    const inserts: Record<string, unknown>[] = [];
    const updates: Array<{ id: string; values: Record<string, unknown> }> = [];
    for (const item of batch) {
      const before = existing.get(item._id);
      const previous = before === undefined ? undefined : (JSON.parse(before) as T);
      const result = resolveWrite(previous, item, options);
      results.push(result);
      if (!result.changed) continue;
      const values = this.rowValues(result.item, this.claimKey(holders, previous, result.item, options.lastUpdated));
      if (before === undefined) inserts.push({ _id: item._id, ...values });
      else updates.push({ id: item._id, values });
    }
    options.signal.throwIfAborted();
    // Updates first: a key an update gives up is then free for the inserts that claimed it above.
    for (const { id, values } of updates) await db.updateTable(this.table).set(values).where('_id', '=', id).execute();
    // A concurrent creator of one of these _ids makes an insert fail on the primary key: retried.
    for (let i = 0; i < inserts.length; i += BATCH_ROWS) await db.insertInto(this.table).values(inserts.slice(i, i + BATCH_ROWS)).execute();
    if (inserts.length > 0) {
      const { sql } = loadKysely();
      await db.updateTable(this.config.names.counts).set({ n: sql`n + ${inserts.length}` }).where('entity', '=', this.entity).execute();
    }
    return results;
  }

  /** Who holds each key the batch's items carry (key → `_id`), as stored now. */
  private async keyHolders(db: Transaction<any>, batch: readonly T[]): Promise<Map<string, string>> {
    const keys = [...new Set(batch.map((item) => this.indexable(uniqueKeyOf(this.entity, item))).filter((k): k is string => k !== null))];
    const holders = new Map<string, string>();
    for (let i = 0; i < keys.length; i += BATCH_ROWS) {
      const rows = await db.selectFrom(this.table).select(['_id', this.keyName]).where(this.keyName, 'in', keys.slice(i, i + BATCH_ROWS)).execute();
      for (const row of rows as Record<string, unknown>[]) holders.set(text(row[this.keyName]), text(row._id));
    }
    return holders;
  }

  /**
   * `keyColumn` for one item of a batch, against `holders` as the items before it in the batch
   * left it (each sees the one before, as sequential upserts would): gives up the item's old key,
   * takes its new one unless another item holds it.
   */
  private claimKey(holders: Map<string, string>, previous: T | undefined, item: T, mode: WriteOptions['lastUpdated']): string | null {
    const old = previous && this.indexable(uniqueKeyOf(this.entity, previous));
    if (old && holders.get(old) === item._id) holders.delete(old);
    const key = this.indexable(uniqueKeyOf(this.entity, item));
    if (key === null) return null;
    const holder = holders.get(key);
    if (holder !== undefined && holder !== item._id) {
      if (mode === 'touch') throw new DuplicateKeyError(this.entity, this.keyName, key, holder);
      return null;
    }
    holders.set(key, item._id);
    return key;
  }

  /** A key the column can hold, or NULL: none, or longer than MySQL's key column (the document keeps it). */
  private indexable(key: string | undefined): string | null {
    if (key === undefined) return null;
    const max = SQL_DIALECTS[this.config.kind].maxKeyBytes;
    if (max !== undefined && Buffer.byteLength(key) > max) return null;
    return key;
  }

  private writeTransaction<R>(signal: AbortSignal, fn: (trx: Transaction<any>) => Promise<R>): Promise<R> {
    return writeTransaction(this.db, this.config, this.entity, signal, fn);
  }

  /**
   * The value the key column gets for `item` (its `uniqueKeyOf`), or NULL: none, too long for the
   * column, or (a `keep` write) held by another item. A `touch` write whose key another item holds
   * is refused with `DuplicateKeyError`. A concurrent writer of the same key fails on the unique
   * index instead; the transaction is retried and then finds it here.
   */
  private async keyColumn(db: Transaction<any>, item: T, mode: WriteOptions['lastUpdated']): Promise<string | null> {
    const key = this.indexable(uniqueKeyOf(this.entity, item));
    if (key === null) return null;
    const holder = await db.selectFrom(this.table).select('_id').where(this.keyName, '=', key).where('_id', '<>', item._id).limit(1).executeTakeFirst();
    if (!holder) return key;
    if (mode === 'touch') throw new DuplicateKeyError(this.entity, this.keyName, key, text(holder._id));
    return null;
  }

  /** The row values of a written item. */
  private rowValues(item: T, key: string | null): Record<string, unknown> {
    return { last_updated: item.last_updated, doc: JSON.stringify(item), [this.keyName]: key };
  }

  private async writeOne(trx: Transaction<any>, item: T, options: WriteOptions): Promise<UpsertResult<T>> {
    const db = this.scoped(trx);
    let select = db.selectFrom(this.table).select('doc').where('_id', '=', item._id);
    if (SQL_DIALECTS[this.config.kind].rowLocks) select = select.forUpdate();
    const row = await select.executeTakeFirst();
    const result = resolveWrite(row ? (JSON.parse(row.doc) as T) : undefined, item, options);
    if (!result.changed) return result;
    const values = this.rowValues(result.item, await this.keyColumn(db, result.item, options.lastUpdated));
    options.signal.throwIfAborted();
    if (row) {
      await db.updateTable(this.table).set(values).where('_id', '=', item._id).execute();
    } else {
      // A concurrent creator of the same _id makes this insert fail on the primary key: retried.
      await db.insertInto(this.table).values({ _id: item._id, ...values }).execute();
      const { sql } = loadKysely();
      await db.updateTable(this.config.names.counts).set({ n: sql`n + 1` }).where('entity', '=', this.entity).execute();
    }
    return result;
  }

  /** Recomputes the maintained count with `count(*)` (only needed after writing to the tables behind the adapter's back). */
  async recount(options: SignalOptions): Promise<number> {
    return this.writeTransaction(options.signal, async (trx) => {
      const db = this.scoped(trx);
      const { sql } = loadKysely();
      const row = await db.selectFrom(this.table).select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
      const n = Number(row.n);
      await db.updateTable(this.config.names.counts).set({ n }).where('entity', '=', this.entity).execute();
      return n;
    });
  }
}

/**
 * Runs `fn` in a write transaction, retried after a concurrent create (a unique-key violation) or a
 * deadlock, at most `maxWriteAttempts` times. PostgreSQL / MySQL: READ COMMITTED (a locking read
 * sees the latest committed row, and MySQL takes no gap locks). SQLite: the database write lock is
 * taken first (a deferred BEGIN would read under a shared lock and could then fail to upgrade);
 * other processes wait on busy_timeout.
 */
function writeTransaction<R>(db: Kysely<any>, config: SqlConfig, lockEntity: Entity, signal: AbortSignal, fn: (trx: Transaction<any>) => Promise<R>): Promise<R> {
  const { kind, maxWriteAttempts, names } = config;
  const { sql } = loadKysely();
  return runWriteTransaction(db, {
    kind,
    signal,
    maxAttempts: maxWriteAttempts,
    // SQLite's write lock first: the counts row of this entity is touched without a change.
    lockSqlite: (trx) => (names.schema ? trx.withSchema(names.schema) : trx).updateTable(names.counts).set({ n: sql`n` }).where('entity', '=', lockEntity).execute(),
  }, fn);
}

interface IdempotencyRow {
  fingerprint: string;
  expires_at: unknown;
  outcome: string | null;
}

/**
 * Idempotency-Key records in `<prefix>idempotency` (key PK): a claim is one transaction (a locking
 * read, then an insert or the take-over of an expired record); two concurrent claims of one key
 * meet on the primary key, and the loser, retried, finds the winner's record. Expired records are
 * deleted at most every ten minutes, by the next claim.
 */
class SqlIdempotencyStore implements IdempotencyStore {
  private sweptAt = 0;
  constructor(
    private readonly db: Kysely<any>,
    private readonly config: SqlConfig,
  ) {}

  private table(db: Kysely<any> | Transaction<any>) {
    const scoped = this.config.names.schema ? db.withSchema(this.config.names.schema) : db;
    return { db: scoped, name: this.config.names.idempotency };
  }

  async claim(key: string, record: IdempotencyRecord, { now, signal }: SignalOptions & { now: number }): Promise<IdempotencyRecord | undefined> {
    await this.sweep(now);
    return writeTransaction(this.db, this.config, 'orders', signal, async (trx) => {
      const t = this.table(trx);
      let select = t.db.selectFrom(t.name).select(['fingerprint', 'expires_at', 'outcome']).where('key', '=', key);
      if (SQL_DIALECTS[this.config.kind].rowLocks) select = select.forUpdate();
      const row = (await select.executeTakeFirst()) as IdempotencyRow | undefined;
      if (row && Number(row.expires_at) > now) return recordOf(row);
      const values = { fingerprint: record.fingerprint, expires_at: record.expiresAt, outcome: outcomeText(record) };
      if (row) await t.db.updateTable(t.name).set(values).where('key', '=', key).execute();
      else await t.db.insertInto(t.name).values({ key, ...values }).execute();
      return undefined;
    });
  }

  async settle(key: string, record: IdempotencyRecord, { signal }: SignalOptions): Promise<void> {
    const t = this.table(this.db);
    const values = { fingerprint: record.fingerprint, expires_at: record.expiresAt, outcome: outcomeText(record) };
    await abortable(signal, () => t.db.updateTable(t.name).set(values).where('key', '=', key).execute());
  }

  async release(key: string, fingerprint: string, { signal }: SignalOptions): Promise<void> {
    const t = this.table(this.db);
    await abortable(signal, () => t.db.deleteFrom(t.name).where('key', '=', key).where('fingerprint', '=', fingerprint).where('outcome', 'is', null).execute());
  }

  private async sweep(now: number): Promise<void> {
    if (now - this.sweptAt < 600_000) return;
    this.sweptAt = now;
    const t = this.table(this.db);
    await t.db.deleteFrom(t.name).where('expires_at', '<=', now).execute();
  }
}

function recordOf(row: IdempotencyRow): IdempotencyRecord {
  return { fingerprint: row.fingerprint, expiresAt: Number(row.expires_at), ...(row.outcome === null ? {} : { outcome: JSON.parse(row.outcome) }) };
}

function outcomeText(record: IdempotencyRecord): string | null {
  return record.outcome === undefined ? null : JSON.stringify(record.outcome);
}

/**
 * The SQL adapter. Create it with `createSqlAdapter` (or `openSqlAdapter` for a spec string).
 *
 * @example
 * ```ts
 * import { createSqlAdapter } from 'storebridge/adapters/sql';
 * const adapter = await createSqlAdapter({ connection: 'sqlite:./store.db' });
 * app.use('/sync', createStoreRouter({ adapter, svcKeys: [process.env.SVC_KEY!] }));
 * ```
 */
export class SqlAdapter implements StoreAdapter {
  readonly products: SqlEntityStore<Product>;
  readonly orders: SqlEntityStore<Order>;
  constructor(
    /** The Kysely instance (for your own queries and transactions). */
    readonly db: Kysely<any>,
    private readonly config: SqlConfig,
  ) {
    this.products = new SqlEntityStore<Product>(db, config, 'products');
    this.orders = new SqlEntityStore<Order>(db, config, 'orders');
    this.idempotency = new SqlIdempotencyStore(db, config);
  }

  get kind(): SqlKind {
    return this.config.kind;
  }

  get tables(): SqlTableNames {
    return this.config.names;
  }

  /** Idempotency-Key records, in `<prefix>idempotency`. */
  readonly idempotency: IdempotencyStore;

  productBySku(sku: string, options: SignalOptions): Promise<Product | undefined> {
    return this.products.byUniqueKey(sku, options);
  }

  orderByOrderId(orderid: string, options: SignalOptions): Promise<Order | undefined> {
    return this.orders.byUniqueKey(orderid, options);
  }

  /** Brings the schema up to date (what `createSqlAdapter` does unless `migrate: false`). */
  async migrate(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await migrateSqlSchema(this.db, this.config.kind, this.config.names);
        return;
      } catch (err) {
        // On SQLite each migration holds the database write lock (BEGIN IMMEDIATE): a process that
        // waited longer than busy_timeout for another one's gets SQLITE_BUSY, and tries again. On
        // PostgreSQL the migrator's catalog read fails when another program drops a table meanwhile.
        const again = SQL_DIALECTS[this.config.kind].retryMigration(err, ownTables(this.config.names));
        if (!again || attempt >= 5) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }

  /** Drops this adapter's tables. For tests and uninstalling; the data is gone. */
  async dropTables(): Promise<void> {
    await dropSqlSchema(this.db, this.config.names);
  }

  async close(): Promise<void> {
    if (this.config.destroyOnClose) await this.db.destroy();
  }
}

/**
 * Opens the SQL adapter on a Kysely instance, a Kysely dialect or a connection spec, and runs the
 * migrations (unless `migrate: false`).
 *
 * @example
 * ```ts
 * import { createSqlAdapter } from 'storebridge/adapters/sql';
 * import { Kysely, PostgresDialect } from 'kysely';
 * import { Pool } from 'pg';
 * const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new Pool({ connectionString: process.env.DATABASE_URL }) }) });
 * const adapter = await createSqlAdapter({ db, tablePrefix: 'shop_' });
 * ```
 */
export async function createSqlAdapter(given: SqlAdapterOptions): Promise<SqlAdapter> {
  let options = parseSqlAdapterOptions(given);
  if ([options.db, options.dialect, options.connection].filter((x) => x !== undefined).length !== 1) throw new InvalidOptionError('db', 'pass exactly one of db, dialect or connection');
  let db: Kysely<any>;
  let kind: SqlKind;
  const created = options.db === undefined;
  if (options.connection !== undefined) {
    // `?tablePrefix=` / `?schema=` in a URL spec apply unless the options say otherwise.
    const spec = parseSqlSpec(options.connection);
    options = parseSqlAdapterOptions({ ...given, tablePrefix: given.tablePrefix ?? spec.tablePrefix, schema: given.schema ?? spec.schema });
  }
  if (options.db) {
    db = options.db;
    kind = options.kind ?? detectKind(db);
  } else if (options.dialect) {
    const { Kysely } = loadKysely();
    db = new Kysely<any>({ dialect: options.dialect });
    kind = options.kind ?? detectKind(db);
  } else {
    ({ db, kind } = connectKysely(options.connection!, options as ConnectionOptions));
  }
  let config: SqlConfig;
  try {
    config = parseConfig(options, kind, created);
  } catch (err) {
    if (created) await db.destroy();
    throw err;
  }
  const adapter = new SqlAdapter(db, config);
  if (config.migrate) {
    try {
      await adapter.migrate();
    } catch (err) {
      if (created) await db.destroy().catch(() => undefined);
      throw err;
    }
  }
  return adapter;
}

/** Every name of this adapter's tables (and its schema): a migration failing on one of them is not another program's doing. */
function ownTables(names: SqlTableNames): string[] {
  return Object.values(names).filter((name): name is string => typeof name === 'string');
}

/** The error `openSqlAdapter` throws when the database cannot be opened. Its message never holds a password. */
export class SqlConnectError extends StorebridgeError {
  override readonly name = 'SqlConnectError';
  readonly code = 'SQL_CONNECT';
  constructor(spec: string, cause: unknown) {
    super(`cannot open ${redactConnectionSpec(spec)}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * Opens the SQL adapter for a CLI spec: `sqlite:FILE`, `sqlite::memory:`, `postgres:URL`,
 * `postgres://…`, `postgresql://…`, `mysql:URL`, `mysql://…`, `mariadb:URL`, `mariadb://…`.
 *
 * @example
 * ```ts
 * const adapter = await openSqlAdapter('postgres://postgres@127.0.0.1:5432/test');
 * ```
 */
export async function openSqlAdapter(spec: string, options: Omit<SqlAdapterOptions, 'db' | 'dialect' | 'connection'> = {}): Promise<SqlAdapter> {
  parseSqlSpec(spec);
  try {
    return await createSqlAdapter({ ...options, connection: spec });
  } catch (err) {
    // A missing or broken driver is not this database's fault: its own one-line message says what to run.
    if (err instanceof InvalidOptionError || err instanceof SqlDriverUnavailableError) throw err;
    throw new SqlConnectError(spec, err);
  }
}
