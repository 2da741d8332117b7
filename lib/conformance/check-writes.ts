/**
 * The write checks (only with `--writes`: they write one test order to the store).
 */
import type { Order, Product } from '../contract/webhook';
import type { WriteResult } from '../client/store-reply';
import { plural, type Capture, type CheckContext } from './check-context';

/** The answer's normalisations, as a problem: the interface's structures need none. */
function structureProblem(what: string, result: WriteResult<Order>): string | undefined {
  const kinds = Object.keys(result.normalisations ?? {});
  return kinds.length ? `${what} is not the interface's structure (${kinds.join(', ')})` : undefined;
}

/** A test order for `product`, which the store lists. */
function testOrder(id: string, product: Product): Order {
  const price = product.variations?.[0]?.prices?.[0];
  return {
    _id: id,
    orderid: id,
    status: 'pending',
    dateCreated: new Date().toISOString(),
    dateClosed: '',
    total: { amount: price?.number ?? 1, currency: price?.currency ?? 'USD' },
    orderItems: [{ id: product.sku || product._id, variation_id: product.variations?.[0]?.variationid ?? '', quantity: 1, unitPrice: price?.number ?? 1, currencyId: price?.currency ?? 'USD' }],
    buyer: { id: 'storebridge-check', email: 'check@example.com', phone: '', firstName: 'Storebridge', lastName: 'Check' },
  };
}

/** Created, read back, updated (next `jobid`), read back, repeated: each answer the interface's structure. */
async function roundTrip(ctx: CheckContext, order: Order): Promise<string> {
  const { client, jobid, signal } = ctx;
  const id = order._id;
  const created = await client.writeOrder(order, { jobid, signal });
  if (!created.ok) throw new Error(`create refused: ${created.error} (${created.reasons.map((r) => r.msg).join('; ')})`);
  const createdShape = structureProblem('the create answer', created);
  if (createdShape) throw new Error(createdShape);
  const read1 = await client.getOrder(id, { signal });
  if (read1.status !== 'pending') throw new Error(`after create, by-ID read shows status "${read1.status}"`);
  const updated = await client.writeOrder({ ...order, status: 'paid' }, { jobid: jobid + 1, signal });
  if (!updated.ok) throw new Error(`update refused: ${updated.error}`);
  if (updated.item.status !== 'paid') throw new Error(`update answered status "${updated.item.status}"`);
  const read2 = await client.getOrder(id, { signal });
  if (read2.status !== 'paid') throw new Error(`after update, by-ID read shows status "${read2.status}"`);
  const again = await client.writeOrder({ ...order, status: 'paid' }, { jobid: jobid + 1, signal });
  if (!again.ok || again.item.status !== 'paid') throw new Error('repeating the same write did not answer the same result');
  return `order "${id}" created, updated, repeat answered the same`;
}

/** An order with a blank SKU and zero quantity: the failure structure with reasons, nothing stored. */
async function rejectsBadOrder(ctx: CheckContext, order: Order): Promise<string> {
  const { client, jobid, signal } = ctx;
  const badId = `${order._id}-bad`;
  const bad = await client.writeOrder({ ...order, _id: badId, orderid: badId, orderItems: [{ id: '', quantity: 0, unitPrice: 1, currencyId: 'USD' }] }, { jobid, signal });
  if (bad.ok) throw new Error('an order with a blank SKU and zero quantity was accepted');
  if (bad.reasons.length === 0) throw new Error('the failure structure has no reasons');
  const shape = structureProblem('the failure answer', bad);
  if (shape) throw new Error(shape);
  const probe = await client.probe({ operation: 'getOrder', method: 'GET', url: client.urlOf('getOrder', {}, badId), signal });
  if (probe.status !== 404) throw new Error(`the refused order can be read back (HTTP ${probe.status})`);
  return `failure structure (HTTP ${bad.status}) with ${plural(bad.reasons.length, 'reason')}: ${bad.reasons.map((r) => r.msg).join('; ')}; nothing stored`;
}

/**
 * Add/update order (`--writes`): a test order created, read back, updated, repeated; a bad order
 * refused with the failure structure and not stored. Both `must` (the write structures).
 */
export async function checkWrites(ctx: CheckContext, walk: Capture<'products'> | undefined): Promise<void> {
  const products: Product[] = walk?.items ?? [];
  const product = products.find((p) => p.sku) ?? products[0];
  const checks = [
    ['orders.write-round-trip', roundTrip],
    ['orders.write-rejects-bad-order', rejectsBadOrder],
  ] as const;
  if (!product) {
    // An order needs a product the store knows: say whether the list failed or is empty.
    const why = walk?.error ? `the product list could not be read (${walk.error.message})` : 'the store lists no product to order';
    for (const [name] of checks) ctx.add(name, 'must', false, `could not be checked: ${why}`);
    return;
  }
  const order = testOrder(`storebridge-check-${Date.now().toString(36)}`, product);
  for (const [name, check] of checks) {
    try {
      ctx.add(name, 'must', true, await check(ctx, order));
    } catch (err) {
      ctx.add(name, 'must', false, (err as Error).message);
    }
  }
}
