/**
 * Gives every request an id (kept from a well-formed X-Request-Id, otherwise
 * new), sends it back in X-Request-Id, and logs one line per request through
 * pino when the response is done: method, path, status, duration, user, and
 * for a 5xx the error with its stack (`res.err`, set by the problem handler).
 *
 * Not pino-http: it builds a child logger and serialises the request and
 * response objects for every request, which cost a quarter of the API's
 * throughput on small reads (measured in bench/README.md). This writes the
 * same line with one pino call, and nothing in the server needs `req.log`.
 */
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../lib/logger.ts';
import type { Operation } from '../../generated/operations.ts';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      /** The operation this API request was matched to, once (http/route.ts); absent outside /api/v1. */
      operation?: Operation;
      /** Its path parameters, decoded (http/route.ts); Express resets req.params per layer, this stays. */
      pathParams?: Record<string, string>;
      user?: { id: string; email: string };
      /** How `user` was authenticated (server/http/auth.ts). */
      auth?: {
        kind: 'session' | 'token';
        sessionId?: string;
        tokenId?: string;
        /** For an OAuth access token: the app (its client id) it was issued to. What the app makes is its own (issue 28). */
        appId?: string;
        /** For an OAuth access token: the grant it was issued under; what the app made through it ends with it. */
        grantId?: string;
        /** How the session's person signed in (password, passkey, oidc…). */
        method?: string;
        /** The scopes the credential holds; a session holds every scope. */
        scopes: readonly string[] | 'all';
        /** When the person signed in (a session), or when the token was checked. */
        timeAuthenticated: number;
      };
    }
    interface Response {
      /** The error a 500 was answered for, logged with the request's line. */
      err?: Error;
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

/** The URL up to its `?`: one slice, not split's array of every part. */
function withoutQuery(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function requestContext(logger: Logger) {
  const nextId = requestIds();
  return (req: Request, res: Response, next: NextFunction) => {
    req.id = nextId(req.headers['x-request-id']);
    res.setHeader('X-Request-Id', req.id);
    const started = performance.now();
    // 'close' also fires for responses cut short (a dropped upload or download), which 'finish' would miss.
    res.on('close', () => {
      const failed = res.err !== undefined || res.statusCode >= 500;
      if (!logger.enabled(failed ? 'error' : 'info')) return;
      const line = {
        requestId: req.id,
        method: req.method,
        // Without the query: signed URLs carry their signature there.
        path: withoutQuery(req.originalUrl),
        status: res.statusCode,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        userId: req.user?.id,
        // False for responses cut short.
        completed: res.writableFinished,
      };
      if (failed) logger.error('request', { ...line, err: res.err });
      else logger.info('request', line);
    });
    next();
  };
}
