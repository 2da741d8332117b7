/**
 * The caller's URLs as a real connection has them: one URL per entity, possibly with a query of its
 * own, by-ID reads with `?id=` on that URL; defaults from the contract's route table.
 */
import { createStoreClient } from '../../lib/client';
import { requestUrl } from '../../lib/client/client-urls';
import { WEBHOOK_ROUTES } from '../../lib/contract/webhook-routes';
import { LIST_QUERY } from '../../lib/contract/query';

const KEY = 'url-test-key-123456';

test('baseUrl: the routes of WEBHOOK_ROUTES', () => {
  const { urls } = createStoreClient({ baseUrl: 'https://shop.example/hooks/', svcKey: KEY }).config;
  for (const route of Object.values(WEBHOOK_ROUTES)) {
    expect(urls[route.operation]).toBe(`https://shop.example/hooks${route.path.replace(':id', '{id}')}`);
  }
});

test('per-entity URLs carry the writes and the by-ID reads (?id=), merged into their own query', () => {
  const client = createStoreClient({
    urls: { listProducts: 'https://shop.example/c2s.php?entity=products', listOrders: 'https://shop.example/c2s.php?entity=orders' },
    svcKey: KEY,
  });
  expect(client.urlOf('listProducts', { sortorder: 'asc', jobid: 3, offset: 50, next: undefined })).toBe('https://shop.example/c2s.php?entity=products&sortorder=asc&jobid=3&offset=50');
  expect(client.urlOf('getOrder', {}, '#1001 a/b')).toBe('https://shop.example/c2s.php?entity=orders&id=%231001+a%2Fb');
  expect(client.urlOf('writeProduct', { jobid: 4, id: 'p-1' })).toBe('https://shop.example/c2s.php?entity=products&jobid=4&id=p-1');
  // A parameter the URL already has is replaced, not repeated.
  expect(requestUrl('https://shop.example/list?offset=9&entity=x', { offset: 0 })).toBe('https://shop.example/list?offset=0&entity=x');
});

test('one entity by its own URL, the other from the base; a {id} template puts the id in the path', () => {
  const client = createStoreClient({
    baseUrl: 'https://shop.example',
    urls: { listOrders: 'https://erp.example/orders.php', getProduct: 'https://shop.example/item/{id}/json' },
    svcKey: KEY,
  });
  expect(client.config.urls).toMatchObject({ listProducts: 'https://shop.example/products', writeProduct: 'https://shop.example/products', writeOrder: 'https://erp.example/orders.php' });
  expect(client.urlOf('getProduct', {}, 'a b')).toBe('https://shop.example/item/a%20b/json');
  expect(client.urlOf('getOrder', {}, 'o-1')).toBe('https://erp.example/orders.php?id=o-1');
});

test('a missing list URL, credentials or the key in a URL are refused, naming the option', () => {
  expect(() => createStoreClient({ urls: {}, svcKey: KEY })).toThrow(/urls\.listProducts.*required without baseUrl/);
  // One list URL alone: a connection that covers that entity only (a products-only store).
  const productsOnly = createStoreClient({ urls: { listProducts: 'https://shop.example/p' }, svcKey: KEY });
  expect(productsOnly.config.entities).toEqual(['products']);
  expect(productsOnly.config.urls).toEqual({ listProducts: 'https://shop.example/p', getProduct: 'https://shop.example/p', writeProduct: 'https://shop.example/p' });
  expect(() => productsOnly.urlOf('getOrder', {}, '1')).toThrow(/urls\.getOrder.*is not configured: this connection covers products only/);
  expect(() => createStoreClient({ urls: { listProducts: 'https://u:p@shop.example/p', listOrders: 'https://shop.example/o' }, svcKey: KEY })).toThrow(/urls\.listProducts.*credentials/);
  expect(() => createStoreClient({ urls: { listProducts: `https://shop.example/p?key=${KEY}`, listOrders: 'https://shop.example/o' }, svcKey: KEY })).toThrow(/urls\.listProducts.*key/);
});

test('the query the caller can send is the contract table\'s', () => {
  // Every parameter a list URL is built with is declared in LIST_QUERY (a compile-time fact, checked here at run time too).
  const url = new URL(createStoreClient({ baseUrl: 'https://s.example', svcKey: KEY, pageSize: 10 }).urlOf('listProducts', { sortorder: 'desc', jobid: 1, offset: 0, limit: 10 }));
  for (const name of url.searchParams.keys()) expect(Object.keys(LIST_QUERY)).toContain(name);
});

test('options follow the kit\'s one policy: an unknown one is refused with the closest known name', () => {
  expect(() => createStoreClient({ baseUrl: 'https://s.example', svcKey: KEY, pagesize: 10 } as never)).toThrow(/"pagesize": is not an option of createStoreClient \(did you mean "pageSize"\?\)/);
  expect(() => createStoreClient({ baseUrl: 'https://s.example', svcKey: KEY, timeoutMs: 0 })).toThrow(/"timeoutMs": must be an integer ≥ 1 \(ms\)/);
  expect(() => createStoreClient({ baseUrl: 'https://s.example', svcKey: 'two\nlines' })).toThrow(/svcKey/);
});
