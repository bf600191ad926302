/**
 * Gives every request an id (kept from a well-formed X-Request-Id, otherwise
 * new), sends it back in X-Request-Id, and logs one line per request with
 * pino-http when the response is done: method, path, status, duration,
 * user, and for a 5xx the error with its stack. `req.log` is a child logger
 * whose lines carry the request id.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { pinoHttp } from 'pino-http';
import { pinoOf, type Logger } from '../lib/logger.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      user?: { id: string; email: string };
    }
  }
}

const wellFormedId = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Request ids: a random prefix per process and a counter, unique across
 * processes and restarts without asking the system for random bytes on every
 * request.
 */
export function requestIds(): (given?: string | string[]) => string {
  const prefix = 'req_' + randomBytes(5).toString('hex');
  let counter = 0;
  return (given) => (typeof given === 'string' && wellFormedId.test(given) ? given : prefix + (counter++).toString(16).padStart(6, '0'));
}

export function requestContext(logger: Logger) {
  const nextId = requestIds();
  const line = (req: IncomingMessage, res: ServerResponse, durationMs: number) => ({
    method: req.method,
    // Without the query: signed URLs carry their signature there.
    path: (req as Request).originalUrl?.split('?')[0] ?? req.url?.split('?')[0],
    status: res.statusCode,
    durationMs,
    userId: (req as Request).user?.id,
    // False for responses cut short (a dropped upload or download).
    completed: res.writableFinished,
  });
  return pinoHttp({
    logger: pinoOf(logger),
    genReqId: (req, res) => {
      const id = nextId(req.headers['x-request-id']);
      res.setHeader('X-Request-Id', id);
      return id;
    },
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    customLogLevel: (_req, res, error) => (error || res.err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: (req, res, value: { durationMs: number }) => line(req, res, value.durationMs),
    // res.err is the error the problem handler answered 500 for; pino-http falls back to one of its own.
    customErrorObject: (req, res, error, value: { durationMs: number }) => ({ ...line(req, res, value.durationMs), err: res.err ?? error }),
  });
}
