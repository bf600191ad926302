/**
 * oneLayer runs its middlewares as Express would run them as layers of their
 * own: in order, an error skipping the rest to the error handler, a throw or
 * a rejected promise taken as an error. Checked over real HTTP, in a real
 * Express app, against the same middlewares mounted one layer each.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { oneLayer } from './one-layer.ts';

const servers: Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((server) => new Promise((closed) => server.close(closed)))));

/** An app with `handlers` mounted one layer each, or as oneLayer; it answers what ran, or the error's message with 500. */
async function answerOf(grouped: boolean, handlers: RequestHandler[]): Promise<{ status: number; body: string }> {
  const app = express();
  app.use((req, _res, next) => {
    (req as Request & { ran: string[] }).ran = [];
    next();
  });
  if (grouped) app.use(oneLayer(...handlers));
  else for (const handler of handlers) app.use(handler);
  app.use((req: Request, res: Response) => {
    res.json((req as Request & { ran: string[] }).ran);
  });
  app.use((error: Error, req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: error.message, ran: (req as Request & { ran: string[] }).ran });
  });
  const server = createServer(app);
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return { status: response.status, body: await response.text() };
}

const mark = (name: string): RequestHandler => (req, _res, next) => {
  (req as Request & { ran: string[] }).ran.push(name);
  next();
};

const cases: Array<[string, RequestHandler[], { status: number; body: string }]> = [
  ['runs each in order', [mark('a'), mark('b'), mark('c')], { status: 200, body: '["a","b","c"]' }],
  [
    'goes on from a middleware that calls next later',
    [mark('a'), (req, res, next) => void setImmediate(() => mark('later')(req, res, next)), mark('c')],
    { status: 200, body: '["a","later","c"]' },
  ],
  ['skips the rest on next(error)', [mark('a'), (_req, _res, next) => next(new Error('refused')), mark('c')], { status: 500, body: '{"error":"refused","ran":["a"]}' }],
  [
    'takes a synchronous throw for next(error)',
    [
      mark('a'),
      () => {
        throw new Error('thrown');
      },
      mark('c'),
    ],
    { status: 500, body: '{"error":"thrown","ran":["a"]}' },
  ],
  ['takes a rejected promise for next(error)', [mark('a'), async () => Promise.reject(new Error('rejected')), mark('c')], { status: 500, body: '{"error":"rejected","ran":["a"]}' }],
  ["goes on after next('route'), as the router does for a use() layer", [mark('a'), (_req, _res, next) => next('route'), mark('c')], { status: 200, body: '["a","c"]' }],
  [
    'stops where a middleware answers',
    [mark('a'), (_req, res) => void res.status(204).end(), mark('c')],
    { status: 204, body: '' },
  ],
];

describe('oneLayer', () => {
  for (const [what, handlers, expected] of cases) {
    it(`${what}, as the same middlewares in layers of their own do`, async () => {
      const grouped = await answerOf(true, handlers);
      expect(grouped).toEqual(expected);
      expect(await answerOf(false, handlers)).toEqual(grouped);
    });
  }
});
