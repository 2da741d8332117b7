/**
 * An item the service gave up on (a daemon that never acknowledged it) is shown on the dashboard's
 * reverse page: in the failures with its reason and code, and apart in the counts.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createMemoryAdapter } from '../../adapters/memory';
import { createDashboardRouter, createReverseHttpSource } from '../../lib/dashboard';
import { demoCatalog } from '../../lib/demo';
import { createReverseServiceRouter } from '../../lib/reverse';

const KEY = 'dashboard-reverse-key-1';

function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }));
  });
}

test('the dashboard shows an order given up after its deliveries: the reason, its code, the count', async () => {
  const router = createReverseServiceRouter({ adapter: createMemoryAdapter(demoCatalog(4)), connections: [{ key: KEY, name: 'erp' }], maxDeliveries: 2, maxCallsPerSecond: 0 });
  const call = (method: string, path: string, body?: unknown) => router.service.handle({ method, key: KEY, path, body });
  await router.service.enqueue('erp', { kind: 'pull', entity: 'orders' });
  await call('POST', '/pull/initialize', {});
  for (let i = 0; i < 3; i++) await call('GET', '/pull/orders/next'); // never acknowledged: given up at the third
  const rs = await listen(express().use(router));
  const ds = await listen(express().use(createDashboardRouter({ reverse: [createReverseHttpSource(rs.url)] })));
  try {
    const page = await (await fetch(`${ds.url}/reverse/0/erp`)).text();
    expect(page).toContain('not acknowledged after 2 deliveries');
    expect(page).toContain('<code>1004</code>');
    expect(page).toContain('1 never acknowledged');
  } finally {
    for (const s of [ds.server, rs.server]) await new Promise((resolve) => (s.closeAllConnections(), s.close(resolve)));
  }
});
