/**
 * Write identity and integrity over HTTP, on every bundled adapter and with both key headers
 * (SvcKey, the spec's; C2SKey, the deployed service's), each write also repeated — a retry after a
 * lost reply, and (on the SQL adapters) after a restart of the store — counting what is stored:
 * - issue 19: an order create is idempotent by its `orderid`, also when identical creates race,
 *   and any write by an `Idempotency-Key` header;
 * - issue 20 A: an unpaired surrogate in an id, SKU, orderid, order item or cursor is a 400 and
 *   stores nothing (it used to be stored as U+FFFD beside a document keeping `\ud800`);
 * - issue 20 B: 200 parallel creates of one SKU leave one product (PostgreSQL kept 200, MariaDB 113);
 * - issue 20 F: a partial update keeps what it leaves out (it used to leave `_id`, `last_updated`,
 *   `status`), says so, and `null` removes a member.
 */
import type { StoreAdapter } from '../../lib/adapter';
import { CursorCodec } from '../../lib/server/cursor';
import { createStoreCore } from '../../lib/server';
import { describeEveryAdapter, type StoreUnderTest } from './every-adapter';
import { get, KEY, post, startStore } from './helpers';

const N = 12;
const SECRET = 'a cursor secret of enough bytes';
const HEADERS = ['SvcKey', 'C2SKey'] as const;

type Store = Awaited<ReturnType<typeof startStore>>;

describeEveryAdapter('write identity', (kind) => {
  let under: StoreUnderTest;
  let store: Store;
  const serve = (adapter: StoreAdapter) => startStore({ adapter, cursorSecret: SECRET });
  beforeAll(async () => {
    under = await kind.fresh(N);
    store = await serve(under.adapter);
  });
  afterAll(async () => {
    await store.close();
    await under.dispose();
  });

  /** The store as after `kill` and a new `serve` on the same database (SQL adapters only). */
  async function restart(): Promise<boolean> {
    const again = under.reopen();
    if (!again) return false;
    await store.close();
    store = await serve(await again);
    return true;
  }

  async function all(entity: 'products' | 'orders'): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    let next: string | undefined;
    do {
      const page = await get(`${store.base}/${entity}?limit=500${next ? `&next=${next}` : ''}`);
      expect(page.status).toBe(200);
      out.push(...page.body[entity]);
      next = page.body.paging.next;
    } while (next);
    return out;
  }

  describe.each(HEADERS)('with the key in %s', (header) => {
    const json = { [header]: KEY, 'content-type': 'application/json' };
    const send = (path: string, body: unknown, extra: Record<string, string> = {}) => post(`${store.base}${path}`, body, { ...json, ...extra });
    const tag = `${kind.name}-${header}`;

    test('the same order create twice (a retry after a lost reply), then after a restart: one order, the first _id every time', async () => {
      const order = { orderid: `MKT-${tag}`, status: 'paid', total: { amount: 10, currency: 'USD' } };
      const first = await send('/orders?jobid=7', order);
      expect(first.status).toBe(200);
      const again = await send('/orders?jobid=7', order);
      expect(again.body).toEqual(first.body);
      if (await restart()) expect((await send('/orders?jobid=8', order)).body).toEqual(first.body);
      expect((await all('orders')).filter((o) => o.orderid === order.orderid).map((o) => o._id)).toEqual([first.body.order._id]);
    });

    test('twenty identical order creates racing leave one order, and every answer carries its _id', async () => {
      const order = { orderid: `RACE-${tag}`, status: 'pending' };
      const answers = await Promise.all(Array.from({ length: 20 }, () => send('/orders?jobid=7', order)));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      const ids = new Set(answers.map((a) => a.body.order._id));
      expect(ids.size).toBe(1);
      expect((await all('orders')).filter((o) => o.orderid === order.orderid)).toHaveLength(1);
    });

    test('an update may not take another order\'s orderid (400 "already used"), and stores nothing', async () => {
      const [a, b] = (await all('orders')).filter((o) => typeof o.orderid === 'string' && /^\d+$/.test(o.orderid as string));
      const r = await send(`/orders?jobid=1&id=${encodeURIComponent(String(a._id))}`, { orderid: b.orderid });
      expect(r.status).toBe(400);
      expect(r.body.reasons[0].msg).toBe(`orderid: "${b.orderid}" is already used by order "${b._id}"`);
      expect((await get(`${store.base}/orders/${encodeURIComponent(String(a._id))}`)).body.order).toEqual(a);
    });

    test('Idempotency-Key: a create without anything to repeat it by is replayed, not repeated; another body under the key is a 422', async () => {
      const key = { 'Idempotency-Key': `"${tag}-0f8fad5b-d9cb-469f"` };
      const body = { title: `no sku ${tag}` };
      const first = await send('/products?jobid=3', body, key);
      expect(first.status).toBe(200);
      const again = await send('/products?jobid=4', body, key);
      expect([again.status, again.headers.get('idempotent-replayed'), again.body]).toEqual([200, 'true', first.body]);
      if (await restart()) expect((await send('/products?jobid=5', body, key)).body).toEqual(first.body);
      const other = await send('/products?jobid=3', { title: 'another' }, key);
      expect([other.status, other.body.code, other.body.reasons[0].msg]).toEqual([422, 422, expect.stringMatching(/^Idempotency-Key: this key was already used for another request/)]);
      expect((await all('products')).filter((p) => p.title === body.title)).toHaveLength(1);
      // Without the key the same body is a new product each time (nothing to tell a retry by).
      expect((await send('/products?jobid=6', body)).body.product._id).not.toBe(first.body.product._id);
    });

    test('Idempotency-Key: ten identical creates racing store one product; each answer is its _id or a 409 to retry', async () => {
      const key = { 'Idempotency-Key': `race-${tag}` };
      const body = { title: `raced ${tag}` };
      const answers = await Promise.all(Array.from({ length: 10 }, () => send('/products?jobid=3', body, key)));
      const ok = answers.filter((a) => a.status === 200);
      expect(answers.every((a) => a.status === 200 || (a.status === 409 && a.headers.get('retry-after') === '1'))).toBe(true);
      expect(new Set(ok.map((a) => a.body.product._id)).size).toBe(1);
      expect((await all('products')).filter((p) => p.title === body.title)).toHaveLength(1);
    });

    test('200 parallel creates of one SKU leave exactly one product; the others get the 400 "already used" (issue 20 B)', async () => {
      const sku = `RACE-${tag}`;
      const answers = await Promise.all(Array.from({ length: 200 }, () => send('/products?jobid=9', { sku, title: 'r' })));
      const ok = answers.filter((a) => a.status === 200);
      expect(ok).toHaveLength(1);
      const holder = ok[0].body.product._id;
      for (const a of answers.filter((x) => x.status !== 200)) {
        expect([a.status, a.body.reasons.map((r: { msg: string }) => r.msg)]).toEqual([400, [`sku: "${sku}" is already used by product "${holder}"`]]);
      }
      expect((await all('products')).filter((p) => p.sku === sku)).toHaveLength(1);
      // An update of another product to that SKU is refused the same way.
      const other = await send(`/products?jobid=9&id=other-${tag}`, { sku, title: 'o' });
      expect(other.body.reasons[0].msg).toBe(`sku: "${sku}" is already used by product "${holder}"`);
    });

    test('an unpaired surrogate anywhere the store keys by is a 400 naming both rules, stores nothing, and every page and read stays 200 (issue 20 A)', async () => {
      const rule = 'must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)';
      const before = await all('products');
      const cases: Array<[string, string, string]> = [
        ['/products?jobid=1', `{"_id":"x\\ud800","sku":"LS-1","title":"t"}`, `_id: ${rule}`],
        ['/products?jobid=1&id=ls-2', `{"sku":"LS-\\udc00-2","title":"t"}`, `sku: ${rule}`],
        ['/orders?jobid=1', `{"orderid":"\\ud83dA","status":"paid"}`, `orderid: ${rule}`],
        ['/orders?jobid=1&id=ls-3', `{"orderItems":[{"id":"\\ud800","quantity":1}]}`, `orderItems.0.id: ${rule}`],
      ];
      for (const [path, raw, reason] of cases) {
        const r = await post(`${store.base}${path}`, raw, json);
        expect([path, r.status, r.body.reasons.map((x: { msg: string }) => x.msg)]).toEqual([path, 400, [reason]]);
      }
      const forged = new CursorCodec(Buffer.from(SECRET)).encode({ entity: 'products', sortorder: 'desc', after: { last_updated: 1, _id: 'x\ud800' } });
      expect((await get(`${store.base}/products?sortorder=desc&next=${forged}`, { [header]: KEY })).status).toBe(400);
      const core = createStoreCore({ adapter: under.adapter, svcKeys: [KEY], rateLimit: false });
      const byId = await core.handle('getProduct', { headers: { [header.toLowerCase()]: KEY }, rawQuery: '', id: 'x\ud800' });
      expect([byId.status, JSON.parse(byId.body).error]).toEqual([400, `the product id in the path ${rule}`]);
      expect(await all('products')).toEqual(before);
      for (const sortorder of ['asc', 'desc']) for (const limit of [1, 7]) {
        let next: string | undefined;
        do {
          const page = await get(`${store.base}/products?sortorder=${sortorder}&limit=${limit}${next ? `&next=${next}` : ''}`, { [header]: KEY });
          expect(page.status).toBe(200);
          next = page.body.paging.next;
        } while (next);
      }
    });

    test('a partial update keeps the stored members, says which, and repeats (retry, restart) change nothing; null removes a member (issue 20 F)', async () => {
      const target = (await all('orders')).find((o) => Array.isArray(o.orderItems) && o.total && o.buyer)!;
      const path = `/orders?jobid=3&id=${encodeURIComponent(String(target._id))}`;
      const first = await send(path, { status: 'shipped' });
      expect(first.status).toBe(200);
      const kept = Object.keys(target).filter((m) => !['_id', 'last_updated', 'status'].includes(m));
      expect(first.body.warnings).toEqual([{ msg: `body: members the body leaves out were kept from the stored order: ${kept.join(', ')} (a write replaces only the members it carries; send a member as null to remove it)` }]);
      const { last_updated: _lu, ...content } = target;
      expect(first.body.order).toEqual({ ...content, status: 'shipped', last_updated: expect.any(Number) });
      expect((await send(path, { status: 'shipped' })).body).toEqual(first.body);
      if (await restart()) expect((await send(path, { status: 'shipped' })).body).toEqual(first.body);
      const read = await get(`${store.base}/orders/${encodeURIComponent(String(target._id))}`, { [header]: KEY });
      expect(read.body.order).toEqual(first.body.order);
      const removed = await send(path, { feedback: 'late', messages: null });
      expect(removed.body.order.messages).toBeUndefined();
      expect(removed.body.order).toMatchObject({ feedback: 'late', total: target.total, orderItems: target.orderItems });
    });
  });
});
