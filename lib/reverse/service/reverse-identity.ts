/**
 * One reverse connection's identity map, kept in the service's state store: which id the daemon's
 * store (the ERP) keeps each item under, and which integer stands for each buyer id that is not one.
 * It is read both ways (docs/reverse-connection.md "Identity"):
 *
 * - handing an item out: under the id the store gave it (the `click2sync` dialect's `_id`), its order
 *   lines naming products as the store knows them, its buyer id as an integer;
 * - receiving a push: an item under a mapped store id lands on the service's item it maps to, a
 *   mapped buyer integer becomes the buyer id again.
 *
 * Every link is its own record, addressed by the connection and the id (the SHA-256 of the id, so
 * a key stays short whatever the id), never one blob rewritten: it is never trimmed, and services
 * sharing a state store read and write the same records. The value holds the full ids, checked on
 * read, so a hash collision can only miss, never mislead.
 *
 * Keys (`N:` is the connection's prefix): `N:id:<entity>:s:<hash of the service's id>` and
 * `N:id:<entity>:d:<hash of the store's id>` → `{"service", "store"}`; `N:buyer:t:<hash of the text>`
 * and `N:buyer:n:<integer>` → `{"text", "n"}`.
 */
import { createHash } from 'node:crypto';
import type { GuardedAdapter } from '../../adapter-guard';
import { buyerIdAsInteger, isMappedBuyerId, mappedBuyerId, type Dialect, type HandOut } from '../../contract/dialects';
import type { Order, Product } from '../../contract/webhook';
import type { Entity, ItemOf } from '../../contract/entities';
import type { ReverseStateStore, StateChange } from './reverse-state-store';

interface Link {
  readonly service: string;
  readonly store: string;
}
interface BuyerLink {
  readonly text: string;
  readonly n: number;
}

/** Attempts at a free integer for a buyer id before giving up (each collides with probability ~n/2^52). */
const MAX_BUYER_ATTEMPTS = 8;

const hash = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 32);

function parse<T>(text: string | undefined): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

export class ConnectionIdentity {
  constructor(
    private readonly store: ReverseStateStore,
    /** The connection's key prefix (`N:`). */
    private readonly prefix: string,
  ) {}

  private linkKey(entity: Entity, side: 's' | 'd', id: string): string {
    return `${this.prefix}id:${entity}:${side}:${hash(id)}`;
  }

  private async links(entity: Entity, side: 's' | 'd', ids: readonly string[]): Promise<Map<string, Link>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const rows = await this.store.read(unique.map((id) => this.linkKey(entity, side, id)));
    const out = new Map<string, Link>();
    for (const id of unique) {
      const link = parse<Link>(rows.get(this.linkKey(entity, side, id)));
      if (link && (side === 's' ? link.service : link.store) === id) out.set(id, link);
    }
    return out;
  }

  /** The store's ids of these service items (only those the map knows). */
  async storeIdsOf(entity: Entity, serviceIds: readonly string[]): Promise<Map<string, string>> {
    const links = await this.links(entity, 's', serviceIds);
    return new Map([...links].map(([id, link]) => [id, link.store]));
  }

  /** The service's items these store ids stand for (only those the map knows). */
  async serviceIdsOf(entity: Entity, storeIds: readonly string[]): Promise<Map<string, string>> {
    const links = await this.links(entity, 'd', storeIds);
    return new Map([...links].map(([id, link]) => [id, link.service]));
  }

  /**
   * The changes that link a service item to the id the store keeps it under. A store id linked to
   * another service item before is moved (that item's own link to it goes); the service item's
   * earlier store id keeps pointing to it (the store may still send it).
   */
  async link(entity: Entity, service: string, store: string): Promise<StateChange[]> {
    const before = (await this.links(entity, 'd', [store])).get(store);
    const value = JSON.stringify({ service, store } satisfies Link);
    const changes: StateChange[] = [
      { key: this.linkKey(entity, 's', service), value },
      { key: this.linkKey(entity, 'd', store), value },
    ];
    if (before && before.service !== service) {
      const other = (await this.links(entity, 's', [before.service])).get(before.service);
      if (other?.store === store) changes.unshift({ key: this.linkKey(entity, 's', before.service), value: null });
    }
    return changes;
  }

  private buyerKeys(text: string, n: number): [string, string] {
    return [`${this.prefix}buyer:t:${hash(text)}`, `${this.prefix}buyer:n:${n}`];
  }

  /**
   * The integer a buyer id that is not one goes out as (`""`: an order with no buyer id), with the
   * changes that record it when it is new: its stable integer, or the next attempt's when another
   * id holds that one already.
   */
  async buyerInteger(text: string): Promise<{ readonly n: number; readonly changes: StateChange[] }> {
    const [textKey] = this.buyerKeys(text, 0);
    const known = parse<BuyerLink>((await this.store.read([textKey])).get(textKey));
    if (known?.text === text) return { n: known.n, changes: [] };
    for (let attempt = 0; attempt < MAX_BUYER_ATTEMPTS; attempt++) {
      const n = mappedBuyerId(text, attempt);
      const [, numberKey] = this.buyerKeys(text, n);
      const holder = parse<BuyerLink>((await this.store.read([numberKey])).get(numberKey));
      if (holder && holder.text !== text) continue;
      const value = JSON.stringify({ text, n } satisfies BuyerLink);
      return { n, changes: [{ key: textKey, value }, { key: numberKey, value }] };
    }
    throw new Error(`no free integer for a buyer id after ${MAX_BUYER_ATTEMPTS} attempts`);
  }

  /** The buyer ids these mapped integers stand for (only those the map knows). */
  async buyerTexts(numbers: readonly number[]): Promise<Map<number, string>> {
    const unique = [...new Set(numbers)];
    if (unique.length === 0) return new Map();
    const rows = await this.store.read(unique.map((n) => this.buyerKeys('', n)[1]));
    const out = new Map<number, string>();
    for (const n of unique) {
      const link = parse<BuyerLink>(rows.get(this.buyerKeys('', n)[1]));
      if (link?.n === n) out.set(n, link.text);
    }
    return out;
  }
}

/** What the identity rules read beside the map: the service's store, the connection's dialect. */
export interface IdentityContext {
  readonly identity: ConnectionIdentity;
  /**
   * The connection's items (its store, opened on the first call that needs it: most calls, `ping`
   * above all, never do, so an idle connection holds no store open).
   */
  store(): Promise<GuardedAdapter>;
  readonly dialect: Dialect;
  /** The connection's name (`otherids[].connectionid`). */
  readonly connection: string;
  readonly signal: AbortSignal;
  /** Adds changes to the call's batch (written with the connection's state, before the answer). */
  persist(changes: readonly StateChange[]): void;
}

/**
 * What an item goes out with beside its stored form, as far as the dialect uses it: the id the
 * daemon's store keeps it under, its order lines' products as that store knows them (the id it gave
 * the product, else the product's SKU), and its buyer id's integer when it is not one (recorded in
 * the map the first time).
 */
export async function handOutOf<E extends Entity>(ctx: IdentityContext, entity: E, item: ItemOf<E>): Promise<HandOut> {
  const form = ctx.dialect.pulled;
  const storeId = form.storeIds ? (await ctx.identity.storeIdsOf(entity, [item._id])).get(item._id) : undefined;
  const out: { storeId?: string; buyerId?: number; lineProducts?: Array<string | undefined>; connection: string } = { connection: ctx.connection, ...(storeId !== undefined ? { storeId } : {}) };
  if (entity !== 'orders') return out;
  const order = item as Order;
  if (form.lineProductsAsStoreKnows && order.orderItems?.length) out.lineProducts = await lineProductsOf(ctx, order.orderItems.map((line) => line.id));
  const buyerText = order.buyer?.id ?? '';
  if (form.buyerId === 'integer' && buyerIdAsInteger(buyerText) === undefined) {
    const mapped = await ctx.identity.buyerInteger(buyerText);
    ctx.persist(mapped.changes);
    out.buyerId = mapped.n;
  }
  return out;
}

/** Per line, the product as the daemon's store knows it: its mapped id, else its SKU; `undefined` when the line names no product of the service's store. */
async function lineProductsOf(ctx: IdentityContext, lineIds: ReadonlyArray<string | undefined>): Promise<Array<string | undefined>> {
  const store = await ctx.store();
  const products = store.entity('products');
  const named = [...new Set(lineIds.filter((id): id is string => id !== undefined && id !== ''))];
  const found = await Promise.all(named.map(async (id) => (await products.get(id, { signal: ctx.signal })) ?? (await store.productBySku(id, { signal: ctx.signal }))));
  const byLineId = new Map(named.map((id, i) => [id, found[i]]));
  const mapped = await ctx.identity.storeIdsOf('products', found.flatMap((p) => (p ? [p._id] : [])));
  return lineIds.map((id) => {
    const product = id === undefined ? undefined : byLineId.get(id);
    return product ? (mapped.get(product._id) ?? product.sku ?? product._id) : undefined;
  });
}

/**
 * Pushed items as the service keeps them: an item under a store id the map knows lands on the
 * service's item it maps to (an order keeps the service's `orderid`: the store's number is in the
 * map); an unmapped product whose SKU names a service product is that product (and is linked); an
 * order line naming a mapped store product names the service's; a mapped buyer integer is the buyer
 * id again (`""`: none).
 */
export async function pushedAsService<E extends Entity>(ctx: IdentityContext, entity: E, items: readonly ItemOf<E>[]): Promise<ItemOf<E>[]> {
  const mapped = await ctx.identity.serviceIdsOf(entity, items.map((x) => x._id));
  const out: ItemOf<E>[] = [];
  for (const item of items) {
    let id = mapped.get(item._id);
    if (id === undefined && entity === 'products') id = await linkBySku(ctx, item as Product);
    out.push(id === undefined ? item : await withServiceId(ctx, entity, item, id));
  }
  return entity === 'orders' ? ((await Promise.all(out.map((o) => ordersAsService(ctx, o as Order)))) as ItemOf<E>[]) : out;
}

/** The service product an unmapped pushed product's SKU names (linked to the store's id), if another. */
async function linkBySku(ctx: IdentityContext, product: Product): Promise<string | undefined> {
  if (product.sku === undefined || product.sku === '') return undefined;
  const existing = await (await ctx.store()).productBySku(product.sku, { signal: ctx.signal });
  if (!existing || existing._id === product._id) return undefined;
  ctx.persist(await ctx.identity.link('products', existing._id, product._id));
  return existing._id;
}

async function withServiceId<E extends Entity>(ctx: IdentityContext, entity: E, item: ItemOf<E>, id: string): Promise<ItemOf<E>> {
  if (entity !== 'orders') return { ...item, _id: id };
  const existing = (await (await ctx.store()).entity('orders').get(id, { signal: ctx.signal })) as Order | undefined;
  return { ...item, _id: id, ...(existing?.orderid !== undefined ? { orderid: existing.orderid } : {}) } as ItemOf<E>;
}

async function ordersAsService(ctx: IdentityContext, order: Order): Promise<Order> {
  const lineIds = (order.orderItems ?? []).flatMap((line) => (line.id ? [line.id] : []));
  const products = await ctx.identity.serviceIdsOf('products', lineIds);
  const buyerNumber = order.buyer?.id !== undefined && isMappedBuyerId(order.buyer.id) ? Number(order.buyer.id) : undefined;
  const buyerText = buyerNumber !== undefined ? (await ctx.identity.buyerTexts([buyerNumber])).get(buyerNumber) : undefined;
  let out = order;
  if (products.size > 0) out = { ...out, orderItems: out.orderItems!.map((line) => (line.id && products.has(line.id) ? { ...line, id: products.get(line.id)! } : line)) };
  if (buyerText !== undefined) {
    const { id: _mapped, ...rest } = out.buyer!;
    const buyer = buyerText === '' ? rest : { ...rest, id: buyerText };
    const { buyer: _b, ...withoutBuyer } = out;
    out = Object.keys(buyer).length > 0 ? { ...out, buyer } : withoutBuyer;
  }
  return out;
}
