/**
 * The `node:http` binding of the reverse service: a `(req, res)` request listener for
 * `http.createServer` / `https.createServer`. It answers every request: the service's calls, the
 * operator routes, `GET /` when `answerRoot`, and 404 `{error}` for anything else.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createReverseNodeHandler } from 'storebridge/reverse';
 * const handler = createReverseNodeHandler({ adapter, connections: [{ key: process.env.KEY!, name: 'shop-1' }], answerRoot: true });
 * await handler.service.enqueue('shop-1', { kind: 'pull' });
 * createServer(handler).listen(8080);
 * ```
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ReverseService } from '../service/reverse-service';
import { createReverseHttp, encodeAnswer, NOT_FOUND, type ReverseBindingInput, type ReverseHttp, type ReverseHttpAnswer, type ReverseHttpRequest } from './reverse-http';

export type ReverseNodeHandler = ((req: IncomingMessage, res: ServerResponse) => void) & { readonly service: ReverseService };

/** The binding's view of a `node:http` request (also the Express binding's: Express requests are ones). */
/** Sockets that carried a request already (`ReverseHttpRequest.reusedConnection`). */
const usedSockets = new WeakSet<object>();

export function nodeRequest(http: ReverseHttp, req: IncomingMessage, url = req.url ?? '/'): ReverseHttpRequest {
  const socket = req.socket as object | undefined;
  const reusedConnection = socket !== undefined && usedSockets.has(socket);
  if (socket) usedSockets.add(socket);
  return {
    method: req.method ?? 'GET',
    url,
    remoteAddress: req.socket?.remoteAddress,
    reusedConnection,
    // The rest of a refused body is read and dropped (bounded) before the answer goes out:
    // answering while the daemon is still sending, then closing, makes it see a reset (EPIPE) instead of the 413.
    readBody: () => http.readBody(req),
  };
}

/**
 * Sends an answer. After a body that was refused unread (413, 400 mid-body), the connection is
 * closed. `readBody` has drained what the client sent (up to `drain`'s bound) before the answer;
 * what still arrives is read and dropped (up to twice the body limit) while the answer goes out.
 */
export function sendNode(req: IncomingMessage, res: ServerResponse, answer: ReverseHttpAnswer, maxBodyBytes: number): void {
  if (res.headersSent) return;
  const { body, headers } = encodeAnswer(answer);
  res.writeHead(answer.status, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
  if (answer.close && !req.readableEnded) {
    let dropped = 0;
    req.on('data', (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > 2 * maxBodyBytes) req.destroy();
    });
    req.on('error', () => undefined);
    req.resume();
  }
}

/** Creates the `node:http` binding (a request listener with the service it serves). */
export function createReverseNodeHandler(input: ReverseBindingInput): ReverseNodeHandler {
  const http = createReverseHttp(input);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    void http.answer(nodeRequest(http, req)).then((answer) => sendNode(req, res, answer ?? NOT_FOUND, http.maxBodyBytes));
  };
  return Object.assign(handler, { service: http.service });
}
