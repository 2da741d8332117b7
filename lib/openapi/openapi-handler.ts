/**
 * Serving the OpenAPI document over HTTP, framework-agnostic: a plain `(req, res)` handler for
 * Express 4 and 5, `node:http`, or anything with Node's request and response objects.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OpenApiDocument } from './openapi-document';

/**
 * A handler that answers `GET`/`HEAD` with the document as JSON (serialized once, with an `ETag`;
 * a matching `If-None-Match` gets 304) and any other method with `405 {error}`.
 *
 * @example Serving the document beside the store router:
 * ```ts
 * import express from 'express';
 * import { createOpenApiDocument, openApiHandler } from 'storebridge/openapi';
 * import { createStoreRouter } from 'storebridge/server';
 *
 * const app = express();
 * app.get('/sync/openapi.json', openApiHandler(createOpenApiDocument({ include: ['webhooks'], serverUrl: 'https://shop.example.com/sync' })));
 * app.use('/sync', createStoreRouter({ adapter, svcKeys: [process.env.SVC_KEY!] }));
 * ```
 */
export function openApiHandler(doc: OpenApiDocument): (req: IncomingMessage, res: ServerResponse) => void {
  const body = Buffer.from(JSON.stringify(doc), 'utf8');
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return (req, res) => {
    res.setHeader('x-content-type-options', 'nosniff');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const error = Buffer.from(JSON.stringify({ error: 'method not allowed; use GET' }));
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json; charset=utf-8', 'content-length': error.length });
      res.end(error);
      return;
    }
    res.setHeader('etag', etag);
    res.setHeader('cache-control', 'no-cache');
    if (req.headers['if-none-match'] === etag) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
