/**
 * What the real-world store emulators share: a `node:http` server that answers like a PHP script
 * (one URL, told apart by the `entity` query part the owner adds; the key read from `C2SKey` only,
 * as PHP's `$_SERVER['HTTP_C2SKEY']`; a wrong key answered HTTP 200 with the text
 * `401 Unauthorized`; JSON sent with PHP's default `text/html` unless the store sets a type), a
 * seeded random source for their catalogs, and a tally of every deviation from the contract's
 * webhook form they put on the wire, so a test can check that the caller counted each one.
 *
 * Written from the deployed facts in `docs/interface.md` ("Webhooks", "What deployed peers send", the WH sources); no code of the examples.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NormalisationCountKind, NormalisationCounts } from '../../lib/client/store-reply';
import type { Entity } from '../../lib/contract/entities';
import { isRawJson, type StoreAdapter } from '../../lib/adapter';
import { prng } from '../../lib/demo';

export interface EmulatorRequest {
  readonly method: string;
  readonly url: URL;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface EmulatorReply {
  /** Default 200 (the PHP examples answer everything with 200). */
  readonly status?: number;
  /** Default `text/html; charset=UTF-8`, PHP's. */
  readonly type?: string;
  /** A string is sent as it is; anything else as JSON. */
  readonly body: unknown;
}

export interface RunningEmulator {
  /** The server's root (`http://127.0.0.1:PORT`). */
  readonly origin: string;
  /** Every request's URL, in order. */
  readonly requests: URL[];
  close(): Promise<void>;
}

export const PHP_CONTENT_TYPE = 'text/html; charset=UTF-8';

/** Starts a server that answers every request with `handler`. */
export async function startEmulator(handler: (req: EmulatorRequest) => EmulatorReply): Promise<RunningEmulator> {
  const requests: URL[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://emulator');
      requests.push(url);
      const reply = handler({ method: req.method ?? 'GET', url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
      res.writeHead(reply.status ?? 200, { 'content-type': reply.type ?? PHP_CONTENT_TYPE, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The key check of the PHP examples: the `C2SKey` header only, compared with the configured key. */
export function keyAccepted(req: EmulatorRequest, key: string): boolean {
  return req.headers.c2skey === key;
}

/** How the PHP examples refuse a key: HTTP 200, a text body. */
export const REFUSED: EmulatorReply = { body: '401 Unauthorized' };

/** PHP's `(int)` of a query value: leading digits, else 0. */
export function phpInt(value: string | null): number {
  const m = /^\s*-?\d+/.exec(value ?? '');
  return m ? Number(m[0]) : 0;
}

/** A seeded random source (the demo data's mulberry32): the catalogs are the same on every run. */
export const seeded = prng;

/** Money with two decimals, e.g. 1060.51, built from integer cents (so its decimal text is exact). */
export const money = (random: () => number, max: number): number => Math.round(random() * max * 100) / 100 + 1;

/**
 * Every deviation from the webhook form an emulator put on the wire, by entity and kind, in the
 * vocabulary of the caller's normalisation counts.
 */
export class Tally {
  readonly counts: Record<Entity, NormalisationCounts> = { products: {}, orders: {} };
  add(entity: Entity, kind: NormalisationCountKind, n = 1): void {
    if (n > 0) this.counts[entity][kind] = (this.counts[entity][kind] ?? 0) + n;
  }
  reset(): void {
    this.counts.products = {};
    this.counts.orders = {};
  }
}

/** The entity an emulator's request is for (`?entity=`), as the PHP scripts dispatch. */
export function entityParam(req: EmulatorRequest): Entity | undefined {
  const e = req.url.searchParams.get('entity');
  return e === 'products' || e === 'orders' ? e : undefined;
}

/**
 * Starts a PHP-style webhook script: the key checked first (a wrong one answered `REFUSED`), writes
 * answered with the text `not supported`, GETs dispatched on `?entity=` to `handlers`.
 */
export function startPhpScript(key: string, handlers: Record<Entity, (req: EmulatorRequest) => EmulatorReply>): Promise<RunningEmulator> {
  return startEmulator((req) => {
    if (!keyAccepted(req, key)) return REFUSED;
    if (req.method !== 'GET') return { body: 'not supported' };
    const entity = entityParam(req);
    return entity ? handlers[entity](req) : { body: 'Unknown entity' };
  });
}

/** The emulator a test gets, for a script at `path` on `server`. */
export function emulatorOf(name: string, server: RunningEmulator, path: string, key: string, truth: StoreEmulator['truth'], tally: Tally): StoreEmulator {
  return {
    name,
    urls: { products: `${server.origin}${path}?entity=products`, orders: `${server.origin}${path}?entity=orders` },
    key,
    truth,
    tally,
    server,
    close: () => server.close(),
  };
}

/** What every emulator can be told: how many items of each entity, and its key. */
export interface EmulatorOptions {
  readonly products?: number;
  readonly orders?: number;
  readonly key?: string;
}

/** What a store emulator gives a test: the connection's URLs, the truth it serves, its tally. */
export interface StoreEmulator {
  readonly name: string;
  /** `{{URI_PRODUCTS}}` and `{{URI_ORDERS}}` as the owner would configure them. */
  readonly urls: { readonly products: string; readonly orders: string };
  readonly key: string;
  /** The items in the webhook form, as a sink must hold them after a sync (`last_updated` 0 when the store sends none). */
  readonly truth: { readonly products: readonly object[]; readonly orders: readonly object[] };
  readonly tally: Tally;
  readonly server: RunningEmulator;
  close(): Promise<void>;
}

/** Items sorted by `_id`, for comparing contents. */
export const byId = (items: readonly object[]): object[] => [...items].sort((a, b) => ((a as { _id: string })._id < (b as { _id: string })._id ? -1 : 1));

/** Everything a sink holds of an entity, as plain objects sorted by `_id`. */
export async function sinkContents(sink: StoreAdapter, entity: Entity): Promise<object[]> {
  const items = await sink[entity].list({ sortorder: 'asc', limit: 100_000, signal: new AbortController().signal });
  return byId(items.map((x) => (isRawJson(x) ? (JSON.parse(x.json) as object) : x)));
}
