/**
 * The Express binding of the reverse service (Express 4 and 5, no runtime dependency on Express):
 * one middleware for every `{P}/…` call, the operator routes and (with `answerRoot`) `GET /`. It
 * never hands a request or an error to Express's own handlers: what is the service's is answered
 * here, as JSON; anything else goes to the next middleware of the host app.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createReverseServiceRouter } from 'storebridge/reverse';
 * const router = createReverseServiceRouter({ adapter, connections: [{ key: process.env.KEY!, name: 'shop-1' }] });
 * const app = express().use(router);
 * app.get('/', (_req, res) => res.json({ ok: true })); // deployed daemons check GET / first
 * app.listen(8080);
 * ```
 */
import type { NextFunction, Request, Response } from 'express';
import type { ReverseService } from '../service/reverse-service';
import { createReverseHttp, type ReverseBindingInput } from './reverse-http';
import { nodeRequest, sendNode } from './reverse-node';

export type ReverseRouterOptions = ReverseBindingInput;

/** The middleware, with the service it serves (to `enqueue` and read `status` in-process). */
export type ReverseServiceRouter = ((req: Request, res: Response, next: NextFunction) => void) & { readonly service: ReverseService };

/** Creates the Express binding. Mount it where the paths start (`app.use(router)`: `{P}` is `/api/adapters/custom/reverse/connection/{key}`). */
export function createReverseServiceRouter(options: ReverseRouterOptions): ReverseServiceRouter {
  const http = createReverseHttp(options);
  const middleware = (req: Request, res: Response, next: NextFunction) => {
    void http.answer(nodeRequest(http, req, req.url)).then((answer) => {
      if (answer) sendNode(req, res, answer, http.maxBodyBytes);
      else next();
    });
  };
  return Object.assign(middleware, { service: http.service });
}
