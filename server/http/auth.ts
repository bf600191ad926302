/**
 * Authentication: a bearer token (interface section 5: "Requests to the
 * service's endpoints carry an Authorization header with the scheme Bearer
 * followed by <ACCESS_TOKEN>") or the account's browser session cookie. What
 * each operation takes is read from the spec's `security`, not from a list
 * of paths here:
 * - `bearerAuth` (with `oauth2`, which names the scope a token needs): a
 *   token is taken; without `{}` beside it, one is required;
 * - `sessionCookie`: the session cookie is taken too, and a request that
 *   changes anything with it must come from our own origin;
 * - `{}` (the listener operations, open to anyone with a player link): a
 *   credential is checked when one is sent, and a bad token is still 401, so
 *   a client learns its token is wrong;
 * - none of them (the signed URLs, whose signature is their authority; the
 *   player session, whose credential is its own cookie): nothing is looked at.
 *
 * A token sent with a session cookie wins: the cookie is not looked at.
 *
 * What the operation is was decided once, by http/route.ts (`req.operation`),
 * before this runs: a request that matched no operation never gets here, so
 * no credential is ever taken for a path the API does not know.
 */
import type { NextFunction, Request, Response } from 'express';
import { parse as parseCookies } from 'cookie';
import { HttpProblem } from '../lib/problems.ts';
import { checkSameOrigin } from '../auth/same-origin.ts';
import { SESSION_COOKIE, SECURE_SESSION_COOKIE } from '../auth/session-cookie.ts';
import { scopeCovers } from '../auth/scopes.ts';
import type { OperationSecurity } from '../../generated/operations.ts';

/** What an operation takes (its row's `security`, generated/operations.ts). */
export type OperationAuth = Pick<OperationSecurity, 'token' | 'session' | 'anonymous' | 'scope'>;

/** What a 401 tells an OAuth app whose access token no longer works. */
export const REFRESH_OR_REAUTHORIZE = 'Refresh the access token with the refresh token (POST /oauth/token, grant_type=refresh_token), or send the person through authorization again.';

/**
 * What a 401 tells the caller to do, on a server whose people sign in and make their own tokens. Partners read it too
 * (issue 30: "every 401 tells a partner to run the admin CLI"): a person makes a token in Settings, an app gets one
 * from the authorization server that the challenge's resource_metadata names; the shell is the operator's, not theirs.
 */
export const MINT_A_TOKEN = 'Sign in to this server and create a personal token in Settings › Security; an app gets an OAuth access token from the authorization server named by the resource_metadata of WWW-Authenticate.';

/** Who a token acts for, and with what (the token repository's answer). */
export interface TokenHolder {
  tokenId: string;
  user: { id: string; email: string };
  /** null: every scope. */
  scopes: string[] | null;
  disabled: boolean;
  timeExpires: number | null;
  timeLastUsed: number | null;
  /**
   * The resource the token was issued for (RFC 8707), for an OAuth access token: the API's identifier, or another
   * resource's (the MCP server's). null for personal tokens, which every resource of this server takes.
   */
  audience?: string | null;
  /** For an OAuth access token: the app (client id) and the grant it was issued to; null or absent for personal tokens. */
  appId?: string | null;
  grantId?: string | null;
}

/** A browser session that is still valid, found by its cookie's secret (the session repository's answer). */
export interface SessionHolder {
  sessionId: string;
  user: { id: string; email: string };
  method: string;
  timeCreated: number;
  timeLastSeen: number;
}

/** What authentication reads: tokens, and (on a server with accounts) sessions. */
export interface Credentials {
  tokens: { findHolder(secret: string): Promise<TokenHolder | undefined>; touch?(id: string, now: number): Promise<void> };
  sessions?: { findActive(secret: string, now: number): Promise<SessionHolder | undefined>; touch(id: string, now: number): Promise<void> };
}

export interface AuthOptions {
  /**
   * What the request's operation takes: by default its row's (req.operation, set by http/route.ts). A request
   * without one is a bug of the app's wiring, refused 500 rather than let through.
   */
  securityOf?: (req: Request) => OperationAuth | undefined;
  /** Only in the sandbox (resources/sandbox): the account a token nobody has seen gets; elsewhere such a token is a 401. */
  accountOfUnknownToken?: (token: string) => Promise<{ id: string; email: string } | undefined>;
  /** Ends every 401's detail: where a token comes from here (the mock and the sandbox take any). */
  howToGetOne?: string;
  /** PUBLIC_URL's origin (read per request: a server on port 0 learns it once it listens); a session's unsafe requests must come from it. Without it, sessions are not taken. */
  publicOrigin?: (req: Request) => string;
  now?: () => number;
  /** Where a failed bookkeeping write (a token's last use) is reported; it never fails the request. */
  onBookkeepingError?: (error: unknown) => void;
  /**
   * This resource's identifier (RFC 8707), read per request: an OAuth access token issued for another resource is
   * refused here. Unset: every token is taken whatever its audience.
   */
  resource?: (req: Request) => string;
  /**
   * The URL of this resource's metadata (RFC 9728), named in every challenge: §5.1, "the resource_metadata parameter
   * ... indicates the URL of the protected resource metadata", which is how an OAuth client (an MCP client among them)
   * finds the authorization server. Read per request: the mock answers on whatever origin it was reached at.
   */
  resourceMetadata?: (req: Request) => string;
}

/** RFC 9728 §3.1: the metadata of <origin>/api/v1 is at <origin>/.well-known/oauth-protected-resource/api/v1. */
export const API_METADATA_PATH = '/.well-known/oauth-protected-resource/api/v1';

/** The URL of the API's protected resource metadata on the server at `publicUrl`. */
export const apiMetadataUrl = (publicUrl: string) => `${publicUrl.replace(/\/+$/, '')}${API_METADATA_PATH}`;

/**
 * The `WWW-Authenticate` challenge of the API's 401. RFC 6750 §3: with error="invalid_token" when a token was sent;
 * RFC 9728 §5.1: with "the resource_metadata parameter", the URL of the resource's metadata, where an OAuth client
 * finds the authorization server to get a token from.
 */
export const bearerChallenge = (tokenSent: boolean, resourceMetadata?: string) =>
  `${tokenSent ? 'Bearer realm="api", error="invalid_token"' : 'Bearer realm="api"'}${metadataParam(resourceMetadata)}`;

/**
 * How often a credential's last use is written: at most once a minute per token (or session), sparing a write per
 * request. The spec promises no more: a token's `lastUsedAt` is "When the token was last used, to the minute"
 * (openapi/schemas/tokens.yaml), a connected app's "When the app last called the API for this account, to the minute"
 * (apps.yaml). Validity is never cached: every request reads the token's row (revoked, expiry, account disabled).
 */
const TOUCH_EVERY_MS = 60_000;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function authenticate(store: Credentials, options: AuthOptions = {}) {
  const { securityOf = (req: Request) => req.operation?.security, accountOfUnknownToken = async () => undefined, howToGetOne = MINT_A_TOKEN, publicOrigin, now = Date.now, onBookkeepingError = () => {}, resource, resourceMetadata } = options;
  const unauthorized = (req: Request, detail: string, tokenSent: boolean) => unauthorizedProblem(detail, tokenSent, resourceMetadata?.(req));
  const insufficientScope = (req: Request, scope: string, held: string[], isAppToken: boolean) => insufficientScopeProblem(scope, held, resourceMetadata?.(req), isAppToken);
  const touchLater = (touch: Promise<void> | undefined) => touch?.catch(onBookkeepingError);
  return async (req: Request, _res: Response, next: NextFunction) => {
    const auth = securityOf(req);
    if (!auth) return next(new Error(`${req.method} ${req.path} reached authentication without a matched operation`));
    if (!auth.token && !auth.session) return next();
    try {
      const header = req.get('authorization');
      if (header !== undefined && auth.token) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match) throw unauthorized(req, `The Authorization header must be "Bearer <token>". ${howToGetOne}`, true);
        const at = now();
        const holder = await store.tokens.findHolder(match[1]);
        if (!holder) {
          const sandboxAccount = await accountOfUnknownToken(match[1]);
          if (!sandboxAccount) throw unauthorized(req, `The bearer token is unknown or revoked. ${howToGetOne}`, true);
          req.user = sandboxAccount;
          req.auth = { kind: 'token', scopes: 'all', timeAuthenticated: at };
          return next();
        }
        // An OAuth access token is an app's, which refreshes it or sends its person through authorization again; a
        // personal token is made again by its person.
        const isAppToken = !!holder.audience;
        if (holder.timeExpires !== null && holder.timeExpires <= at) {
          throw unauthorized(req, `The bearer token expired at ${new Date(holder.timeExpires).toISOString()}. ${isAppToken ? REFRESH_OR_REAUTHORIZE : howToGetOne}`, true);
        }
        if (holder.disabled) throw unauthorized(req, 'The account this token belongs to is disabled. Ask the server\'s administrator.', true);
        // An OAuth access token is issued for one resource (RFC 8707, its audience): a token meant for another resource
        // of this server (the MCP server) is not taken here, nor one meant for here there.
        // Read only for an OAuth access token: a personal token has no audience to compare (issue 32: a small read's cost).
        const here = holder.audience ? resource?.(req) : undefined;
        if (holder.audience && here !== undefined && holder.audience !== here) {
          throw unauthorized(req, `This access token was issued for ${holder.audience}, not for ${here}. Ask the authorization server for a token with resource=${here}.`, true);
        }
        if (auth.scope !== undefined && holder.scopes !== null && !scopeCovers(holder.scopes, auth.scope)) throw insufficientScope(req, auth.scope, holder.scopes, isAppToken);
        if (holder.timeLastUsed === null || at - holder.timeLastUsed >= TOUCH_EVERY_MS) touchLater(store.tokens.touch?.(holder.tokenId, at));
        req.user = holder.user;
        req.auth = { kind: 'token', tokenId: holder.tokenId, appId: holder.appId ?? undefined, grantId: holder.grantId ?? undefined, scopes: holder.scopes ?? 'all', timeAuthenticated: at };
        return next();
      }
      if (header !== undefined && !auth.token && auth.session && !auth.anonymous) {
        throw new HttpProblem('forbidden', `${req.method} ${req.path} needs a signed-in session, not a token: a token cannot manage tokens or sessions, so a leaked one cannot make more. Sign in to the server's pages and do it there.`);
      }
      const cookie = auth.session && store.sessions && publicOrigin !== undefined ? sessionCookieOf(req) : undefined;
      if (cookie !== undefined && store.sessions) {
        const at = now();
        const session = await store.sessions.findActive(cookie, at);
        if (session) {
          if (!SAFE_METHODS.has(req.method)) {
            const verdict = checkSameOrigin({ 'sec-fetch-site': req.get('sec-fetch-site'), origin: req.get('origin') }, publicOrigin!(req));
            // The accounts rules: "A request that changes anything and carries the cookie must come from the server's own origin
            // (Sec-Fetch-Site: same-origin, or Origin equal to PUBLIC_URL's); anything else is refused with 403 and changes nothing."
            if (!verdict.allowed) {
              throw new HttpProblem('forbidden', `This request carries your session cookie but ${verdict.reason}, so it was refused: with a session, changes are taken only from this server's own pages. Apps on other origins use a bearer token.`);
            }
          }
          if (at - session.timeLastSeen >= TOUCH_EVERY_MS) touchLater(store.sessions.touch(session.sessionId, at));
          req.user = session.user;
          req.auth = { kind: 'session', sessionId: session.sessionId, method: session.method, scopes: 'all', timeAuthenticated: session.timeCreated };
          return next();
        }
        if (!auth.anonymous) throw unauthorized(req, 'Your session has ended (it was signed out, or expired). Sign in again.', false);
      }
      if (auth.anonymous) return next();
      if (!auth.token) throw unauthorized(req, 'Sign in first: this needs a signed-in session.', false);
      throw unauthorized(req, `Send an Authorization header of the form "Bearer <token>". ${howToGetOne}`, false);
    } catch (error) {
      next(error);
    }
  };
}

/** The session cookie's value: the `__Host-` one (set under https) first. */
function sessionCookieOf(req: Request): string | undefined {
  const header = req.headers.cookie;
  // Most API requests carry no session cookie: they are not parsed at all.
  if (!header?.includes(SESSION_COOKIE)) return undefined;
  const cookies = parseCookies(header);
  return cookies[SECURE_SESSION_COOKIE] ?? cookies[SESSION_COOKIE];
}

const metadataParam = (url: string | undefined) => (url ? `, resource_metadata="${url}"` : '');

function unauthorizedProblem(detail: string, tokenSent: boolean, resourceMetadata: string | undefined) {
  return new HttpProblem('unauthorized', detail, { headers: { 'WWW-Authenticate': bearerChallenge(tokenSent, resourceMetadata) } });
}

function insufficientScopeProblem(scope: string, held: string[], resourceMetadata: string | undefined, isAppToken: boolean) {
  // RFC 6750 section 3.1: insufficient_scope: "The request requires higher privileges than provided by the access token.
  // The resource server SHOULD respond with the HTTP 403 (Forbidden) status code and MAY include the "scope" attribute
  // with the scope necessary to access the protected resource."
  return new HttpProblem('insufficient-scope', `This token lacks the scope ${scope}, which this operation needs. It holds: ${held.join(', ') || 'no scope'}. ${
    isAppToken ? `Send the person through authorization again with scope=${scope} added to the scopes the app asks for.` : `Create a token with ${scope} in Settings.`
  }`, {
    headers: { 'WWW-Authenticate': `Bearer realm="api", error="insufficient_scope", scope="${scope}"${metadataParam(resourceMetadata)}` },
    members: { scope },
  });
}
