/**
 * The Express binding of the dashboard (Express 4 and 5): reads the body (16 KiB at most), hands
 * the request to the framework-free core, sends its answer. It also mounts bull-board
 * (`@bull-board/express`, optional) at `/jobs/` for the raw BullMQ queue view, behind the same
 * access rules.
 */
import type { NextFunction, Request, Response, Router } from 'express';
import { z } from 'zod';
import { InvalidOptionError } from '../../errors';
import { defineOptions, opt } from '../../options';
import { createDashboard, DASHBOARD_OPTIONS, type Dashboard, type DashboardOptions, type DashboardRequest, type DashboardResponse } from '../dashboard-core';
import { DashboardDependencyError } from '../dashboard-errors';
import type { Headers } from '../dashboard-security';

export interface DashboardRouterOptions extends Omit<DashboardOptions, 'jobs'> {
  /**
   * The raw queue view (bull-board) at `/jobs/`: `true` (fails at creation when
   * `@bull-board/api`/`@bull-board/express` are missing), `false`, or `'auto'` (when installed and
   * the sync source has a queue). Default `'auto'`.
   */
  jobs?: boolean | 'auto';
  /** Let the jobs view retry, promote, clean or remove jobs. Default false (read-only). */
  jobsWritable?: boolean;
  /** Largest request body (bytes). Default 16,384. */
  maxBodyBytes?: number;
}

/** The router, with the core it serves and whether the jobs view is mounted (and why not). */
export type DashboardRouter = Router & {
  readonly dashboard: Dashboard;
  readonly jobs: boolean;
  /** Why the jobs view is not mounted, when `jobs` was `'auto'` and a package is missing. */
  readonly jobsUnavailable?: string;
};

interface BullBoardModules {
  createBullBoard(o: { queues: unknown[]; serverAdapter: unknown; options?: unknown }): unknown;
  BullMQAdapter: new (queue: unknown, options?: { readOnlyMode?: boolean }) => unknown;
  ExpressAdapter: new () => { setBasePath(path: string): unknown; getRouter(): (req: Request, res: Response, next: NextFunction) => void };
}

/** bull-board, loaded only when the jobs view is used (an optional peer dependency). */
export function loadBullBoard(): BullBoardModules {
  try {
    const api = require('@bull-board/api') as Pick<BullBoardModules, 'createBullBoard'>;
    const { BullMQAdapter } = require('@bull-board/api/bullMQAdapter') as Pick<BullBoardModules, 'BullMQAdapter'>;
    const { ExpressAdapter } = require('@bull-board/express') as Pick<BullBoardModules, 'ExpressAdapter'>;
    return { createBullBoard: api.createBullBoard, BullMQAdapter, ExpressAdapter };
  } catch (err) {
    throw new DashboardDependencyError('the jobs view (bull-board)', ['@bull-board/api', '@bull-board/express'], { cause: err });
  }
}

function readBody(req: Request, limit: number): Promise<string | 'too-large'> {
  // A body parser earlier in the app may have read the stream already.
  const parsed = (req as { body?: unknown }).body;
  if (typeof parsed === 'string') return Promise.resolve(parsed);
  if (parsed && typeof parsed === 'object' && !Buffer.isBuffer(parsed)) {
    const json = /json/i.test(req.headers['content-type'] ?? '');
    return Promise.resolve(json ? JSON.stringify(parsed) : new URLSearchParams(parsed as Record<string, string>).toString());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too-large');
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: Response, answer: DashboardResponse): void {
  res.status(answer.status);
  for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
  res.end(answer.body);
}

function toCore(req: Request, body?: string): DashboardRequest {
  const q = req.originalUrl.indexOf('?');
  return {
    method: req.method,
    path: req.path,
    query: q === -1 ? '' : req.originalUrl.slice(q + 1),
    headers: req.headers as Headers,
    remoteAddress: req.socket?.remoteAddress,
    base: req.baseUrl ?? '',
    secure: req.secure,
    ...(body !== undefined ? { body } : {}),
  };
}

/** bull-board's sub-app for one mount path (built on first use: its asset URLs need the full path). */
function jobsView(modules: BullBoardModules, queue: unknown, readOnlyMode: boolean, title: string) {
  const apps = new Map<string, ReturnType<InstanceType<BullBoardModules['ExpressAdapter']>['getRouter']>>();
  return (req: Request, res: Response, next: NextFunction) => {
    const base = `${req.baseUrl}`;
    let app = apps.get(base);
    if (!app) {
      const serverAdapter = new modules.ExpressAdapter();
      serverAdapter.setBasePath(base);
      modules.createBullBoard({ queues: [new modules.BullMQAdapter(queue, { readOnlyMode })], serverAdapter, options: { uiConfig: { boardTitle: `${title} jobs` } } });
      apps.set(base, (app = serverAdapter.getRouter()));
    }
    withoutWebFonts(res);
    app(req, res, next);
  };
}

/**
 * bull-board's page links a Google Fonts stylesheet: an operator's browser would ask Google for it
 * on every visit (a request to a third party from an internal tool), and offline it only fails. The
 * link is dropped from the page; the UI's own CSS falls back to system fonts.
 */
function withoutWebFonts(res: Response): void {
  const send = res.send.bind(res);
  res.send = (body?: unknown) => send(typeof body === 'string' ? body.replace(/<link[^>]*\/\/fonts\.(googleapis|gstatic)\.com[^>]*>\s*/g, '') : body);
}

/** The core's options and the binding's own (`lib/options.ts`). */
const parseOptions = defineOptions('createDashboardRouter', {
  ...DASHBOARD_OPTIONS,
  jobs: z.union([z.boolean(), z.literal('auto')], { error: 'must be true, false or "auto"' }).default('auto'),
  jobsWritable: opt.boolean().optional(),
  maxBodyBytes: opt.int({ min: 1, unit: 'bytes' }).default(16_384),
});

/**
 * @example
 * ```ts
 * import express from 'express';
 * import { createDashboardRouter, createRedisSyncSource, createReverseHttpSource } from 'storebridge/dashboard';
 *
 * const app = express();
 * app.use('/ops', createDashboardRouter({
 *   sync: createRedisSyncSource({ connection: process.env.REDIS_URL! }),
 *   reverse: [createReverseHttpSource('http://127.0.0.1:8080')],
 *   token: process.env.DASHBOARD_TOKEN,          // required when others than loopback reach it
 * }));
 * app.listen(9000, '127.0.0.1');
 * ```
 */
export function createDashboardRouter(options: DashboardRouterOptions = {}): DashboardRouter {
  const { maxBodyBytes, jobs: want, jobsWritable } = parseOptions(options);
  // The core's own options, as given (the core reads them once more, with its defaults).
  const { maxBodyBytes: _size, jobs: _jobs, jobsWritable: _writable, ...coreOptions } = options;
  const queue = options.sync?.queue;
  let modules: BullBoardModules | undefined;
  let jobsUnavailable: string | undefined;
  if (want !== false && queue) {
    try {
      modules = loadBullBoard();
    } catch (err) {
      if (want === true) throw err;
      jobsUnavailable = (err as Error).message;
    }
  } else if (want === true) throw new InvalidOptionError('jobs', 'the jobs view needs a sync source with a BullMQ queue (createRedisSyncSource)');
  const dashboard = createDashboard({ ...coreOptions, jobs: Boolean(modules) });
  // Loaded here so that importing `storebridge/dashboard` for the core alone never needs Express.
  const express = require('express') as typeof import('express');
  const router = express.Router();

  if (modules) {
    const view = jobsView(modules, queue, !jobsWritable, dashboard.options.title);
    router.use('/jobs', (req: Request, res: Response, next: NextFunction) => {
      const refused = dashboard.authorize(toCore(req));
      if (refused) return send(res, refused);
      view(req, res, next);
    });
  }
  router.use((req: Request, res: Response, next: NextFunction) => {
    const post = req.method !== 'GET' && req.method !== 'HEAD';
    const body = post ? readBody(req, maxBodyBytes) : Promise.resolve(undefined);
    body
      .then((text) => {
        if (text === 'too-large') return send(res, { status: 413, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ error: `the body is larger than ${maxBodyBytes} bytes` }) });
        return dashboard.handle(toCore(req, text)).then((answer) => send(res, answer));
      })
      .catch(next);
  });
  return Object.assign(router, { dashboard, jobs: Boolean(modules), ...(jobsUnavailable ? { jobsUnavailable } : {}) }) as DashboardRouter;
}
