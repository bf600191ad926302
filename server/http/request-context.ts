/**
 * Gives every request an id (kept from a well-formed X-Request-Id, otherwise
 * new), sends it back in X-Request-Id, and logs one line per request when
 * the response is done: method, path, status, duration, user.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from './logger.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      user?: { id: string; email: string };
    }
  }
}

export function requestContext(logger: Logger) {
  // A random prefix per process and a counter: unique across processes and
  // restarts, without asking the system for random bytes on every request.
  const prefix = 'req_' + randomBytes(5).toString('hex');
  let counter = 0;
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    req.id = given && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : prefix + (counter++).toString(16).padStart(6, '0');
    res.setHeader('X-Request-Id', req.id);
    if (logger.enabled('info')) {
      const started = performance.now();
      // 'close' also fires for responses cut short (a dropped upload), which 'finish' would miss.
      res.once('close', () => {
        logger.info('request', {
          requestId: req.id,
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
          userId: req.user?.id,
          completed: res.writableFinished,
        });
      });
    }
    next();
  };
}
