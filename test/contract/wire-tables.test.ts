import fc from 'fast-check';
import {
  DIALECTS,
  LIST_QUERY,
  REVERSE_ROUTES,
  WEBHOOK_ROUTES,
  WRITE_QUERY,
  ackIdOf,
  dialectOf,
  encodeReverseItem,
  entityOf,
  matchReverseRoute,
  parseQuery,
  readItem,
  withQuery,
  type Order,
} from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';

describe('query tables', () => {
  it('parses a full list query into typed values', () => {
    const r = parseQuery(LIST_QUERY, '?sortorder=desc&jobid=-7&offset=40&limit=5&utm=x');
    expect(r).toEqual({ ok: true, values: { sortorder: 'desc', jobid: -7, offset: 40, limit: 5 }, ignored: ['utm'] });
  });

  it('accepts a query with nothing in it (deployed callers send neither sortorder nor jobid)', () => {
    expect(parseQuery(LIST_QUERY, '')).toEqual({ ok: true, values: {}, ignored: [] });
    expect(parseQuery(WRITE_QUERY, 'id=o-1')).toEqual({ ok: true, values: { id: 'o-1' }, ignored: [] });
  });

  it.each([
    ['sortorder=up', 'sortorder must be asc or desc, got "up"'],
    ['jobid=abc', 'jobid must be an integer, got "abc"'],
    ['jobid=1.5', 'jobid must be an integer, got "1.5"'],
    ['jobid=99999999999999999', 'jobid must be an integer, got "99999999999999999"'],
    ['offset=-1', 'offset must be a non-negative integer, got "-1"'],
    ['offset=', 'offset must be a non-negative integer'],
    ['limit=0', 'limit must be a positive integer, got "0"'],
    ['next=', 'next must not be empty: send the paging.next value of the previous page'],
    ['jobid=1&jobid=2', 'jobid must be given once, got 2 values'],
    ['id=a%00b', 'id must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF), got "a\\u0000b"'],
  ])('refuses %s, naming the parameter', (query, error) => {
    expect(parseQuery(LIST_QUERY, query)).toEqual({ ok: false, parameter: query.split('=')[0], error });
  });

  it('never throws, whatever the query string (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.constantFrom(LIST_QUERY, WRITE_QUERY), (q, table) => {
        const r = parseQuery(table, q);
        if (!r.ok) expect(typeof r.error).toBe('string');
      }),
      { numRuns: 2000 },
    );
  });

  it('merges parameters into a configured URL that carries its own query', () => {
    expect(withQuery('https://shop.example/c2s.php?entity=products', { offset: 0, sortorder: 'asc', next: undefined })).toBe(
      'https://shop.example/c2s.php?entity=products&offset=0&sortorder=asc',
    );
  });
});

describe('route tables', () => {
  it('names every webhook operation with its entity\'s descriptor', () => {
    for (const route of Object.values(WEBHOOK_ROUTES)) {
      expect(entityOf(route.entity).operations[route.kind]).toBe(route.operation);
    }
  });

  it('matches every reverse call, raw ids included, and tells 405 from 404', () => {
    for (const route of REVERSE_ROUTES) {
      const path = route.path.replace(':id', 'SKU 1#x');
      const m = matchReverseRoute(route.method, path);
      expect(m.ok && m.route).toBe(route);
      if (route.path.includes(':id')) expect(m.ok && m.id).toBe('SKU 1#x');
    }
    expect(matchReverseRoute('POST', '/ping')).toEqual({ ok: false, status: 405, allow: 'GET' });
    expect(matchReverseRoute('GET', '/pull/gadgets/hasmore')).toEqual({ ok: false, status: 404 });
    expect(matchReverseRoute('POST', '/pull/orders//succeded')).toEqual({ ok: false, status: 404 });
  });
});

describe('dialects', () => {
  const { orders, products } = demoCatalog(40);

  it('spec writes the reverse form with strings; click2sync writes numbers, epoch-ms dates and a numeric buyer id', () => {
    const order: Order = { ...orders[0], dateCreated: '2024-05-01T10:00:00.000Z', dateClosed: '', buyer: { ...orders[0].buyer, id: '223369408' } };
    const spec = encodeReverseItem(DIALECTS.spec, 'orders', order) as Record<string, any>;
    const c2s = encodeReverseItem(dialectOf('click2sync'), 'orders', order) as Record<string, any>;
    expect(typeof spec.orderItems[0].quantity).toBe('string');
    expect(spec.dateCreated).toBe('2024-05-01T10:00:00.000Z');
    expect(typeof c2s.orderItems[0].quantity).toBe('number');
    expect(c2s.dateCreated).toBe(Date.parse('2024-05-01T10:00:00.000Z'));
    expect(c2s.dateClosed).toBe(0);
    expect(c2s.buyer.id).toBe(223369408);
    expect(() => dialectOf('graphql')).toThrow(/expected spec or click2sync/);
  });

  it('both encodings read back as the same webhook item (property over the demo catalog)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...orders), fc.constantFrom(...Object.values(DIALECTS)), (order, dialect) => {
        const back = readItem('orders', encodeReverseItem(dialect, 'orders', order));
        expect(back.ok).toBe(true);
        const again = encodeReverseItem(dialect, 'orders', (back as { item: Order }).item);
        expect(again).toEqual(encodeReverseItem(dialect, 'orders', order));
      }),
      { numRuns: 200 },
    );
  });

  it('acknowledges by _id under spec and by sku / orderid under click2sync', () => {
    expect(ackIdOf(DIALECTS.spec, 'products', products[0])).toBe(products[0]._id);
    expect(ackIdOf(DIALECTS.click2sync, 'products', products[0])).toBe(products[0].sku);
    expect(ackIdOf(DIALECTS.click2sync, 'orders', orders[0])).toBe(orders[0].orderid);
    expect(ackIdOf(DIALECTS.click2sync, 'orders', { _id: 'o-1' })).toBe('o-1');
  });
});
