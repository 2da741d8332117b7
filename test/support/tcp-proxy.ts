/**
 * A TCP proxy on loopback for fault tests: put it between a process and its database or Redis,
 * then cut, stall and restore the connection at will.
 *
 * - `cut()`: every open connection is reset (both sides see ECONNRESET / "Connection terminated
 *   unexpectedly"), and new connections are reset as soon as they arrive, until `restore()`.
 *   The listening socket stays open, so the port cannot be taken by another process meanwhile.
 * - `stall()`: connections stay open but no byte is forwarded either way (a frozen network, a
 *   database behind a dead switch); new connections are accepted and stalled too. `restore()`
 *   resumes them where they stopped: nothing is lost, only delayed.
 * - `restore()`: forwards again.
 *
 * @example
 * ```ts
 * const proxy = await TcpProxy.start({ host: '127.0.0.1', port: 5432 });
 * // connect to postgres://postgres@127.0.0.1:${proxy.port}/test …
 * proxy.cut(); await sleep(6000); proxy.restore();
 * await proxy.close();
 * ```
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export type ProxyMode = 'open' | 'cut' | 'stalled';

/** One proxied connection: both sockets, and what a stall held back in each direction. */
interface Pair {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly held: Map<Socket, Buffer[]>;
}

export class TcpProxy {
  private mode: ProxyMode = 'open';
  private readonly pairs = new Set<Pair>();
  /** Connections accepted (including those reset at once while cut). */
  accepted = 0;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** Starts a proxy to `target` on `port` (default: a free port) of 127.0.0.1. */
  static async start(target: { host: string; port: number }, port = 0): Promise<TcpProxy> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
    return new TcpProxy(server, (server.address() as AddressInfo).port, target);
  }

  /** A URL pointing at this proxy instead of `url`'s host and port (`postgres://u@127.0.0.1:P/db`). */
  rewrite(url: string): string {
    const u = new URL(url);
    u.host = `127.0.0.1:${this.port}`;
    return u.toString();
  }

  get state(): ProxyMode {
    return this.mode;
  }

  /** Open connections. */
  get connections(): number {
    return this.pairs.size;
  }

  cut(): void {
    this.mode = 'cut';
    for (const pair of this.pairs) this.drop(pair);
  }

  stall(): void {
    this.mode = 'stalled';
  }

  restore(): void {
    this.mode = 'open';
    for (const pair of this.pairs) {
      for (const [to, chunks] of pair.held) {
        for (const chunk of chunks.splice(0)) to.write(chunk);
      }
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    if (this.mode === 'cut') {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(this.target.port, this.target.host);
    const pair: Pair = { client, upstream, held: new Map([[client, []], [upstream, []]]) };
    this.pairs.add(pair);
    // Forwarded by hand, not piped: a pipe resumes a paused source on 'drain', which would end a stall.
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.mode === 'stalled') pair.held.get(to)!.push(chunk);
      else to.write(chunk);
    };
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    for (const socket of [client, upstream]) {
      socket.on('error', () => this.drop(pair));
      socket.on('close', () => this.drop(pair));
    }
    client.resume();
  }

  /** Resets both ends (an abrupt loss, not a polite FIN). */
  private drop(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    for (const socket of [pair.client, pair.upstream]) {
      if (!socket.destroyed) socket.resetAndDestroy();
    }
  }
}
