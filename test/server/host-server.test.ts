/**
 * `storebridge/host`'s standalone server (what `serve` and `demo` run): its timeouts are set on
 * purpose, stalled clients are cut off with a JSON answer, and requests Node cannot parse (a NUL
 * in a header) are answered as JSON too.
 */
import net from 'node:net';
import { createMemoryAdapter } from '../../adapters/memory';
import { demoCatalog, seedDemo } from '../../lib/demo';
import { SERVER_TIMEOUTS, startStoreServer, type RunningStoreServer } from '../../lib/host';
import { KEY } from './helpers';

/** Writes raw bytes on a fresh connection, then reads until the server closes (or `waitMs`). */
function raw(port: number, chunks: Array<string | { pauseMs: number }>, waitMs = 10_000): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, ms: Date.now() - started }));
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('close', () => clearTimeout(timer));
    (async () => {
      for (const c of chunks) {
        if (typeof c === 'string') socket.write(c);
        else await new Promise((r) => setTimeout(r, c.pauseMs).unref());
        if (socket.destroyed) return;
      }
    })().catch(reject);
  });
}

function statusAndBody(text: string): { status: number; body: any; headers: string } {
  const [head, body] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: body ? JSON.parse(body) : undefined, headers: head.toLowerCase() };
}

describe('the standalone store server', () => {
  it('sets headersTimeout, requestTimeout (above the interface minute) and keepAliveTimeout on purpose', async () => {
    expect(SERVER_TIMEOUTS.requestTimeout).toBeGreaterThan(60_000);
    expect(SERVER_TIMEOUTS.headersTimeout).toBeLessThan(SERVER_TIMEOUTS.requestTimeout);
    const store = await startStoreServer({ adapter: createMemoryAdapter(), key: KEY, port: 0 });
    try {
      expect(store.server.headersTimeout).toBe(SERVER_TIMEOUTS.headersTimeout);
      expect(store.server.requestTimeout).toBe(SERVER_TIMEOUTS.requestTimeout);
      expect(store.server.keepAliveTimeout).toBe(SERVER_TIMEOUTS.keepAliveTimeout);
    } finally {
      await store.close();
    }
  });

  describe('with short timeouts', () => {
    let store: RunningStoreServer;
    beforeAll(async () => {
      store = await startStoreServer({
        adapter: createMemoryAdapter(),
        key: KEY,
        port: 0,
        seed: (a, signal) => seedDemo(a, 12, signal),
        timeouts: { headersTimeout: 600, requestTimeout: 1200, keepAliveTimeout: 3000, connectionsCheckingInterval: 100 },
      });
    });
    afterAll(() => store.close());

    it('seeds through the seed hook, then serves', async () => {
      expect(store.seeded).toEqual({ products: 12, orders: 3 });
      const res = await fetch(`${store.url}/products?id=${demoCatalog(12).products[0]._id}`, { headers: { C2SKey: KEY } });
      expect(res.status).toBe(200);
    });

    it('a client that stalls in its headers gets a JSON 408 and the connection closes', async () => {
      const r = await raw(store.port, ['GET /products HTTP/1.1\r\nHost: x\r\nSvc', { pauseMs: 5000 }]);
      expect(statusAndBody(r.text)).toMatchObject({ status: 408, body: { error: 'the request did not arrive in time' } });
      expect(r.ms).toBeLessThan(3000);
    });

    it('a client that stalls in its body gets a JSON 408', async () => {
      const r = await raw(store.port, [`POST /products?id=x HTTP/1.1\r\nHost: x\r\nSvcKey: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"ti`, { pauseMs: 5000 }]);
      expect(statusAndBody(r.text).status).toBe(408);
      expect(r.ms).toBeLessThan(3500);
    });

    it('an idle keep-alive connection is kept longer than headersTimeout and then reused', async () => {
      const request = `GET /products?limit=1 HTTP/1.1\r\nHost: x\r\nSvcKey: ${KEY}\r\n\r\n`;
      const r = await raw(store.port, [request, { pauseMs: 1500 }, request, { pauseMs: 200 }], 2500);
      expect(r.text.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(2);
    });

    it('a NUL in a header value is a JSON 400, not Node\'s bare text', async () => {
      const r = await raw(store.port, [`GET /products HTTP/1.1\r\nHost: x\r\nSvcKey: ab\u0000cd\r\n\r\n`]);
      const parsed = statusAndBody(r.text);
      expect(parsed.status).toBe(400);
      expect(parsed.headers).toContain('content-type: application/json');
      expect(parsed.body.error).toMatch(/not valid HTTP/);
    });
  });
});
