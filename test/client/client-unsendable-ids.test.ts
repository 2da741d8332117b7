/**
 * Issue 20 A, the caller's side: an id with an unpaired surrogate (ill-formed UTF-16) has no UTF-8
 * form, so no URL can carry it. The caller refuses it with a clear `InvalidOptionError` before
 * sending anything (it used to throw a bare `URIError` from `encodeURIComponent`, or, as `?id=`,
 * silently ask for U+FFFD: another id).
 */
import { createStoreClient } from '../../lib/client';
import { requestUrl } from '../../lib/client/client-urls';
import { InvalidOptionError } from '../../lib/errors';

const KEY = 'unsendable-key-123456';

test('reads and writes of such an id are refused before any request, naming the id', async () => {
  const sent: string[] = [];
  const fetch = async (url: string | URL | Request) => {
    sent.push(String(url));
    return new Response('{}', { status: 500 });
  };
  for (const urls of [undefined, { getProduct: 'https://shop.example/item/{id}' }]) {
    const client = createStoreClient({ baseUrl: 'https://shop.example', svcKey: KEY, fetch, retry: 0, ...(urls ? { urls } : {}) });
    await expect(client.getProduct('x\ud800')).rejects.toThrow(new InvalidOptionError('id', '"x\\ud800" holds an unpaired surrogate (ill-formed UTF-16), which no URL can carry; a store refuses such an id too'));
    await expect(client.getOrder('\udc00')).rejects.toBeInstanceOf(InvalidOptionError);
    await expect(client.writeProduct({ _id: 'p\ud83d', title: 't' }, { jobid: 1 })).rejects.toThrow(/"id": "p\\ud83d" holds an unpaired surrogate/);
  }
  expect(sent).toEqual([]);
  // Well-formed ids, astral characters included, are encoded as before.
  expect(requestUrl('https://shop.example/item/{id}', {}, 'a😀')).toBe('https://shop.example/item/a%F0%9F%98%80');
  expect(requestUrl('https://shop.example/p', {}, 'a😀')).toBe('https://shop.example/p?id=a%F0%9F%98%80');
});
