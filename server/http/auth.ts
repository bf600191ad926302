/**
 * Bearer authentication (interface section 5: "Requests to the service's
 * endpoints carry an Authorization header with the scheme Bearer followed by
 * <ACCESS_TOKEN>"). What each operation needs is read from the spec's
 * `security`, not from a list of paths here:
 * - `bearerAuth` required (the default): no token, 401;
 * - `bearerAuth` beside `{}` (the listener operations, open to anyone with a
 *   player link): a token is checked when one is sent, and a bad one is
 *   still 401, so a client learns its token is wrong;
 * - no `bearerAuth` at all (the signed URLs, whose signature is their
 *   authority; the player session, whose credential is its cookie): the
 *   header is not looked at.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { NextFunction, Request, Response } from 'express';
import { HttpProblem } from './problem.ts';

type BearerNeed = 'required' | 'optional' | 'ignored';
type SecurityRequirement = Record<string, string[]>;
interface SpecOperation {
  security?: SecurityRequirement[];
}

const specFile = resolve(import.meta.dirname, '../../generated/openapi.json');

/** Each operation's need of a bearer token, by method and path pattern (under /api/v1), from the bundled spec. */
export function bearerNeeds(spec: { security?: SecurityRequirement[]; paths: Record<string, Record<string, unknown>> }) {
  const routes: Array<{ method: string; pattern: RegExp; need: BearerNeed }> = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'delete', 'patch', 'head'].includes(method)) continue;
      // OpenAPI, Operation Object `security`: "This definition overrides any declared top-level security."
      // Security Requirement Object: "To make security optional, an empty security requirement ({}) can be included in the array."

      const security = (operation as SpecOperation).security ?? spec.security ?? [];
      const bearer = security.some((requirement) => 'bearerAuth' in requirement);
      const anonymous = security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
      const need: BearerNeed = !bearer ? 'ignored' : anonymous ? 'optional' : 'required';
      routes.push({ method: method.toUpperCase(), pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`), need });
    }
  }
  return (method: string, path: string): BearerNeed =>
    routes.find((route) => route.method === (method === 'HEAD' ? 'GET' : method) && route.pattern.test(path))?.need ?? 'required';
}

let needsOfSpec: ReturnType<typeof bearerNeeds> | undefined;
const needOf = (method: string, path: string) => {
  needsOfSpec ??= bearerNeeds(JSON.parse(readFileSync(specFile, 'utf8')));
  return needsOfSpec(method, path);
};

/** What a 401 tells the caller to do, on a server whose tokens are minted by its admin CLI. */
export const MINT_A_TOKEN = 'Create a token with: npm run --silent admin -- token create --email you@example.com';

/**
 * `accountOfUnknownToken`: only in the sandbox (resources/sandbox), the
 * account a token nobody has seen gets; elsewhere such a token is a 401.
 * `howToGetOne` ends every 401's detail: where a token comes from here
 * (the mock and the sandbox take any).
 */
/** The one query bearer authentication needs: the account a token belongs to, while it is not revoked. */
export interface TokenOwners {
  tokens: { findActiveUser(secret: string): Promise<{ id: string; email: string } | undefined> };
}

export function bearerAuth(
  store: TokenOwners,
  isPublicPath: (path: string) => boolean,
  {
    accountOfUnknownToken = async () => undefined,
    howToGetOne = MINT_A_TOKEN,
  }: { accountOfUnknownToken?: (token: string) => Promise<{ id: string; email: string } | undefined>; howToGetOne?: string } = {},
) {
  return async (req: Request, _res: Response, next: NextFunction) => {
    if (req.method === 'OPTIONS' || isPublicPath(req.path)) return next();
    const need = needOf(req.method, req.path);
    if (need === 'ignored') return next();
    const header = req.get('authorization');
    if (!header && need === 'optional') return next();
    if (!header) {
      return next(unauthorized(`Send an Authorization header of the form "Bearer <token>". ${howToGetOne}`, false));
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return next(unauthorized(`The Authorization header must be "Bearer <token>". ${howToGetOne}`, true));
    try {
      const user = (await store.tokens.findActiveUser(match[1])) ?? (await accountOfUnknownToken(match[1]));
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
  return new HttpProblem('unauthorized', detail, {
    headers: { 'WWW-Authenticate': tokenSent ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"' },
  });
}
