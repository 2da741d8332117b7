/**
 * Endpoint conformance checks: run them against any store (this kit's or one written in another
 * language) before it goes live. Modelled on connector acceptance tests: each check has a stable
 * name, passes or fails, and says why. `docs/check.md` describes every check.
 *
 * The checks are strict on purpose: the caller they use does not retry, so a store that drops
 * connections, answers 5xx, rate limits or stalls fails the reads it broke.
 */
import { jsonEqual } from '../adapter';
import { ENTITIES, type Entity, type ItemOf, type Order, type Product } from '../contract/webhook';
import type { SortOrder } from '../contract/messages';
import { INTERFACE_LIMITS } from '../contract/limits';
import { createStoreClient, type StoreClient } from '../client/store-client';
import type { StoreClientOptions } from '../client/client-options';
import type { WalkSummary } from '../client/catalog-walk';
import type { InvalidItem } from '../client/store-reply';
import { StoreResponseTooLargeError, StoreTimeoutError } from '../client/client-errors';
import { redact } from '../client/client-transport';

export interface CheckResult {
  /** Stable identifier, e.g. `products.paging-asc`. */
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

export interface CheckReport {
  readonly ok: boolean;
  readonly checks: CheckResult[];
}

export interface EndpointCheckOptions extends Omit<StoreClientOptions, 'retry' | 'hooks'> {
  /** Also probe add/update order (creates, then updates, one test order in the store). */
  writes?: boolean;
  /** The `jobid` sent (default 1; writes use `jobid` and `jobid + 1`). */
  jobid?: number;
  /** Called as each check finishes (for live output). */
  onCheck?: (check: CheckResult) => void;
  /** How many items are read back by ID per entity (default 5). */
  byIdSamples?: number;
  signal?: AbortSignal;
}

/** The spec's page limits. */
export const PAGE_BYTES_LIMIT = INTERFACE_LIMITS.maxPageBytes;
export const PAGE_TIME_LIMIT_MS = INTERFACE_LIMITS.requestTimeMs;

interface Capture<E extends Entity> {
  items: ItemOf<E>[];
  invalid: InvalidItem[];
  summary: WalkSummary;
  error?: Error;
}

async function capture<E extends Entity>(client: StoreClient, entity: E, sortorder: SortOrder, jobid: number, signal?: AbortSignal): Promise<Capture<E>> {
  const walk = client.walk(entity, { jobid, sortorder, signal });
  const out: Capture<E> = { items: [], invalid: [], summary: walk.summary };
  try {
    for await (const page of walk.pages()) {
      out.items.push(...page.fresh);
      out.invalid.push(...page.invalid);
    }
  } catch (err) {
    out.error = err as Error;
  }
  return out;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const failed = (c: Capture<Entity>) => `could not be checked: the ${c.summary.pages ? 'walk stopped' : 'first page failed'} (${c.error!.message})`;

/**
 * Runs every endpoint check against a store.
 *
 * @example
 * ```ts
 * import { checkEndpoints } from 'storebridge/conformance';
 * const report = await checkEndpoints({ baseUrl: 'http://127.0.0.1:8080', svcKey: process.env.SVC_KEY!, writes: true });
 * for (const c of report.checks) console.log(c.ok ? 'PASS' : 'FAIL', c.name, c.detail);
 * ```
 */
export async function checkEndpoints(options: EndpointCheckOptions): Promise<CheckReport> {
  const { writes = false, jobid = 1, onCheck, byIdSamples = 5, signal, ...clientOptions } = options;
  const client = createStoreClient({ ...clientOptions, retry: 0 });
  const key = options.svcKey;
  const checks: CheckResult[] = [];
  const add = (name: string, ok: boolean, detail: string) => {
    const c = { name, ok, detail: redact(detail, key) };
    checks.push(c);
    onCheck?.(c);
  };
  const walks: Partial<Record<Entity, Capture<Entity>>> = {};

  for (const entity of ENTITIES) {
    const op = entity === 'products' ? 'listProducts' : 'listOrders';
    const probe = async (name: string, expected: number, query: Record<string, string | number | undefined>, svcKey?: string | null) => {
      const url = client.urlOf(op, query);
      try {
        const res = await client.probe({ operation: op, method: 'GET', url, svcKey, signal });
        let hasError = false;
        try {
          hasError = typeof (JSON.parse(res.text) as { error?: unknown }).error === 'string';
        } catch {
          // not JSON
        }
        const ok = res.status === expected && hasError;
        add(`${entity}.${name}`, ok, ok ? `HTTP ${expected} {error}` : `expected HTTP ${expected} with a JSON {error} body, got HTTP ${res.status}${hasError ? '' : ' without {error}'}`);
      } catch (err) {
        add(`${entity}.${name}`, false, `request failed: ${(err as Error).message}`);
      }
    };
    await probe('auth-missing-key', 401, { sortorder: 'asc', jobid }, null);
    await probe('auth-wrong-key', 401, { sortorder: 'asc', jobid }, `${key}-not-this-one`);
    await probe('params-missing-sortorder', 400, { jobid });
    await probe('params-invalid-sortorder', 400, { sortorder: 'sideways', jobid });
    await probe('params-missing-jobid', 400, { sortorder: 'asc' });
    await probe('params-invalid-jobid', 400, { sortorder: 'asc', jobid: 'abc' });
    await probe('params-invalid-offset', 400, { sortorder: 'asc', jobid, offset: -1 });
    await probe('params-invalid-next', 400, { sortorder: 'asc', jobid, next: '%%not-a-cursor%%' });

    const asc = await capture(client, entity, 'asc', jobid, signal);
    const desc = await capture(client, entity, 'desc', jobid, signal);
    walks[entity] = asc;

    for (const [order, c] of [['asc', asc], ['desc', desc]] as const) {
      const name = `${entity}.paging-${order}`;
      if (c.error) add(name, false, failed(c));
      else {
        const s = c.summary;
        const problems: string[] = [];
        if (s.duplicates) problems.push(`${plural(s.duplicates, 'duplicate')} across pages`);
        for (const a of s.anomalies) {
          if (a.kind === 'items-total-changed') problems.push(`itemsTotal changed from ${a.from} to ${a.to}`);
          if (a.kind === 'items-total-mismatch') problems.push(`itemsTotal says ${a.itemsTotal}, the pages held ${a.received} distinct items`);
        }
        const distinct = s.items + s.invalid;
        add(name, problems.length === 0, problems.length ? problems.join('; ') : `${plural(s.pages, 'page')}, ${distinct} distinct items = itemsTotal`);
      }
    }

    if (asc.error || desc.error) add(`${entity}.sort-order`, false, failed(asc.error ? asc : desc));
    else {
      const bad = [...asc.summary.anomalies.map((a) => ['asc', a] as const), ...desc.summary.anomalies.map((a) => ['desc', a] as const)].filter(([, a]) => a.kind === 'sort-order');
      add(
        `${entity}.sort-order`,
        bad.length === 0,
        bad.length ? `${plural(bad.length, 'item')} out of order, first: "${(bad[0][1] as { _id: string })._id}" after "${(bad[0][1] as { previousId: string }).previousId}" (${bad[0][0]}; key is (last_updated, _id))` : 'asc and desc follow (last_updated, _id)',
      );
    }

    if (asc.error || desc.error) add(`${entity}.desc-reverses-asc`, false, failed(asc.error ? asc : desc));
    else {
      const a = asc.items.map((x) => x._id);
      const d = desc.items.map((x) => x._id).reverse();
      const at = a.findIndex((id, i) => id !== d[i]);
      const same = a.length === d.length && at === -1;
      add(`${entity}.desc-reverses-asc`, same, same ? `${a.length} items` : a.length !== d.length ? `asc has ${a.length} items, desc ${d.length}` : `first difference at position ${at}: "${a[at]}" vs "${d[at]}"`);
    }

    {
      const name = `${entity}.page-limits`;
      const err = asc.error ?? desc.error;
      const maxBytes = Math.max(asc.summary.maxPageBytes, desc.summary.maxPageBytes);
      const maxMs = Math.max(asc.summary.maxPageMs, desc.summary.maxPageMs);
      if (err instanceof StoreResponseTooLargeError) add(name, false, `a page is larger than ${PAGE_BYTES_LIMIT.toLocaleString('en')} bytes`);
      else if (err instanceof StoreTimeoutError) add(name, false, `a page took longer than ${err.limitMs} ms`);
      else if (err) add(name, false, failed(asc.error ? asc : desc));
      else {
        const ok = maxBytes <= PAGE_BYTES_LIMIT && maxMs <= PAGE_TIME_LIMIT_MS;
        add(name, ok, `largest page ${maxBytes.toLocaleString('en')} bytes (limit ${PAGE_BYTES_LIMIT.toLocaleString('en')}), slowest ${maxMs} ms (limit ${PAGE_TIME_LIMIT_MS.toLocaleString('en')} ms)`);
      }
    }

    const invalid = [...asc.invalid, ...desc.invalid];
    const noId = invalid.filter((x) => /^_id\b/.test(x.error));
    const typeErrors = invalid.filter((x) => !/^_id\b/.test(x.error));
    if (asc.error && !asc.summary.pages) {
      add(`${entity}.types`, false, failed(asc));
      add(`${entity}.ids`, false, failed(asc));
    } else {
      add(`${entity}.types`, typeErrors.length === 0, typeErrors.length ? `${plural(typeErrors.length, 'item')} with wrong types, first ${typeErrors[0]._id ? `"${typeErrors[0]._id}"` : `#${typeErrors[0].index}`}: ${typeErrors[0].error}` : `${asc.items.length} items in the webhook form`);
      add(`${entity}.ids`, noId.length === 0, noId.length ? `${plural(noId.length, 'item')} without a valid _id: ${noId[0].error}` : 'every item has an _id');
    }

    if (asc.error) add(`${entity}.by-id`, false, failed(asc));
    else if (asc.items.length === 0) add(`${entity}.by-id`, true, 'no items to read back');
    else {
      const n = asc.items.length;
      const picks = [...new Set(Array.from({ length: Math.min(byIdSamples, n) }, (_, i) => Math.floor((i * (n - 1)) / Math.max(1, Math.min(byIdSamples, n) - 1))))];
      const problems: string[] = [];
      for (const i of picks) {
        const item = asc.items[i];
        try {
          const got = await client.get(entity, item._id, { signal });
          if (!jsonEqual(got, item)) problems.push(`"${item._id}" differs from its list item`);
        } catch (err) {
          problems.push(`"${item._id}": ${(err as Error).message}`);
        }
      }
      add(`${entity}.by-id`, problems.length === 0, problems.length ? problems.join('; ') : `${plural(picks.length, 'item')} read by ID equal their list items`);
    }
    {
      const url = client.urlOf(entity === 'products' ? 'getProduct' : 'getOrder', {}, `storebridge-check-missing-${Date.now().toString(36)}`);
      try {
        const res = await client.probe({ operation: 'byId', method: 'GET', url, signal });
        add(`${entity}.by-id-unknown`, res.status === 404, res.status === 404 ? 'HTTP 404 for an unknown id' : `expected HTTP 404 for an unknown id, got ${res.status}`);
      } catch (err) {
        add(`${entity}.by-id-unknown`, false, `request failed: ${(err as Error).message}`);
      }
    }

    const again = await capture(client, entity, 'asc', jobid, signal);
    if (asc.error || again.error) add(`${entity}.stable-reads`, false, failed(asc.error ? asc : again));
    else {
      const diff = asc.items.length !== again.items.length ? `${asc.items.length} items, then ${again.items.length}` : asc.items.findIndex((x, i) => !jsonEqual(x, again.items[i]));
      const ok = diff === -1;
      add(`${entity}.stable-reads`, ok, ok ? 'two sequential full reads agree' : typeof diff === 'string' ? diff : `item ${diff} ("${asc.items[diff as number]._id}") differs between two reads`);
    }
  }

  if (writes) await checkWrites(client, walks.products as Capture<'products'> | undefined, jobid, add, signal);
  return { ok: checks.every((c) => c.ok), checks };
}

async function checkWrites(client: StoreClient, walk: Capture<'products'> | undefined, jobid: number, add: (name: string, ok: boolean, detail: string) => void, signal?: AbortSignal): Promise<void> {
  const products: Product[] = walk?.items ?? [];
  const product = products.find((p) => p.sku) ?? products[0];
  if (!product) {
    // An order needs a product the store knows: say whether the list failed or is empty.
    const why = walk?.error ? `the product list could not be read (${walk.error.message})` : 'the store lists no product to order';
    add('orders.write-round-trip', false, `could not be checked: ${why}`);
    add('orders.write-rejects-bad-order', false, `could not be checked: ${why}`);
    return;
  }
  const id = `storebridge-check-${Date.now().toString(36)}`;
  const price = product.variations?.[0]?.prices?.[0];
  const order: Order = {
    _id: id,
    orderid: id,
    status: 'pending',
    dateCreated: new Date().toISOString(),
    dateClosed: '',
    total: { amount: price?.number ?? 1, currency: price?.currency ?? 'USD' },
    orderItems: [{ id: product.sku || product._id, variation_id: product.variations?.[0]?.variationid ?? '', quantity: 1, unitPrice: price?.number ?? 1, currencyId: price?.currency ?? 'USD' }],
    buyer: { id: 'storebridge-check', email: 'check@example.com', phone: '', firstName: 'Storebridge', lastName: 'Check' },
  };
  try {
    const steps: string[] = [];
    const created = await client.writeOrder(order, { jobid, signal });
    if (!created.ok) throw new Error(`create refused: ${created.error} (${created.reasons.map((r) => r.msg).join('; ')})`);
    const read1 = await client.getOrder(id, { signal });
    if (read1.status !== 'pending') throw new Error(`after create, by-ID read shows status "${read1.status}"`);
    steps.push('created');
    const updated = await client.writeOrder({ ...order, status: 'paid' }, { jobid: jobid + 1, signal });
    if (!updated.ok) throw new Error(`update refused: ${updated.error}`);
    if (updated.item.status !== 'paid') throw new Error(`update answered status "${updated.item.status}"`);
    const read2 = await client.getOrder(id, { signal });
    if (read2.status !== 'paid') throw new Error(`after update, by-ID read shows status "${read2.status}"`);
    steps.push('updated');
    const again = await client.writeOrder({ ...order, status: 'paid' }, { jobid: jobid + 1, signal });
    if (!again.ok || again.item.status !== 'paid') throw new Error('repeating the same write did not answer the same result');
    steps.push('repeat answered the same');
    add('orders.write-round-trip', true, `order "${id}" ${steps.join(', ')}`);
  } catch (err) {
    add('orders.write-round-trip', false, (err as Error).message);
  }
  const badId = `${id}-bad`;
  try {
    const bad = await client.writeOrder({ ...order, _id: badId, orderid: badId, orderItems: [{ id: '', quantity: 0, unitPrice: 1, currencyId: 'USD' }] }, { jobid, signal });
    if (bad.ok) throw new Error('an order with a blank SKU and zero quantity was accepted');
    if (bad.reasons.length === 0) throw new Error('the failure structure has no reasons');
    const probe = await client.probe({ operation: 'getOrder', method: 'GET', url: client.urlOf('getOrder', {}, badId), signal });
    if (probe.status !== 404) throw new Error(`the refused order can be read back (HTTP ${probe.status})`);
    add('orders.write-rejects-bad-order', true, `failure structure (HTTP ${bad.status}) with ${plural(bad.reasons.length, 'reason')}: ${bad.reasons.map((r) => r.msg).join('; ')}; nothing stored`);
  } catch (err) {
    add('orders.write-rejects-bad-order', false, (err as Error).message);
  }
}
