/**
 * Bearer authentication (interface section 5: "Requests to the service's
 * endpoints carry an Authorization header with the scheme Bearer followed by
 * <ACCESS_TOKEN>"). The signed-URL routes are exempt: their signature is
 * their authority.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Store } from '../repositories.ts';
import { HttpProblem } from './problem.ts';

const howToGetOne = 'Create a token with: npm run --silent admin -- token create --email you@example.com';

export function bearerAuth(store: Store, isPublicPath: (path: string) => boolean) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    if (req.method === 'OPTIONS' || isPublicPath(req.path)) return next();
    const header = req.get('authorization');
    if (!header) {
      return next(unauthorized(`Send an Authorization header of the form "Bearer <token>". ${howToGetOne}`, false));
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return next(unauthorized(`The Authorization header must be "Bearer <token>". ${howToGetOne}`, true));
    try {
      const user = await store.tokens.findActiveUser(match[1]);
      if (!user) return next(unauthorized(`The bearer token is unknown or revoked. ${howToGetOne}`, true));
      req.user = user;
      next();
    } catch (error) {
      next(error);
    }
  };
}

function unauthorized(detail: string, tokenSent: boolean) {
  // RFC 6750 section 3: a 401 carries WWW-Authenticate, with error="invalid_token" when a token was sent.
  return new HttpProblem(401, 'unauthorized', detail, {
    headers: { 'WWW-Authenticate': tokenSent ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"' },
  });
}
