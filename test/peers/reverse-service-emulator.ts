/**
 * A clean-room emulator of Click2Sync's deployed reverse service, written for these tests from
 * `docs/interface.md` ("The reverse connection": what the daemons show the real service must answer; no service
 * code exists to copy). Where the public material leaves a value unknown, it picks the one a
 * daemon must cope with anyway:
 *
 * - `GET /` answers 200 with an HTML page (not JSON);
 * - `upstreamstatus` is sent under that member only (what the daemons read);
 * - `ping` answers `fetchingremote`, `pulling`, or `none` (anything else means idle);
 * - every POST answers `{}` (no `ok`, no `received`); every status is 200 but unknown paths (404);
 * - a pull covers products, then orders, steered by `entity`; `hasmore` answers `waiting` once at
 *   the start of each entity and `nomore` at its end; `readyfornext` is `false` once after each
 *   acknowledgement;
 * - items carry numbers, epoch-ms dates and numeric buyer ids; new orders have no `_id` and a
 *   `tmp-` `orderid`; acknowledgements are keyed by `sku` / `orderid` (raw in the path);
 * - `cursoroffset` is the `last_updated` of the last item pushed, of the type it was sent in.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type Entity = 'products' | 'orders';
type Json = Record<string, unknown>;

export interface Acknowledgement {
  readonly entity: Entity;
  /** The path id as received. */
  readonly pathId: string;
  readonly outcome: 'succeded' | 'failed';
  readonly body: Json;
}

interface Transaction {
  kind: 'pull' | 'push' | 'pingsample';
  entity: Entity;
  /** Pull: the position in the entity's items; `leased` while one is out; `acked` until readyfornext. */
  pos: number;
  leased: boolean;
  notReadyOnce: boolean;
  waitedOnce: boolean;
}

const BASE = '/api/adapters/custom/reverse/connection/';

export class ReverseServiceEmulator {
  readonly acks: Acknowledgement[] = [];
  /** Items received by push pages, per entity, in order (all pushes). */
  readonly received: Record<Entity, Json[]> = { products: [], orders: [] };
  /** Items of each push page (the sizes), per push. */
  readonly pushes: Array<{ kind: string; products: number[]; orders: number[] }> = [];
  readonly calls: string[] = [];
  status: 'waiting' | 'initialized' | 'finished' = 'waiting';
  private readonly queue: Array<'pull' | 'push' | 'pingsample'> = [];
  private current: Transaction | null = null;
  private readonly cursor: Record<Entity, unknown> = { products: 0, orders: 0 };
  private server: Server | undefined;

  constructor(
    readonly key: string,
    /** What a pull hands out, per entity (orders with no `_id` are new). */
    readonly items: Record<Entity, Json[]>,
  ) {}

  enqueue(kind: 'pull' | 'push' | 'pingsample'): void {
    this.queue.push(kind);
    if (this.status === 'finished') this.status = 'waiting';
  }

  get idle(): boolean {
    return !this.current && this.queue.length === 0;
  }

  async listen(): Promise<string> {
    this.server = createServer((req, res) => void this.onRequest(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server!.closeAllConnections(), this.server!.close(() => resolve())));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = req.url ?? '/';
    this.calls.push(`${req.method} ${url.startsWith(BASE) ? url.slice(BASE.length + this.key.length) : url}`);
    if (url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Click2Sync</body></html>');
      return;
    }
    const body = text === '' ? {} : (JSON.parse(text) as Json);
    const answer = url.startsWith(`${BASE}${this.key}/`) ? this.answer(req.method ?? 'GET', url.slice(BASE.length + this.key.length), body) : undefined;
    res.writeHead(answer ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(answer ?? { error: 'not found' }));
  }

  private kindWanted(): 'pull' | 'push' | 'pingsample' | undefined {
    return this.current?.kind ?? this.queue[0];
  }

  private answer(method: string, path: string, body: Json): Json | undefined {
    const wanted = this.kindWanted();
    const entity = this.current?.entity ?? 'products';
    if (method === 'GET') {
      if (path === '/ping') return { connectionstatus: wanted === 'pull' ? 'pulling' : wanted ? 'fetchingremote' : 'none' };
      if (path === '/strategy') return { strategy: wanted === 'pingsample' ? 'pingsample' : 'push' };
      if (path === '/upstreamstatus') return { upstreamstatus: this.status };
      if (path === '/entity') return { entity };
      if (path === '/cursoroffset') return { cursoroffset: this.cursor[entity] };
    }
    if (method === 'POST' && /^\/(pull|push|pingsample)\/initialize$/.test(path)) return this.initialize(path.split('/')[1] as 'pull' | 'push' | 'pingsample');
    const pull = /^\/pull\/(products|orders)\/(hasmore|next|readyfornext|finish)$/.exec(path);
    if (pull) return this.pullCall(pull[1] as Entity, pull[2]);
    const ack = /^\/pull\/(products|orders)\/(.+)\/(succeded|failed)$/.exec(path);
    if (ack && method === 'POST') return this.acknowledge(ack[1] as Entity, ack[2], ack[3] as 'succeded' | 'failed', body);
    const page = /^\/(push|pingsample)\/(products|orders)(\/finish)?$/.exec(path);
    if (page && method === 'POST') return this.pushCall(page[2] as Entity, page[3] !== undefined, body);
    if (method === 'POST' && /^\/(pull|push|pingsample)\/finish$/.test(path)) return this.finish();
    return undefined;
  }

  /** Safe to repeat: a second initialize of the running transaction changes nothing. */
  private initialize(kind: 'pull' | 'push' | 'pingsample'): Json {
    if (this.current?.kind === kind) return {};
    if (this.status !== 'waiting' || this.queue[0] !== kind) return {};
    this.queue.shift();
    this.current = { kind, entity: 'products', pos: 0, leased: false, notReadyOnce: false, waitedOnce: false };
    this.status = 'initialized';
    if (kind !== 'pull') this.pushes.push({ kind, products: [], orders: [] });
    return {};
  }

  private pullCall(entity: Entity, call: string): Json {
    const t = this.current;
    if (!t || t.kind !== 'pull' || t.entity !== entity) return {};
    const list = this.items[entity];
    if (call === 'hasmore') {
      if (!t.waitedOnce) {
        t.waitedOnce = true;
        return { hasmore: 'waiting' };
      }
      return { hasmore: t.leased || t.pos < list.length ? 'ready' : 'nomore' };
    }
    if (call === 'next') {
      t.leased = true;
      return { [entity === 'products' ? 'product' : 'order']: list[t.pos] };
    }
    if (call === 'readyfornext') {
      if (t.notReadyOnce) {
        t.notReadyOnce = false;
        return { ready: false };
      }
      return { ready: !t.leased };
    }
    // finish: a pull of products goes on to the orders
    if (entity === 'products') Object.assign(t, { entity: 'orders', pos: 0, leased: false, waitedOnce: false });
    return {};
  }

  private acknowledge(entity: Entity, pathId: string, outcome: 'succeded' | 'failed', body: Json): Json {
    this.acks.push({ entity, pathId, outcome, body });
    const t = this.current;
    const item = t?.kind === 'pull' && t.entity === entity ? this.items[entity][t.pos] : undefined;
    const key = item && (entity === 'products' ? item.sku : item.orderid);
    if (t && t.leased && key === pathId) {
      t.pos++;
      t.leased = false;
      t.notReadyOnce = true;
    }
    return {};
  }

  private pushCall(entity: Entity, finish: boolean, body: Json): Json {
    const t = this.current;
    if (!t || t.kind === 'pull') return {};
    if (finish) {
      if (entity === 'products') t.entity = 'orders';
      return {};
    }
    const page = (body[entity] as Json[] | undefined) ?? [];
    this.pushes.at(-1)![entity].push(page.length);
    if (t.kind === 'push') {
      this.received[entity].push(...page);
      if (page.length > 0) this.cursor[entity] = page[page.length - 1].last_updated;
    }
    return {};
  }

  private finish(): Json {
    this.current = null;
    this.status = this.queue.length > 0 ? 'waiting' : 'finished';
    return {};
  }
}
