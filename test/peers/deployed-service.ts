/**
 * A clean-room emulator of the DEPLOYED Click2Sync service calling a store's webhooks, written
 * from the facts in `docs/interface.md` ("Webhooks"; no peer code copied; there is none to copy for
 * the service itself, only its documentation and its example stores):
 *
 * - A connection is configured with one URL per entity (`{{URI_PRODUCTS}}`, `{{URI_ORDERS}}`),
 *   which may carry a query of its own (`…?entity=products`); the service adds its parameters to
 *   it (§1.1).
 * - The key goes in the `C2SKey` header, and only there (§1.3).
 * - Lists are walked by `offset`, starting at 0 (§1.2). The newer docs add `sortorder`, the older
 *   ones send `?offset=0` alone; this emulator sends `sortorder` on some walks and not on others.
 *   It never sends `jobid` (no example store reads it, §1.2). It advances by the items received and
 *   stops on an empty page or once `offset` reaches `itemsTotal` (inferred, §1.4).
 * - One item is read with `GET {url}?id=X` on the same URL, and the answer is the bare item (the
 *   one implementation, cs-cart's orders, answers bare: §1.5).
 * - A list may carry stubs (`{_id, last_updated}`, orders also `orderid`): the service compares
 *   each stub's `last_updated` with what it holds and reads the changed ones by id (§1.5, inferred).
 * - `POST {url}` without `id` creates, with `id` updates (§1.8); the reply is read for `success`
 *   and the new item's `_id` (`{success:true, product:{_id}}`), reasons for their `message`
 *   (§1.8). The HTTP status is not relied on (§5, question 6): the body is read whatever it is.
 * - Everything else in a reply (`paging.next`, `warnings`, `code`, extra members) is ignored.
 */

export type Entity = 'products' | 'orders';

export interface DeployedConnection {
  /** `{{URI_PRODUCTS}}` as the store owner configured it (may carry its own query). */
  readonly productsUrl: string;
  /** `{{URI_ORDERS}}`. */
  readonly ordersUrl: string;
  /** The private key the platform generated for the connection. */
  readonly key: string;
}

/** One request the emulator made, for checks on what it sent. */
export interface SentRequest {
  readonly method: string;
  readonly url: string;
  readonly headerNames: readonly string[];
}

export interface Answer {
  readonly status: number;
  /** The parsed body, or `undefined` when it is not JSON (PHP stores answer text). */
  readonly json: any;
  readonly text: string;
}

export type Item = Record<string, unknown> & { _id?: string; last_updated?: number };

/** What a write answered, read the deployed way. */
export interface WriteOutcome {
  readonly success: boolean;
  /** The `_id` of the item the store wrote (a create's new id), when it says. */
  readonly id?: string;
  /** The reasons' `message` texts of a refused write. */
  readonly messages: readonly string[];
}

const NOUN: Record<Entity, 'product' | 'order'> = { products: 'product', orders: 'order' };

export class DeployedServiceEmulator {
  readonly sent: SentRequest[] = [];
  /** The items the service holds for the connection, by entity and `_id`. */
  readonly held: Record<Entity, Map<string, Item>> = { products: new Map(), orders: new Map() };
  /** Reads made with `?id=` (by entity). */
  readonly readsById: Record<Entity, number> = { products: 0, orders: 0 };
  private walks = 0;

  constructor(readonly connection: DeployedConnection) {}

  private urlOf(entity: Entity, params: Record<string, string | number | undefined>): string {
    const url = new URL(entity === 'products' ? this.connection.productsUrl : this.connection.ordersUrl);
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  async call(method: 'GET' | 'POST', url: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { C2SKey: this.connection.key };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    this.sent.push({ method, url, headerNames: Object.keys(headers).map((h) => h.toLowerCase()) });
    const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json, text };
  }

  /**
   * "Fetch updates (grab)": walks an entity's list by offset and keeps every item. Items that come
   * as stubs are read by id when the service does not hold them at that `last_updated`.
   */
  async grab(entity: Entity): Promise<{ pages: number; stubs: number; fetchedById: number }> {
    // Alternate the two documented request forms: with sortorder (newer docs) and without (older).
    const sortorder = this.walks++ % 2 === 0 ? 'asc' : undefined;
    let offset = 0;
    let pages = 0;
    let stubs = 0;
    let fetchedById = 0;
    for (;;) {
      const page = await this.call('GET', this.urlOf(entity, { offset, sortorder }));
      const items: Item[] | undefined = page.json?.[entity];
      if (!Array.isArray(items)) throw new Error(`${entity} page at offset ${offset}: no ${entity} array (${page.status} ${page.text.slice(0, 120)})`);
      pages++;
      for (const listed of items) {
        if (typeof listed._id !== 'string') continue;
        if (isStub(entity, listed)) {
          stubs++;
          const have = this.held[entity].get(listed._id);
          if (have && have.last_updated === listed.last_updated) continue;
          const full = await this.readById(entity, listed._id);
          if (full) {
            fetchedById++;
            this.held[entity].set(listed._id, full);
          }
        } else this.held[entity].set(listed._id, listed);
      }
      offset += items.length;
      const total = Number(page.json?.paging?.itemsTotal);
      if (items.length === 0 || (Number.isFinite(total) && offset >= total)) return { pages, stubs, fetchedById };
    }
  }

  /** `GET {url}?id=X`: the bare item, or `undefined` when the store has none (any non-item answer). */
  async readById(entity: Entity, id: string): Promise<Item | undefined> {
    this.readsById[entity]++;
    const answer = await this.call('GET', this.urlOf(entity, { id }));
    const item = answer.json;
    return item && typeof item === 'object' && !Array.isArray(item) && item._id === id ? (item as Item) : undefined;
  }

  /** `POST {url}` without `id`: the store assigns the id. */
  async create(entity: Entity, item: Item): Promise<WriteOutcome> {
    const { _id: _, ...body } = item;
    return this.outcome(entity, await this.call('POST', this.urlOf(entity, {}), body));
  }

  /** `POST {url}?id=X`: updates item X (the body carries the same `_id`, as the examples read it from there). */
  async update(entity: Entity, id: string, item: Item): Promise<WriteOutcome> {
    return this.outcome(entity, await this.call('POST', this.urlOf(entity, { id }), { ...item, _id: id }));
  }

  private outcome(entity: Entity, answer: Answer): WriteOutcome {
    const reply = answer.json ?? {};
    const written = reply[NOUN[entity]];
    const reasons: unknown[] = Array.isArray(reply.reasons) ? reply.reasons : [];
    return {
      success: reply.success === true,
      ...(written && typeof written._id === 'string' ? { id: written._id } : {}),
      messages: reasons.map((r) => (r && typeof r === 'object' ? String((r as { message?: unknown }).message ?? '') : '')),
    };
  }
}

/** A listed item that is only an id and a time (orders: and their `orderid`). */
function isStub(entity: Entity, item: Item): boolean {
  const allowed = entity === 'orders' ? ['_id', 'last_updated', 'orderid'] : ['_id', 'last_updated'];
  return Object.keys(item).every((k) => allowed.includes(k));
}
