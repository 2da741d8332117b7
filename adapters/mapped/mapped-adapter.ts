/**
 * The mapped adapter: a shop's existing tables served as products and orders, as a mapping file
 * declares them (docs/mapping.md). It runs on the SQL adapter's connection and dialect layers
 * (`adapters/sql`): the same specs, drivers, byte-ordered keyset predicate and write transactions.
 *
 * @example Mount it in an Express app:
 * ```ts
 * import express from 'express';
 * import { createStoreRouter } from 'storebridge/server';
 * import { createMappedAdapter } from 'storebridge/adapters/mapped';
 *
 * const adapter = await createMappedAdapter({ connection: process.env.DATABASE_URL!, map: './storebridge-map.json' });
 * for (const line of adapter.warnings) console.warn(line); // e.g. the CREATE INDEX paging needs
 * const app = express();
 * app.use('/sync', createStoreRouter({ adapter, svcKeys: [process.env.STOREBRIDGE_KEY!] }));
 * ```
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Kysely } from 'kysely';
import { BaseStoreAdapter, type EntityStore, type IdempotencyStore, type SignalOptions, type StoreAdapter } from '../../lib/adapter';
import { entityOf, ENTITIES } from '../../lib/contract/entities';
import type { Order, Product } from '../../lib/contract/webhook';
import type { Entity, ItemOf } from '../../lib/contract/entities';
import { InvalidOptionError } from '../../lib/errors';
import { defineOptions, opt } from '../../lib/options';
import { SqlConnectError } from '../sql/sql-adapter';
import { connectKysely, parseSqlSpec, type ConnectionOptions } from '../sql/sql-connect';
import { SqlDriverUnavailableError, SQL_DIALECTS, SQL_KINDS, type SqlKind } from '../sql/sql-dialects';
import { detectSqlKind } from '../sql/sql-run';
import { countsInstalled } from './mapped-counts';
import { idKey, timeKey } from './mapped-keys';
import { isoLayout, pagingWarnings, requireTable } from './mapped-inspect';
import { MappedEntityStore, type EntityRuntime, type StoreContext, type TableRuntime } from './mapped-store';
import { openKeyRule } from './mapped-unique';
import { parseMapping, readMappingFile, type ChildTable, type EntityMapping, type FieldMap, type Mapping } from './mapping';
import { InvalidMappingError, MappedWriteRefusedError, MappingMismatchError } from './mapping-errors';

export interface MappedAdapterOptions extends ConnectionOptions {
  /** The mapping: a file path, or the file's content (a parsed JSON object). */
  readonly map: string | Record<string, unknown>;
  /** A connection spec: `sqlite:FILE`, `postgres://…`, `mysql://…` (as `--adapter` takes them). */
  readonly connection?: string;
  /** A Kysely instance you created instead (not destroyed by `close()` unless `destroyOnClose`). */
  readonly db?: Kysely<any>;
  /** Which SQL to speak; detected from `db` when omitted. */
  readonly kind?: SqlKind;
  /** Destroy the Kysely instance on `close()` (default: only when the adapter created it). */
  readonly destroyOnClose?: boolean;
  /** How often a write transaction is retried after a deadlock or a concurrent create (default 8). */
  readonly maxWriteAttempts?: number;
  /** How long one `count(*)` answers `itemsTotal`, in ms (default 1000; 0: count on every request). */
  readonly countCacheMs?: number;
  /**
   * Where to keep the records of writes made under an `Idempotency-Key` header. Default: none (the
   * adapter creates no table in the shop's database), so a router keeps them in its own memory.
   */
  readonly idempotency?: IdempotencyStore;
}

const parseOptions = defineOptions('createMappedAdapter', {
  map: opt.object<Record<string, unknown>>('a mapping file path or its parsed content').or(opt.text('a mapping file path or its parsed content')),
  connection: opt.text('a connection spec (sqlite:FILE, postgres://…, mysql://…)').optional(),
  db: opt.object<Kysely<any>>('a Kysely instance').optional(),
  kind: opt.oneOf(SQL_KINDS as unknown as readonly [SqlKind, ...SqlKind[]]).optional(),
  destroyOnClose: opt.boolean().optional(),
  maxWriteAttempts: opt.int({ min: 1, max: 100 }).default(8),
  countCacheMs: opt.int({ min: 0, max: 3_600_000, unit: 'ms' }).default(1000),
  idempotency: opt.object<IdempotencyStore>('an IdempotencyStore (claim, settle, release)', (v) => ['claim', 'settle', 'release'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function')).optional(),
  poolSize: opt.int({ min: 1, max: 1000 }).optional(),
  busyTimeoutMs: opt.int({ min: 1, max: 3_600_000, unit: 'ms' }).optional(),
  statementTimeoutMs: opt.int({ min: 1, max: 3_600_000, unit: 'ms' }).optional(),
});

/** A store for an entity the mapping does not map: empty, and it refuses writes. */
class UnmappedEntityStore<T extends { _id: string }> implements EntityStore<T> {
  constructor(private readonly entity: Entity) {}
  async list({ signal }: SignalOptions): Promise<T[]> {
    signal.throwIfAborted();
    return [];
  }
  async count({ signal }: SignalOptions): Promise<number> {
    signal.throwIfAborted();
    return 0;
  }
  async get(_id: string, { signal }: SignalOptions): Promise<T | undefined> {
    signal.throwIfAborted();
    return undefined;
  }
  async upsert(): Promise<never> {
    throw new MappedWriteRefusedError(`${this.entity}.upsert: ${unmapped(this.entity)}`);
  }
}

const unmapped = (entity: Entity) => `this store serves no ${entity}: the mapping file does not map them`;

/**
 * The adapter over the mapped tables. `warnings` holds what the start-up check found worth
 * fixing (a missing paging index, with the statement that creates it; rows without a time).
 */
export class MappedAdapter extends BaseStoreAdapter implements StoreAdapter {
  readonly products: EntityStore<Product>;
  readonly orders: EntityStore<Order>;

  constructor(
    /** The Kysely instance (for your own queries). */
    readonly db: Kysely<any>,
    readonly kind: SqlKind,
    private readonly stores: { readonly [E in Entity]?: MappedEntityStore<ItemOf<E>> },
    readonly warnings: readonly string[],
    private readonly destroyOnClose: boolean,
    /** Idempotency-Key records: only those passed in (`MappedAdapterOptions.idempotency`). */
    readonly idempotency?: IdempotencyStore,
  ) {
    super();
    this.products = stores.products ?? new UnmappedEntityStore<Product>('products');
    this.orders = stores.orders ?? new UnmappedEntityStore<Order>('orders');
  }

  override async productBySku(sku: string, options: SignalOptions): Promise<Product | undefined> {
    const found = this.stores.products ? await this.stores.products.byKey(sku, options) : undefined;
    return found === null ? super.productBySku(sku, options) : found;
  }

  override async orderByOrderId(orderid: string, options: SignalOptions): Promise<Order | undefined> {
    const found = this.stores.orders ? await this.stores.orders.byKey(orderid, options) : undefined;
    return found === null ? super.orderByOrderId(orderid, options) : found;
  }

  override checkProduct(product: Product, { signal }: SignalOptions): Promise<string[]> {
    return this.stores.products ? this.stores.products.writeProblems(product, signal) : Promise.resolve([unmapped('products')]);
  }

  override checkOrder(order: Order, { signal }: SignalOptions): Promise<string[]> {
    return this.stores.orders ? this.stores.orders.writeProblems(order, signal) : Promise.resolve([unmapped('orders')]);
  }

  async newId<E extends Entity>(entity: E, item: Omit<ItemOf<E>, '_id'>, { signal }: SignalOptions): Promise<string> {
    const own = await this.stores[entity]?.newId(item, signal);
    return own ?? `${entityOf(entity).noun}-${randomUUID()}`;
  }

  override async close(): Promise<void> {
    if (this.destroyOnClose) await this.db.destroy();
  }
}

/** A table's columns by role, and its child tables (for the missing-column message and the select list). */
function tableUses(fields: FieldMap, where: string, uses: Map<string, string>, children: Array<{ child: ChildTable; where: string }>): void {
  for (const [name, source] of Object.entries(fields)) {
    const at = `${where}.${name}`;
    if (source.kind === 'column' && !uses.has(source.column)) uses.set(source.column, at);
    else if (source.kind === 'object') tableUses(source.members, at, uses, children);
    else if (source.kind === 'row') tableUses(source.element, `${at}.fromRow`, uses, children);
    else if (source.kind === 'table') children.push({ child: source, where: at });
  }
}

/** Checks a table and its child tables against the database; the select lists come with it. */
async function tableRuntime(db: Kysely<any>, kind: SqlKind, table: string, fields: FieldMap, where: string, own: ReadonlyMap<string, string>): Promise<TableRuntime> {
  const uses = new Map(own);
  const found: Array<{ child: ChildTable; where: string }> = [];
  tableUses(fields, where, uses, found);
  for (const { child, where: at } of found) if (!uses.has(child.parentKey)) uses.set(child.parentKey, `${at}.parentKey`);
  const columns = await requireTable(db, kind, table, uses);
  const children = [];
  for (const { child, where: at } of found) {
    const keys = new Map([
      [child.key, `${at}.key`],
      [child.orderBy, `${at}.orderBy`],
    ]);
    children.push({ child, runtime: await tableRuntime(db, kind, child.table, child.fields, `${at}.fields`, keys) });
  }
  return { table, columns, select: [...uses.keys()], children };
}

async function entityRuntime(db: Kysely<any>, kind: SqlKind, mapping: EntityMapping): Promise<{ runtime: EntityRuntime; warnings: string[] }> {
  const e = mapping.entity;
  const own = new Map([
    [mapping.id.column, `${e}.id`],
    [mapping.lastUpdated.column, `${e}.lastUpdated`],
    ...(mapping.id.sortColumn ? [[mapping.id.sortColumn, `${e}.id.sortColumn`] as const] : []),
  ]);
  const table = await tableRuntime(db, kind, mapping.table, mapping.fields, `${e}.fields`, own);
  const { type, column } = mapping.lastUpdated;
  // Where there is no date-time type (SQLite), a timestamp column holds ISO text too.
  const iso = type === 'iso-text' || (!SQL_DIALECTS[kind].timestampColumn && type === 'timestamp') ? await isoLayout(db, mapping.table, column) : undefined;
  const time = timeKey(kind, mapping.table, table.columns.get(column)!, type, iso);
  const id = idKey(kind, table.columns.get(mapping.id.column)!, mapping.id.sortColumn);
  const warnings = await pagingWarnings(db, kind, mapping.table, time, id);
  const key = await openKeyRule(db, kind, mapping, table.columns, id);
  // A kept count includes rows without a time, which are not served: used only when there can be none.
  const counted = !table.columns.get(column)!.nullable && (await countsInstalled(db, kind, mapping.table));
  return { runtime: { ...table, mapping, time, id, counted, key: key.rule }, warnings: [...warnings, ...key.warnings] };
}

/**
 * A connection to a database that must already exist: the SQL adapter's connection layer creates a
 * missing SQLite file (its own store starts empty), but a mapping names tables that are already
 * there, so a mistyped path is refused instead of leaving an empty database behind.
 */
export function connectExisting(spec: string, options: ConnectionOptions = {}): { db: Kysely<any>; kind: SqlKind } {
  const { kind, target } = parseSqlSpec(spec);
  if (SQL_DIALECTS[kind].target === 'file' && target !== ':memory:' && !existsSync(resolve(target))) {
    throw new InvalidOptionError('connection', `there is no SQLite database at ${resolve(target)}`);
  }
  return connectKysely(spec, options);
}

function mappingOf(map: string | Record<string, unknown>): Mapping {
  return typeof map === 'string' ? readMappingFile(map) : parseMapping(map);
}

/**
 * Opens the mapped adapter: reads the mapping, connects, and checks the mapping against the
 * database. Throws `InvalidMappingError` (the file), `MappingMismatchError` (a missing table or
 * column, a time column of another type), or a connection error; never serves a partial mapping.
 *
 * @example
 * ```ts
 * const adapter = await createMappedAdapter({ connection: 'sqlite:./shop.db', map: { version: 1, products: { … } } });
 * ```
 */
export async function createMappedAdapter(options: MappedAdapterOptions): Promise<MappedAdapter> {
  const config = parseOptions(options);
  if ((config.connection === undefined) === (config.db === undefined)) throw new InvalidOptionError('connection', 'pass exactly one of connection or db');
  const mapping = mappingOf(config.map);
  const created = config.db === undefined;
  const { db, kind } = created ? connectExisting(config.connection!, config) : { db: config.db!, kind: config.kind ?? detectSqlKind(config.db!) };
  try {
    const ctx: StoreContext = { db, kind, maxWriteAttempts: config.maxWriteAttempts, countCacheMs: config.countCacheMs };
    const stores: { -readonly [E in Entity]?: MappedEntityStore<any> } = {};
    const warnings: string[] = [];
    for (const entity of ENTITIES) {
      const m = mapping[entity];
      if (!m) continue;
      const opened = await entityRuntime(db, kind, m);
      stores[entity] = new MappedEntityStore(ctx, opened.runtime);
      warnings.push(...opened.warnings);
    }
    return new MappedAdapter(db, kind, stores, warnings, config.destroyOnClose ?? created, config.idempotency);
  } catch (err) {
    if (created) await db.destroy().catch(() => undefined);
    throw err;
  }
}

/**
 * `createMappedAdapter` for the CLI: a connection failure becomes `SqlConnectError` (the password
 * never shown); mapping errors and a missing driver keep their own one-line messages.
 */
export async function openMappedAdapter(connection: string, map: string | Record<string, unknown>): Promise<MappedAdapter> {
  try {
    return await createMappedAdapter({ connection, map });
  } catch (err) {
    if (err instanceof InvalidOptionError || err instanceof SqlDriverUnavailableError || err instanceof InvalidMappingError || err instanceof MappingMismatchError) throw err;
    throw new SqlConnectError(connection, err);
  }
}
