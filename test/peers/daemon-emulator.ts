/**
 * A clean-room emulator of Click2Sync's deployed Java daemons (B1, SAI and ECC), written for these tests
 * from `docs/interface.md` ("The reverse connection", "How deployed daemons read replies", the B1/SAI/ECC/CPP sources; no daemon code copied). It behaves as they do:
 *
 * - the exact call order of a pass (§2.3–§2.5): `GET {host}/` until it answers 200, then `ping`
 *   (`fetchingremote` → push), `ping` again (`pulling` → pull), then the long pause;
 * - status codes are ignored: every reply is read, parsed as JSON (json-simple: `Long`/`Double`)
 *   and cast to an object; an empty or non-JSON reply aborts the pass (C2SUnreachableException);
 * - runtime exceptions (`ClassCastException`, `NullPointerException`, `NumberFormatException`,
 *   `IllegalArgumentException`) are not caught by the pass: the loop starts again at once, with no
 *   pause (the tight loops §2.7 describes) — counted here, so a test can require none;
 * - ids go raw into paths (a `#` starts a fragment; a space throws);
 * - every call opens a new HTTP client that asks for keep-alive and is never closed: its connection
 *   stays open until the service closes it (counted: `openSockets`, `maxOpenSockets`);
 * - B1 sends UTF-8 with `charset=utf-8` and composite `last_updated` strings; SAI sends its
 *   platform's Latin-1 labelled `application/json` (no charset) and numeric `last_updated`, and casts
 *   `cursoroffset` to `Long`; ECC sends no `last_updated` (every push is a full one), casts
 *   `cursoroffset` to `Long` and acknowledges orders with `{"order": null}`;
 * - `readyfornext` is polled with no limit (bounded here only to fail a test instead of hanging);
 * - `hasmore` `waiting` ends the entity after 11 polls; anything but `ready`/`waiting` ends it;
 * - the sleeps are the daemons' (1 s normal, 10 s long) scaled down by the test.
 */
import { Agent, request } from 'node:http';
import { ClassCastException, NullPointerException, ParseException, asObject, asPrimitiveBoolean, asString, parseJava, stringifyJava, type JavaObject, type JavaValue } from './java-json';
import { Erp, ErpException, type Flavor } from './daemon-erp';

const BASE = '/api/adapters/custom/reverse/connection/';

/** The service could not be reached, or answered something that is not JSON: the pass ends, the long pause follows. */
class C2SUnreachableException extends Error {
  override readonly name = 'C2SUnreachableException';
}
class NumberFormatException extends Error {
  override readonly name = 'NumberFormatException';
}
class IllegalArgumentException extends Error {
  override readonly name = 'IllegalArgumentException';
}

/** Thrown by a test's `beforeCall` to kill the daemon's process there (`kill -9`): it ends `runUntil` / `runFor` at once. */
export class DaemonKilled extends Error {
  override readonly name = 'DaemonKilled';
}

export interface EmulatedCall {
  readonly method: 'GET' | 'POST';
  /** The path as sent (raw). */
  readonly path: string;
  readonly status: number;
  readonly body?: string;
}

export interface DaemonEmulatorOptions {
  /** `c2shostnameprefix`: `http://127.0.0.1:PORT`. */
  readonly host: string;
  /** The connection key (the daemons make 256 `[A-Z0-9]`). */
  readonly key: string;
  readonly flavor: Flavor;
  /** `normalpausemillis` (1000) and `longpausemillis` (10000), shortened for tests. */
  readonly normalPauseMs?: number;
  readonly longPauseMs?: number;
  /** Pulled products are refused ("protected"), as in B1, SAI and ECC. Default true. */
  readonly productsProtected?: boolean;
  /** Send every initialize twice (a re-sent initialize, as after a lost reply). */
  readonly resendInitialize?: boolean;
  /** B1: refuse order lines naming item codes the ERP does not know (default: when the ERP has products). */
  readonly checkItemCodes?: boolean;
  /** `runUntil` fails after this many uncaught runtime exceptions (a tight loop a test must rule out). Default 50. */
  readonly maxRuntimeExceptions?: number;
  /**
   * Called before each call, with the body about to be sent (a test may stop and restart the service
   * there, or throw `DaemonKilled`). `'lost'`: the call reached the service but its reply did not
   * come back (a broken connection: the pass ends, as on `C2SUnreachableException`).
   */
  readonly beforeCall?: (method: 'GET' | 'POST', path: string, body?: string) => Promise<void | 'lost'> | void | 'lost';
  /** The ERP behind the daemon (a restarted daemon keeps its ERP). Default: a new, empty one. */
  readonly erp?: Erp;
}

export class DaemonEmulator {
  readonly erp: Erp;
  readonly calls: EmulatedCall[] = [];
  /** Runtime exceptions that escaped a pass (each restarts the loop at once). */
  readonly runtimeExceptions: Error[] = [];
  /** Passes that ended on C2SUnreachableException. */
  unreachable = 0;
  /** Items of each push page sent, per entity (the last push's pages are `pushes.at(-1)`). */
  readonly pushes: Array<{ verb: string; products: number[]; orders: number[] }> = [];
  /** HTTP connections opened, open now, and the most open at once (the service closes them, never the daemon). */
  socketsOpened = 0;
  openSockets = 0;
  maxOpenSockets = 0;
  private readonly agents: Agent[] = [];
  private checked = false;
  private readonly normal: number;
  private readonly long: number;

  constructor(readonly options: DaemonEmulatorOptions) {
    this.erp = options.erp ?? new Erp(options.flavor, options.productsProtected ?? true, options.checkItemCodes);
    this.normal = options.normalPauseMs ?? 1;
    this.long = options.longPauseMs ?? 2;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  // ---- HTTP, as HTTPWrapper does it -------------------------------------------------------------

  /** One call: the body read whatever the status, parsed and cast to an object. */
  private async http(method: 'GET' | 'POST', path: string, body?: JavaObject): Promise<JavaObject> {
    if ((await this.options.beforeCall?.(method, path, body === undefined ? undefined : stringifyJava(body))) === 'lost') throw new C2SUnreachableException('the connection broke before the reply');
    // `new HttpPost(url)`: a space is an IllegalArgumentException; a `#` starts the fragment.
    if (/[\s]/.test(path)) throw new IllegalArgumentException(`Illegal character in path: ${path}`);
    const sent = path.split('#')[0];
    const payload = body === undefined ? undefined : Buffer.from(stringifyJava(body), this.options.flavor === 'sai' ? 'latin1' : 'utf8');
    const headers: Record<string, string> = payload ? { 'content-type': this.options.flavor === 'sai' ? 'application/json' : 'application/json; charset=utf-8', 'content-length': String(payload.length) } : {};
    const url = new URL(this.options.host);
    const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, method, path: sent, headers, agent: this.newClient() }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', (err) => reject(new C2SUnreachableException(err.message)));
      req.end(payload);
    });
    this.calls.push({ method, path: sent, status: reply.status, ...(payload ? { body: payload.toString('latin1') } : {}) });
    let parsed: JavaValue;
    try {
      parsed = parseJava(reply.text);
    } catch (err) {
      throw new C2SUnreachableException(`not JSON: ${(err as ParseException).message}`);
    }
    return asObject(parsed, `reply of ${method} ${sent}`);
  }

  /** A new HTTP client for one call, asking for keep-alive and never closed (as `HttpClients.createDefault()` per call is). */
  private newClient(): Agent {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    this.agents.push(agent);
    agent.on('free', (socket) => socket.unref());
    const track = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<Agent['createConnection']>) => {
      const socket = track(...args)!;
      this.socketsOpened++;
      this.maxOpenSockets = Math.max(this.maxOpenSockets, ++this.openSockets);
      socket.once('close', () => this.openSockets--);
      return socket;
    }) as Agent['createConnection'];
    return agent;
  }

  /** Drops every client (the end of the daemon process). */
  close(): void {
    for (const a of this.agents.splice(0)) a.destroy();
  }

  private get = (path: string) => this.http('GET', `${BASE}${this.options.key}${path}`);
  private post = (path: string, body: JavaObject) => this.http('POST', `${BASE}${this.options.key}${path}`, body);

  // ---- the loop (Main.java) ---------------------------------------------------------------------

  /**
   * Runs passes until `done()` says so (checked between passes), like `while(true) abstractLoop()`.
   * Fails after `maxLoops` rounds (a loop that never ends is what the tests must rule out).
   */
  async runUntil(done: () => boolean | Promise<boolean>, maxLoops = 200): Promise<number> {
    for (let loops = 1; loops <= maxLoops; loops++) {
      try {
        await this.abstractLoop();
      } catch (err) {
        if (err instanceof DaemonKilled) throw err;
        // Not caught by loop(): logged by main, which starts again at once (no pause).
        this.runtimeExceptions.push(err as Error);
        if (this.runtimeExceptions.length > (this.options.maxRuntimeExceptions ?? 50)) throw new Error(`tight loop: ${this.runtimeExceptions.length} runtime exceptions, the last: ${(err as Error).message}`);
      }
      if (await done()) return loops;
    }
    throw new Error(`the emulated daemon did not finish in ${maxLoops} passes (${this.calls.length} calls)`);
  }

  /**
   * Runs passes for `ms` whatever happens, like the real daemon's endless loop: an uncaught runtime
   * exception starts the next pass at once. Returns the passes run.
   */
  async runFor(ms: number): Promise<number> {
    const end = Date.now() + ms;
    let loops = 0;
    while (Date.now() < end) {
      loops++;
      try {
        await this.abstractLoop();
      } catch (err) {
        if (err instanceof DaemonKilled) throw err;
        this.runtimeExceptions.push(err as Error);
      }
    }
    return loops;
  }

  private async abstractLoop(): Promise<void> {
    if (!this.checked) {
      // The reachability check: GET {host}/ must answer exactly 200.
      let status = 0;
      try {
        status = await this.reach();
      } catch {
        status = 0;
      }
      if (status !== 200) {
        await this.sleep(this.long);
        return;
      }
      this.checked = true;
    }
    try {
      await this.work();
    } catch (err) {
      if (!(err instanceof C2SUnreachableException) && !(err instanceof ErpException)) throw err;
      this.unreachable++;
    }
    await this.sleep(this.long);
  }

  private async reach(): Promise<number> {
    const url = new URL(this.options.host);
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: '/', method: 'GET', agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  }

  private async work(): Promise<void> {
    if (asString((await this.get('/ping')).connectionstatus, 'connectionstatus') === 'fetchingremote') await this.fetchRemote();
    if (asString((await this.get('/ping')).connectionstatus, 'connectionstatus') === 'pulling') await this.pullToRemote();
  }

  // ---- push ("fetch remote") ---------------------------------------------------------------------

  /** `cursoroffset` as the flavor reads it: B1 stringifies and parses `"ms - n"`; SAI and ECC cast to Long. */
  private cursorOf(reply: JavaObject): { ms: number; row: number } {
    const v = reply.cursoroffset;
    if (this.options.flavor !== 'b1') {
      if (v === null || v === undefined) throw new NullPointerException('cursoroffset is null');
      if (typeof v !== 'bigint') throw new ClassCastException(`cursoroffset: ${typeof v} cannot be cast to Long`);
      return { ms: Number(v), row: Number.POSITIVE_INFINITY };
    }
    const text = v === null || v === undefined ? 'null' : typeof v === 'string' ? v : stringifyJava(v);
    const m = /^(\d+)(?: - (\d+))?$/.exec(text);
    if (!m) throw new NumberFormatException(`For input string: "${text}"`);
    return { ms: Number(m[1]), row: m[2] ? Number(m[2]) : Number.POSITIVE_INFINITY };
  }

  private async fetchRemote(): Promise<void> {
    const strategy = asString((await this.get('/strategy')).strategy, 'strategy');
    if (strategy === null) throw new NullPointerException('setInitializeUpload(null)');
    const verb = strategy === 'pingsample' ? 'pingsample' : 'push';
    let status = asString((await this.get('/upstreamstatus')).upstreamstatus, 'upstreamstatus');
    let entity = asString((await this.get('/entity')).entity, 'entity');
    let cursor = this.cursorOf(await this.get('/cursoroffset'));
    if (status === 'waiting') {
      await this.post(`/${verb}/initialize`, {});
      if (this.options.resendInitialize) await this.post(`/${verb}/initialize`, {});
      status = asString((await this.get('/upstreamstatus')).upstreamstatus, 'upstreamstatus');
    }
    if (status === 'initialized') {
      const pages = { verb, products: [] as number[], orders: [] as number[] };
      this.pushes.push(pages);
      if (entity === 'products') {
        await this.pushEntity(verb, 'products', cursor, pages.products);
        await this.post(`/${verb}/products/finish`, {});
        cursor = this.cursorOf(await this.get('/cursoroffset'));
        entity = asString((await this.get('/entity')).entity, 'entity');
      }
      if (entity === 'orders') {
        await this.pushEntity(verb, 'orders', cursor, pages.orders);
        await this.post(`/${verb}/orders/finish`, {});
        this.cursorOf(await this.get('/cursoroffset'));
      }
      await this.post(`/${verb}/finish`, {});
      await this.get('/upstreamstatus'); // finished / finishing logged as fine
    }
    await this.sleep(this.long);
  }

  /** Pages of 50 from the cursor (a sample: one item); the buffer is flushed at the end even when empty. */
  private async pushEntity(verb: string, entity: 'products' | 'orders', cursor: { ms: number; row: number }, pages: number[]): Promise<void> {
    let items = this.erp.itemsAfter(entity, cursor);
    if (verb === 'pingsample') items = items.slice(0, 1);
    for (let i = 0; i < items.length; i += 50) {
      const page = items.slice(i, i + 50);
      if (page.length < 50) break;
      await this.post(`/${verb}/${entity}`, { [entity]: page });
      pages.push(page.length);
    }
    const rest = items.slice(items.length - (items.length % 50));
    await this.post(`/${verb}/${entity}`, { [entity]: rest });
    pages.push(rest.length);
  }

  // ---- pull ("pull to remote") -------------------------------------------------------------------

  private async pullToRemote(): Promise<void> {
    let status = (await this.get('/upstreamstatus')).upstreamstatus;
    let entity = asString((await this.get('/entity')).entity, 'entity');
    if (status === null || status === undefined) throw new NullPointerException('upstreamstatus is null'); // compared with no null check
    if (status === 'waiting') {
      await this.post('/pull/initialize', {});
      if (this.options.resendInitialize) await this.post('/pull/initialize', {});
      status = (await this.get('/upstreamstatus')).upstreamstatus;
      if (status === null || status === undefined) throw new NullPointerException('upstreamstatus is null');
    }
    if (status === 'initialized') {
      if (entity === 'products') {
        await this.pullEntity('products');
        await this.post('/pull/products/finish', {});
        entity = asString((await this.get('/entity')).entity, 'entity');
      }
      if (entity === 'orders') {
        await this.pullEntity('orders');
        await this.post('/pull/orders/finish', {});
      }
      await this.post('/pull/finish', {});
      await this.get('/upstreamstatus');
    }
    await this.sleep(this.long);
  }

  private async pullEntity(entity: 'products' | 'orders'): Promise<void> {
    for (let waits = 0; ; ) {
      const hasmore = asString((await this.get(`/pull/${entity}/hasmore`)).hasmore, 'hasmore');
      if (hasmore === 'waiting') {
        if (++waits > 11) return;
        await this.sleep(this.normal);
        continue;
      }
      if (hasmore !== 'ready') return;
      waits = 0;
      const next = await this.get(`/pull/${entity}/next`);
      if (!(await this.storeAndAcknowledge(entity, next))) continue;
      await this.sleep(this.normal);
      for (let polls = 1; !asPrimitiveBoolean((await this.get(`/pull/${entity}/readyfornext`)).ready, 'ready'); polls++) {
        if (polls > 500) throw new Error(`readyfornext never turned true (${entity})`);
        await this.sleep(this.normal);
      }
    }
  }

  /** Stores the item and sends `succeded` (the item as stored) or `failed`; false when there was no item to acknowledge. */
  private async storeAndAcknowledge(entity: 'products' | 'orders', next: JavaObject): Promise<boolean> {
    if (entity === 'products') {
      const product = next.product;
      if (product === null || product === undefined) return false; // B1 skips a null product, with no acknowledgement
      const p = asObject(product, 'product');
      const sku = asString(p.sku, 'product.sku');
      try {
        await this.post(`/pull/products/${sku}/succeded`, { product: this.erp.storeProduct(p) });
      } catch (err) {
        if (!(err instanceof ErpException)) throw err;
        await this.post(`/pull/products/${sku}/failed`, { error: 'could not pull product', reasons: [{ message: err.message, code: 400n }] });
      }
      return true;
    }
    const o = asObject(next.order, 'order'); // a null order is a NullPointerException
    const orderid = asString(o.orderid, 'order.orderid');
    let stored: JavaObject | null;
    try {
      stored = this.erp.storeOrder(o); // type errors here are not caught
    } catch (err) {
      if (!(err instanceof ErpException)) throw err;
      await this.post(`/pull/orders/${orderid}/failed`, { error: 'could not pull order', reasons: [{ message: err.message, code: 400n }] });
      return true;
    }
    await this.post(`/pull/orders/${orderid}/succeded`, { order: stored }); // ECC: {"order": null}
    return true;
  }
}
