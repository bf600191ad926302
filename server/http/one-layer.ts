/**
 * Several middlewares as one layer of Express. Express's router costs every
 * layer a request passes (matching its path, its params, restoring the URL:
 * about half a microsecond a layer on the bench's machine, issue 32), and
 * the API's small reads pass a dozen that do nothing for them; grouped, the
 * middlewares every request passes anyway cost one layer's worth.
 *
 * Each runs as it would as a layer of its own, in order: `next()` runs the
 * next one, `next(error)` skips the rest to Express's error handling, and,
 * as Express 5's router does (router's lib/layer.js handleRequest), a
 * synchronous throw is passed on as `next(error)`, as is a rejected promise
 * ("If the function returns a promise, it will be awaited and if the promise
 * is rejected, next(error) is called", Express 5's migration guide).
 * `next('route')` from a middleware mounted with use() goes on to the next
 * layer in the router (it names no route to skip), and so it goes on to the
 * next middleware here; `next('router')` leaves the router, and is passed on.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function oneLayer(...handlers: RequestHandler[]): RequestHandler {
  if (handlers.length === 1) return handlers[0];
  return (req: Request, res: Response, next: NextFunction) => {
    let index = 0;
    const step = (outcome?: unknown) => {
      // The router's own test (router/index.js): a falsy value, or nothing, goes on; anything else is an error or a signal.
      if (outcome && outcome !== 'route') return next(outcome);
      const handler = handlers[index++];
      if (handler === undefined) return next();
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.then(undefined, (error: unknown) => step(error || new Error('Rejected promise')));
      } catch (error) {
        step(error);
      }
    };
    step();
  };
}
