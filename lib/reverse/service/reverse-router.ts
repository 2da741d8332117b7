/**
 * The Express binding of the reverse-connection service (Express 4 and 5): it finds the
 * connection key in the path, parses the JSON body within the byte budget, and hands the call to
 * `ReverseService.handle`. Every rule lives in the service and its state machine.
 */
import type { NextFunction, Request, Response, Router } from 'express';
import { INTERFACE_LIMITS } from '../../contract/limits';
import { InvalidOptionError } from '../../errors';
import type { TransactionRequest } from './reverse-machine';
import { createReverseService, REVERSE_BASE_PATH, type ReverseService, type ReverseServiceOptions } from './reverse-service';

export interface ReverseRouterExtraOptions {
  /** Largest request body accepted (bytes); larger ones get 413. Default 10 000 000. */
  readonly maxBodyBytes?: number;
  /**
   * Mount the operator routes `GET /connections` (every connection by name, with its status view),
   * `GET /connections/REF/status` and `POST /connections/REF/queue`, REF being the connection's key
   * or its name (loopback clients only). Default `true`. Turn them off behind a proxy on the same host, where
   * every client looks like loopback.
   */
  readonly operatorRoutes?: boolean;
}

export type ReverseRouterOptions = ({ readonly service: ReverseService } | ReverseServiceOptions) & ReverseRouterExtraOptions;

/** The router, with the service it serves (to `enqueue` and read `status` in-process). */
export type ReverseServiceRouter = Router & { readonly service: ReverseService };

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;

function isLoopback(req: Request): boolean {
  return LOOPBACK.test(req.socket?.remoteAddress ?? '');
}

function send(res: Response, status: number, body: unknown): void {
  res.status(status).set('Cache-Control', 'no-store').json(body);
}

interface BodyParserError {
  type?: string;
  status?: number;
}

function bodyError(res: Response, err: unknown, maxBodyBytes: number): void {
  const e = (err ?? {}) as BodyParserError;
  if (e.type === 'entity.too.large') return send(res, 413, { error: `the body is larger than ${maxBodyBytes} bytes` });
  if (e.type === 'entity.parse.failed') return send(res, 400, { error: 'the body is not valid JSON' });
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) return send(res, e.status, { error: 'the body could not be read' });
  send(res, 400, { error: 'the body could not be read' });
}

/**
 * An Express router for every `{P}/…` call of the reverse connection (mount it at `/`: the paths
 * start with `/api/adapters/custom/reverse/connection/{connection_key}`), plus the loopback
 * operator routes. Pass a `service` from `createReverseService`, or the service's options.
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { createReverseServiceRouter } from 'storebridge/reverse';
 *
 * const router = createReverseServiceRouter({ adapter, connections: [{ key: process.env.CONNECTION_KEY!, name: 'shop-1' }] });
 * router.service.enqueue('shop-1', { kind: 'push' });
 * express().use(router).listen(8080);
 * ```
 */
export function createReverseServiceRouter(options: ReverseRouterOptions): ReverseServiceRouter {
  if (!options || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  const maxBodyBytes = options.maxBodyBytes ?? INTERFACE_LIMITS.maxPageBytes;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) throw new InvalidOptionError('maxBodyBytes', 'expected a positive integer (bytes)');
  const service = 'service' in options && options.service ? options.service : createReverseService(options as ReverseServiceOptions);
  // Loaded here so that importing `storebridge/reverse` for the daemon alone never needs Express.
  const express = require('express') as typeof import('express');
  const json = express.json({ limit: maxBodyBytes });
  const router = express.Router();

  router.use(REVERSE_BASE_PATH, (req: Request, res: Response, next: NextFunction) => {
    const path = req.path;
    const slash = path.indexOf('/', 1);
    let key = '';
    try {
      key = decodeURIComponent(path.slice(1, slash === -1 ? undefined : slash));
    } catch {
      // An undecodable key is just an unknown key.
    }
    // The key is checked before the body is read: unknown keys cost no parsing and learn nothing.
    if (slash === -1 || !service.knows(key)) return send(res, 404, { error: 'not found' });
    json(req, res, (err?: unknown) => {
      if (err) return bodyError(res, err, maxBodyBytes);
      service.handle({ method: req.method, key, path: path.slice(slash), body: req.body }).then(
        (answer) => send(res, answer.status, answer.body),
        next,
      );
    });
  });

  if (options.operatorRoutes !== false) {
    const operator = (req: Request, res: Response, next: NextFunction) => {
      if (!isLoopback(req)) return send(res, 403, { error: 'the operator routes answer loopback clients only' });
      next();
    };
    // A connection is named by its key or (dashboard, operators) by its name.
    const viewOf = (ref: string) => service.statusByKey(ref) ?? (service.connectionNames().includes(ref) ? service.status(ref) : undefined);
    router.get('/connections', operator, (_req: Request, res: Response) => {
      send(res, 200, { connections: service.connectionNames().map((name) => service.status(name)) });
    });
    router.get('/connections/:key/status', operator, (req: Request, res: Response) => {
      const view = viewOf(String(req.params.key));
      if (!view) return send(res, 404, { error: 'not found' });
      send(res, 200, view);
    });
    router.post('/connections/:key/queue', operator, (req: Request, res: Response) => {
      const view = viewOf(String(req.params.key));
      if (!view) return send(res, 404, { error: 'not found' });
      json(req, res, (err?: unknown) => {
        if (err) return bodyError(res, err, maxBodyBytes);
        try {
          const position = service.enqueue(view.connection, (req.body ?? {}) as TransactionRequest);
          send(res, 200, { ok: true, position });
        } catch (e) {
          send(res, 400, { error: e instanceof Error ? e.message : 'bad transaction request' });
        }
      });
    });
  }

  return Object.assign(router, { service }) as ReverseServiceRouter;
}
