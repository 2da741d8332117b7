/**
 * A standalone store server: the `node:http` binding of the store core at `/`, over an adapter,
 * with server limits set on purpose. What `storebridge serve` and `storebridge demo` run. Seeding
 * (the demo catalog) is the caller's, passed in as `seed`, so this module knows nothing of the demo.
 *
 * @example
 * ```ts
 * import { startStoreServer } from 'storebridge/host';
 * import { seedDemo } from 'storebridge/demo';
 * const store = await startStoreServer({ adapter, key: process.env.STOREBRIDGE_KEY!, port: 8080, seed: (a, s) => seedDemo(a, 100, s) });
 * console.log(`listening on ${store.url}`);
 * ```
 */
import { once } from 'node:events';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { StoreAdapter } from '../adapter';
import type { Logger } from '../logger';
import { createMetrics, metricsHandler, type Metrics } from '../metrics';
import { createStoreListener } from '../server/bindings/node-http';
import type { JwtKeyOptions } from '../server/jwt-key-verifier';
import type { Listing, Pagination, RateLimitOptions } from '../server/router-options';

/**
 * The servers' timeouts (docs/deployment.md "Server limits"):
 * - `headersTimeout` 20 s: the headers of a request must arrive within it (a stalled or slowloris
 *   client is answered 408 and closed; Node's default holds it for 60 s and more);
 * - `requestTimeout` 120 s: the whole request, body included, must arrive within it: above the
 *   interface's one minute of processing, and enough for a 10 MiB body on a slow uplink
 *   (~1.4 Mbit/s); Node's default is 300 s;
 * - `keepAliveTimeout` 65 s: an idle keep-alive connection is kept that long, longer than the 60 s
 *   idle timeout of common load balancers, so a proxy never reuses a connection the store has just
 *   closed (Node's default, 5 s, makes that race likely);
 * - `connectionsCheckingInterval` 5 s: how often Node checks the two timeouts above (default 30 s,
 *   which would let a stalled client stay up to 30 s longer).
 */
export const SERVER_TIMEOUTS = {
  headersTimeout: 20_000,
  requestTimeout: 120_000,
  keepAliveTimeout: 65_000,
  connectionsCheckingInterval: 5_000,
} as const;

/** The limits in one line, for the help of every command that runs a server. */
export const SERVER_LIMITS_HELP = `Server limits: headers within ${SERVER_TIMEOUTS.headersTimeout / 1000} s, the whole request within ${SERVER_TIMEOUTS.requestTimeout / 1000} s, idle keep-alive connections kept ${SERVER_TIMEOUTS.keepAliveTimeout / 1000} s (docs/deployment.md "Server limits").`;

export type ServerTimeouts = { -readonly [K in keyof typeof SERVER_TIMEOUTS]: number };

export interface StoreServerOptions {
  readonly adapter: StoreAdapter;
  /** The static key; may be empty when `jwt` is given. */
  readonly key: string;
  /** JWT keys, beside (or, with an empty `key`, instead of) the static key. */
  readonly jwt?: JwtKeyOptions;
  /** Needed when there is no static key to derive it from. */
  readonly cursorSecret?: string;
  readonly port: number;
  readonly host?: string;
  /** Fills the store before it listens (the CLI passes the demo catalog); its counts are `seeded`. */
  readonly seed?: (adapter: StoreAdapter, signal: AbortSignal) => Promise<{ products: number; orders: number }>;
  /**
   * Aborts the start: seeding stops between batches and `startStoreServer` rejects with the
   * signal's reason, before listening (a Ctrl-C during a long `--demo` seed).
   */
  readonly signal?: AbortSignal;
  readonly pagination?: Pagination;
  readonly listing?: Listing;
  readonly pageSize?: number;
  readonly rateLimit?: false | RateLimitOptions;
  readonly logger?: Logger;
  /** Log one line per request (needs `logger`). */
  readonly logRequests?: boolean;
  /**
   * Record Prometheus metrics and serve them at `GET /metrics` on a separate listener on this port
   * (same host; 0 picks a free one). Default: no metrics.
   */
  readonly metricsPort?: number;
  /** Other server timeouts than `SERVER_TIMEOUTS` (tests use short ones). */
  readonly timeouts?: Partial<ServerTimeouts>;
}

export interface RunningStoreServer {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly seeded: { products: number; orders: number };
  /** `http://HOST:PORT/metrics` when `metricsPort` was given. */
  readonly metricsUrl?: string;
  /** Stops accepting requests, ends open connections, closes the adapter. */
  close(): Promise<void>;
}

export async function startStoreServer(options: StoreServerOptions): Promise<RunningStoreServer> {
  const stop = options.signal ?? new AbortController().signal;
  stop.throwIfAborted();
  const seeded = options.seed ? await options.seed(options.adapter, stop) : { products: 0, orders: 0 };
  stop.throwIfAborted();
  const metrics: Metrics | undefined = options.metricsPort !== undefined ? createMetrics() : undefined;
  const listener = createStoreListener({
    adapter: options.adapter,
    ...(options.key !== '' || !options.jwt ? { svcKeys: [options.key] } : {}),
    ...(options.jwt ? { jwt: options.jwt } : {}),
    ...(options.cursorSecret !== undefined ? { cursorSecret: options.cursorSecret } : {}),
    defaultPagination: options.pagination,
    listing: options.listing,
    pageSize: options.pageSize,
    rateLimit: options.rateLimit,
    logger: options.logger,
    logRequests: options.logRequests,
    ...(metrics ? { metrics } : {}),
  });
  const timeouts = { ...SERVER_TIMEOUTS, ...options.timeouts };
  const host = options.host ?? '127.0.0.1';
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const server = await listening(limitedServer(listener, timeouts).listen(options.port, host));
  const { port } = server.address() as AddressInfo;
  let metricsServer: Server | undefined;
  if (metrics) {
    const handler = metricsHandler(metrics);
    metricsServer = limitedServer((req, res) => {
      if ((req.url ?? '').split('?')[0] === '/metrics') return handler(req, res);
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'only GET /metrics is served here' }));
    }, timeouts);
    try {
      await listening(metricsServer.listen(options.metricsPort, host));
    } catch (err) {
      await closeServer(server);
      throw err;
    }
  }
  return {
    url: `http://${shownHost}:${port}`,
    port,
    server,
    seeded,
    ...(metricsServer ? { metricsUrl: `http://${shownHost}:${(metricsServer.address() as AddressInfo).port}/metrics` } : {}),
    close: async () => {
      await Promise.all([closeServer(server), metricsServer && closeServer(metricsServer)]);
      await options.adapter.close?.();
    },
  };
}

/**
 * A server with the timeouts set, and malformed or timed-out requests answered as JSON. Also the
 * CLI's `reverse-service` server (not exported from `storebridge/host`).
 */
export function limitedServer(listener: (req: IncomingMessage, res: ServerResponse) => void, timeouts: ServerTimeouts): Server {
  const { keepAliveTimeout, ...created } = timeouts;
  const server = createServer(created, listener);
  server.keepAliveTimeout = keepAliveTimeout;
  server.on('clientError', answerClientError);
  return server;
}

/**
 * Node answers a request it cannot parse (a NUL in a header, an oversized header) or that timed
 * out with a bare text status; this answers JSON `{error}` instead, then closes.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (err.code === 'ECONNRESET' || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message =
    status === 408 ? 'the request did not arrive in time' : status === 431 ? 'the request headers are too large' : 'the request is not valid HTTP (a control character in a header, or a malformed request line)';
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

async function listening(server: Server): Promise<Server> {
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([err]) => {
      throw err;
    }),
  ]);
  return server;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
