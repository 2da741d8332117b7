import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readJsonBody, type RequestBodyOptions } from '../../lib/http/request-body';

/** A loopback server answering what readJsonBody made of the request: the value, or the error. */
async function serve(options: RequestBodyOptions): Promise<{ server: Server; url: string }> {
  const server = createServer((req: IncomingMessage, res) => {
    readJsonBody(req, options).then(
      (value) => res.end(JSON.stringify({ value })),
      (err: Error & { status?: number }) => {
        res.statusCode = err.status ?? 500;
        res.setHeader('connection', 'close');
        res.end(JSON.stringify({ error: err.message }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

function post(url: string, body: Buffer | string, contentType = 'application/json'): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': contentType, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('readJsonBody', () => {
  let plain: { server: Server; url: string };
  let lenient: { server: Server; url: string };
  beforeAll(async () => {
    plain = await serve({ maxBytes: 1000 });
    lenient = await serve({ maxBytes: 100_000, latin1Fallback: true, allowEmpty: true, maxDepth: 8 });
  });
  afterAll(() => {
    plain.server.close();
    lenient.server.close();
  });

  it('decodes Latin-1 sent without a charset when asked to (a deployed daemon\'s platform default)', async () => {
    const latin1 = Buffer.from('{"title":"Caf\u00e9 ni\u00f1o"}', 'latin1');
    expect(await post(plain.url, latin1)).toEqual({ status: 400, body: { error: 'the body is not valid UTF-8' } });
    expect(await post(lenient.url, latin1)).toEqual({ status: 200, body: { value: { title: 'Caf\u00e9 ni\u00f1o' } } });
    // A declared charset is believed: no fallback.
    expect((await post(lenient.url, latin1, 'application/json; charset=utf-8')).status).toBe(400);
    // UTF-8 stays UTF-8.
    expect(await post(lenient.url, '{"title":"Caf\u00e9"}')).toEqual({ status: 200, body: { value: { title: 'Caf\u00e9' } } });
  });

  it('refuses a body nested deeper than the limit with a 400, not a crash', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    expect(await post(lenient.url, deep)).toEqual({ status: 400, body: { error: 'the body is nested more than 8 levels deep' } });
    expect((await post(plain.url, '{"a":' + '['.repeat(60) + ']'.repeat(60) + '}')).status).toBe(200);
  });

  it('reads an empty body as nothing only when allowed', async () => {
    expect(await post(lenient.url, '')).toEqual({ status: 200, body: {} });
    expect((await post(plain.url, '')).status).toBe(400);
  });
});
