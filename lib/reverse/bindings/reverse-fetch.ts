/**
 * The Fetch-API binding of the reverse service: `(request: Request) => Promise<Response>`, for
 * Hono, Next.js route handlers, Bun and Deno. It answers every request (404 `{error}` for what is
 * not the service's). The Fetch API has no client address: pass `remoteAddress` (your framework's
 * way to read it) to serve the operator routes; without it they answer 403.
 *
 * @example
 * ```ts
 * import { createReverseFetchHandler } from 'storebridge/reverse';
 * const handler = createReverseFetchHandler({ adapter, connections: [{ key: process.env.KEY!, name: 'shop-1' }], answerRoot: true });
 * Bun.serve({ port: 8080, fetch: handler });                       // Bun
 * // Next.js, app/api/[...path]/route.ts: export { handler as GET, handler as POST };
 * ```
 */
import { fetchBodyStream } from '../../http/request-body';
import type { ReverseService } from '../service/reverse-service';
import { createReverseHttp, encodeAnswer, NOT_FOUND, type ReverseBindingInput } from './reverse-http';

export type ReverseFetchOptions = ReverseBindingInput & {
  /** The client's address of a request (for the operator routes' loopback check). */
  readonly remoteAddress?: (request: Request) => string | undefined;
};

export type ReverseFetchHandler = ((request: Request) => Promise<Response>) & { readonly service: ReverseService };

/** Creates the Fetch-API binding. */
export function createReverseFetchHandler(options: ReverseFetchOptions): ReverseFetchHandler {
  const http = createReverseHttp(options);
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const answer = (await http.answer({
      method: request.method,
      url: url.pathname + url.search,
      remoteAddress: options.remoteAddress?.(request),
      // The same limits, decoding and depth check as the other bindings.
      readBody: () => http.readBody(fetchBodyStream(request)),
    })) ?? NOT_FOUND;
    const { body, headers } = encodeAnswer(answer);
    return new Response(request.method === 'HEAD' ? null : body, { status: answer.status, headers });
  };
  return Object.assign(handler, { service: http.service });
}
