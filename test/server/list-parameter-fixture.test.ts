/**
 * Adding a list query parameter touches the contract (its table entry and its value type in
 * `ListFilters`), the adapter and its conformance check, and nothing else (issues 13 and 23). This
 * fixture does exactly that for a made-up `lang` parameter (titles in another language) and shows
 * that, with no other edit: the store router parses and validates it (400 with the table's
 * message), hands it to the adapter's `list` in every binding, the OpenAPI document lists it, and
 * the caller sends it: `client.list` and `client.walk` take it as an option (the caller's and the
 * adapter's `ListOptions` and `WalkOptions` all extend `ListFilters`) and put it on every request.
 */
import { z } from 'zod';
import { createMemoryAdapter } from '../../adapters/memory';
import { BaseEntityStore, isRawJson, type ListOptions, type RawJsonItem, type SignalOptions, type StoreAdapter } from '../../lib/adapter';
import { createStoreClient } from '../../lib/client';
import { LIST_QUERY, withQuery, type Product, type QueryParameter } from '../../lib/contract';
import { demoCatalog } from '../../lib/demo';
import { createOpenApiDocument } from '../../lib/openapi';
import { BINDINGS, KEY, get, startBinding } from './helpers';

// ---- 1. The contract: one entry in the list query table. -------------------------------------
const LANGUAGES = ['en', 'es'] as const;
const lang: QueryParameter<(typeof LANGUAGES)[number]> = {
  schema: z.enum(LANGUAGES, { error: 'must be en or es' }),
  description: 'Language of the titles (default en).',
  origin: 'storebridge',
};
(LIST_QUERY as Record<string, QueryParameter>).lang = lang;

// ---- 2. Its value type: one optional member of the contract's ListFilters (declaration merging). --
declare module '../../lib/contract/query' {
  interface ListFilters {
    readonly lang?: 'en' | 'es';
  }
}

// ---- 3. An adapter that honours it. ------------------------------------------------------------
const SPANISH: Readonly<Record<string, string>> = { Mug: 'Taza', Lamp: 'Lámpara', Chair: 'Silla', Desk: 'Escritorio', Shelf: 'Estante' };
const translate = (title: string | undefined) => title?.replace(/\b[A-Z][a-z]+\b/g, (w) => SPANISH[w] ?? w);

class LocalizedProducts extends BaseEntityStore<Product> {
  readonly seen: Array<ListOptions['lang']> = [];
  constructor(private readonly inner: BaseEntityStore<Product> | StoreAdapter['products']) {
    super();
  }
  async list(options: ListOptions): Promise<Array<Product | RawJsonItem>> {
    this.seen.push(options.lang);
    const items = await this.inner.list(options);
    if (options.lang !== 'es') return [...items];
    return items.map((x) => {
      const p = isRawJson(x) ? (JSON.parse(x.json) as Product) : x;
      return { ...p, title: translate(p.title) };
    });
  }
  count(options: SignalOptions) {
    return this.inner.count(options);
  }
  get(id: string, options: SignalOptions) {
    return this.inner.get(id, options);
  }
  protected async put(): Promise<void> {
    throw new Error('read-only fixture');
  }
}

function localizedAdapter(): StoreAdapter & { products: LocalizedProducts } {
  const memory = createMemoryAdapter(demoCatalog(30));
  return { products: new LocalizedProducts(memory.products), orders: memory.orders, productBySku: (sku, o) => memory.productBySku(sku, o) };
}

// ---- 4. Its conformance check. -----------------------------------------------------------------
async function checkLangConformance(adapter: StoreAdapter): Promise<void> {
  const signal = new AbortController().signal;
  const en = await adapter.products.list({ sortorder: 'asc', limit: 30, signal });
  const es = await adapter.products.list({ sortorder: 'asc', limit: 30, signal, lang: 'es' });
  const doc = (x: Product | RawJsonItem) => (isRawJson(x) ? (JSON.parse(x.json) as Product) : x);
  // Same items, same order, same keys; only the titles differ (and some do).
  expect(es.map((x) => doc(x)._id)).toEqual(en.map((x) => doc(x)._id));
  expect(es.map((x) => doc(x).last_updated)).toEqual(en.map((x) => doc(x).last_updated));
  expect(es.some((x, i) => doc(x).title !== doc(en[i]).title)).toBe(true);
}

// ---- What follows needs no change anywhere else in the kit. ------------------------------------
describe('a list parameter added in the contract table reaches the adapter, untouched elsewhere', () => {
  it('the fixture adapter passes its conformance check', () => checkLangConformance(localizedAdapter()));

  it.each(BINDINGS)('%s: parsed, validated with the table\'s message, and handed to the adapter', async (kind) => {
    const adapter = localizedAdapter();
    const s = await startBinding(kind, { adapter });
    try {
      const es = await get(`${s.base}/products?lang=es&limit=30`);
      const en = await get(`${s.base}/products?limit=30`);
      expect(es.status).toBe(200);
      expect(es.body.products.map((p: Product) => p.title)).toEqual(en.body.products.map((p: Product) => translate(p.title)));
      expect(adapter.products.seen).toEqual(['es', undefined]);
      const bad = await get(`${s.base}/products?lang=fr`);
      expect(bad).toMatchObject({ status: 400, body: { error: 'lang must be en or es, got "fr"' } });
      expect((await get(`${s.base}/products?lang=es&lang=en`)).body.error).toBe('lang must be given once, got 2 values');
      expect(adapter.products.seen).toHaveLength(2);
    } finally {
      await s.close();
    }
  });

  it('the OpenAPI document lists it, and the caller\'s URL helper carries it', () => {
    const doc = createOpenApiDocument({ include: ['webhooks'] }) as unknown as { paths: Record<string, { get: { parameters: Array<{ name: string; description: string; schema: { enum?: string[] } }> } }> };
    const parameter = doc.paths['/products'].get.parameters.find((p) => p.name === 'lang');
    expect(parameter).toMatchObject({ description: 'Language of the titles (default en).', schema: { enum: ['en', 'es'] } });
    expect(withQuery('https://shop.example/c2s.php?entity=products', { lang: 'es', offset: 0 })).toBe('https://shop.example/c2s.php?entity=products&lang=es&offset=0');
  });

  it('the caller sends it: client.list and every page of client.walk carry it, and the store answers in it', async () => {
    const adapter = localizedAdapter();
    const s = await startBinding('node:http', { adapter });
    const urls: string[] = [];
    const recording: typeof fetch = (input, init) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    try {
      const client = createStoreClient({ baseUrl: s.base, svcKey: KEY, fetch: recording, pageSize: 7 });
      const page = await client.list('products', { sortorder: 'asc', jobid: 1, lang: 'es', limit: 30 });
      const en = await client.list('products', { sortorder: 'asc', jobid: 1, limit: 30 });
      expect(page.items.map((p) => p.title)).toEqual(en.items.map((p) => translate(p.title)));
      const walked: Product[] = [];
      for await (const p of client.walk('products', { jobid: 2, lang: 'es', strategy: 'offset' })) walked.push(p);
      expect(walked.map((p) => p.title)).toEqual(en.items.map((p) => translate(p.title)));
      const walkUrls = urls.slice(2);
      expect(walkUrls.length).toBeGreaterThan(1);
      for (const url of [urls[0], ...walkUrls]) expect(new URL(url).searchParams.get('lang')).toBe('es');
      expect(new URL(urls[1]).searchParams.has('lang')).toBe(false);
      expect(adapter.products.seen).toEqual(['es', undefined, ...walkUrls.map(() => 'es')]);
    } finally {
      await s.close();
    }
  });

  it('a control character in a parameter handed to the adapter is a 400 before the adapter', async () => {
    (LIST_QUERY as Record<string, QueryParameter>).tag = { schema: z.string(), description: 'a free-text filter', origin: 'storebridge' };
    try {
      const adapter = localizedAdapter();
      const s = await startBinding('node:http', { adapter });
      try {
        expect((await get(`${s.base}/products?tag=a%00b`)).body).toEqual({ error: 'tag must not contain control characters (U+0000–U+001F) or unpaired surrogates (U+D800–U+DFFF)' });
        expect(adapter.products.seen).toEqual([]);
      } finally {
        await s.close();
      }
    } finally {
      delete (LIST_QUERY as Record<string, QueryParameter>).tag;
    }
  });
});
