import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readCappedBody } from '../../lib/http/capped-body';
import { nodeExchange, fetchExchange } from '../../lib/http/exchange';

describe('readCappedBody: every body read is capped', () => {
  const server = createServer((req, res) => {
    if (req.url === '/declared') {
      res.writeHead(200, { 'content-length': '5000' });
      res.end('x'.repeat(5000));
      return;
    }
    // Chunked, no length: 100 chunks of 1 KiB, then more for as long as the client reads.
    res.writeHead(200, { 'content-type': 'text/plain' });
    let sent = 0;
    const write = () => {
      while (sent < 1000 && res.write('y'.repeat(1024))) sent++;
      if (sent < 1000) res.once('drain', write);
      else res.end();
    };
    write();
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it.each([
    ['node:http', nodeExchange],
    ['fetch', fetchExchange(globalThis.fetch)],
  ])('over %s: under the cap it reads all; over it, it stops early', async (_name, exchange) => {
    const small = await readCappedBody(await exchange(`${base}/declared`, { method: 'GET', headers: {}, signal: new AbortController().signal }), 10_000);
    expect(small).toEqual({ ok: true, text: 'x'.repeat(5000), bytes: 5000 });

    const declared = await readCappedBody(await exchange(`${base}/declared`, { method: 'GET', headers: {}, signal: new AbortController().signal }), 100);
    expect(declared).toEqual({ ok: false, bytes: 5000 });

    const controller = new AbortController();
    const streamed = await readCappedBody(await exchange(`${base}/stream`, { method: 'GET', headers: {}, signal: controller.signal }), 10 * 1024);
    controller.abort();
    expect(streamed.ok).toBe(false);
    expect(streamed.bytes).toBeLessThan(200 * 1024); // stopped long before the 1 MiB the server would send
  });
});
