import { guardAdapter, type GuardedAdapter } from '../../lib/adapter-guard';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog } from '../../lib/demo';
import { ORDER_STATUSES, type Order } from '../../lib/contract/webhook';
import { handleWrite, type WriteConfig } from '../../lib/server/write-core';

const signal = new AbortController().signal;
const catalog = demoCatalog(40);

function setup(now = 1_800_000_000_000) {
  const memory = createMemoryAdapter(structuredClone(catalog));
  const adapter = guardAdapter(memory);
  const config: WriteConfig = { allowedOrderStatuses: new Set(ORDER_STATUSES), now: () => now };
  return { memory, adapter, config };
}

function order(): Order {
  const { _id, last_updated, ...rest } = structuredClone(catalog.orders[0]);
  void last_updated;
  return { ...rest, _id: 'new-order-1' } as Order;
}

async function writeOrder(adapter: GuardedAdapter, config: WriteConfig, body: unknown, query: Record<string, unknown> = { jobid: '1', id: 'new-order-1' }) {
  return handleWrite(adapter, 'orders', query, body, config, signal);
}

describe('handleWrite: orders', () => {
  it('stores a valid order and answers the stored item', async () => {
    const { adapter, config } = setup();
    const res = await writeOrder(adapter, config, order());
    expect(res.status).toBe(200);
    const stored = await adapter.orders.get('new-order-1', { signal });
    expect(res.body).toEqual({ success: true, code: 200, warnings: [], order: stored });
    expect(stored!.last_updated).toBe(1_800_000_000_000);
  });

  it('refuses a zero quantity and stores nothing', async () => {
    const { adapter, config } = setup();
    const body = order();
    body.orderItems![0].quantity = 0;
    const res = await writeOrder(adapter, config, body);
    expect(res).toEqual({
      status: 400,
      body: {
        success: false,
        code: 400,
        error: 'order not stored: orderItems.0.quantity: must be greater than 0, got 0',
        reasons: [{ msg: 'orderItems.0.quantity: must be greater than 0, got 0' }],
        warnings: [{ msg: expect.stringMatching(/^total\.amount: /) }],
      },
    });
    expect(await adapter.orders.get('new-order-1', { signal })).toBeUndefined();
  });
});
