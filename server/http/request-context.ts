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
  return (req: Request, res: Response, next: NextFunction) => {
    const given = req.get('x-request-id');
    req.id = given && /^[A-Za-z0-9._-]{1,64}$/.test(given) ? given : 'req_' + randomBytes(8).toString('hex');
    res.setHeader('X-Request-Id', req.id);
    const started = process.hrtime.bigint();
    res.on('close', () => {
      logger.info('request', {
        requestId: req.id,
        method: req.method,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        durationMs: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        userId: req.user?.id,
        completed: res.writableFinished,
      });
    });
    next();
  };
}
