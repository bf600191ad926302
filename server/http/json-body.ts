/**
 * The JSON body parser of the API (body-parser, through express.json), run
 * after authentication: an anonymous caller's body is never read, let alone
 * inflated and parsed. Requests without a Content-Type skip it (GETs and the
 * signed uploads, whose bodies are streamed by their handlers).
 *
 * body-parser inflates gzip, deflate and br bodies, and refuses one that
 * inflates past the limit with 413. A body that does not decode as its
 * Content-Encoding says (a lie, or truncated) is the client's fault: it
 * reaches us as zlib's error with no body-parser `type`, and is answered 400
 * here instead of falling through to 500.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { HttpProblem } from '../lib/problems.ts';
import { refuseNulInBody } from './nul-characters.ts';

export const jsonBodyLimit = '1mb';

/** Paths (under the API root) whose handlers need the exact bytes of the body: a webhook's signature is over them, not over the parsed JSON. */
const RAW_BODY_PATHS = new Set(['/payments/stripe/webhook']);
const rawBodies = new WeakMap<Request, Buffer>();

/** The body's bytes as received (after Content-Encoding), on a path that keeps them. */
export const rawBodyOf = (req: Request): Buffer | undefined => rawBodies.get(req);

export function jsonBody() {
  const parse = express.json({
    limit: jsonBodyLimit,
    type: ['application/json', 'application/*+json'],
    // body-parser's verify gets "the Buffer of the raw request body" before it is parsed.
    verify: (req, _res, buffer) => {
      if (RAW_BODY_PATHS.has((req as Request).path)) rawBodies.set(req as Request, buffer);
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.headers['content-type'] === undefined) return next();
    parse(req, res, (error?: unknown) => {
      if (error) return next(isUndecodable(error, req) ? undecodable(req) : error);
      // This callback runs from the body stream's events: anything thrown here would be uncaught and end the process.
      try {
        refuseNulInBody(req, res, next);
      } catch (failure) {
        next(failure);
      }
    });
  };
}

/**
 * body-parser and raw-body mark their own failures with a `type`
 * (entity.parse.failed, entity.too.large, request.aborted, …); the error of
 * the decompression stream, which body-parser passes on as a 400, has none.
 */
function isUndecodable(error: unknown, req: Request): boolean {
  const failure = error as { type?: string; status?: number };
  const encoding = (req.get('content-encoding') ?? 'identity').toLowerCase();
  return failure.type === undefined && failure.status === 400 && encoding !== 'identity';
}

function undecodable(req: Request): HttpProblem {
  const encoding = req.get('content-encoding') ?? 'identity';
  return new HttpProblem('validation-error', `The body does not decode as its Content-Encoding (${encoding}) says. Send it compressed as declared, or without Content-Encoding.`, {
    errors: [{ header: 'content-encoding', detail: `the body is not valid ${encoding} data` }],
  });
}
