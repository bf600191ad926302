/**
 * Single sign-on's two page routes (browser navigations, not API calls):
 *
 * - GET /auth/oidc/start: begins a round trip to the OpenID provider (the
 *   sign-in page's button "Sign in with <OIDC_NAME>"; /signup's passes its
 *   `invite`). What the way back must find again is kept in the database
 *   (any process may get the callback), under the hash of the round trip's
 *   state; the state itself goes to the provider and into a short-lived
 *   cookie of this browser, so that only the browser that began a round
 *   trip can finish it. A `next` (the consent page that sent the person to
 *   /signin) is kept with it, only when it is a path sign-in may return to
 *   (web/account/next-path.ts), and the way back lands there instead of /.
 *   RFC 6749, section 10.12: the client "MUST implement
 *   CSRF protection for its redirection URI … typically accomplished by
 *   requiring any request sent to the redirection URI endpoint to include a
 *   value that binds the request to the user-agent's authenticated state".
 *   Without that binding, anyone could send a victim a callback link made
 *   with the attacker's own code and sign the victim in as the attacker.
 * - GET /auth/oidc/callback: the provider sends the browser back here. The
 *   state is checked against the cookie and taken out of the database (used
 *   once), the code exchanged (openid-client checks PKCE, the ID token and
 *   its nonce), and the identity signs in (sso-service.ts) with a new
 *   session; the browser lands on `next`, or /. Anything else lands on
 *   /signin?error=<code> (with the `next`, to try again), whose page says what happened
 *   (web/account/sso-errors.ts): never a 500 page for a provider's refusal.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import { Router, type Request, type Response } from 'express';
import type { Context } from '../../context.ts';
import { createOidcClient, OidcError, type OidcClient } from '../../auth/oidc-client.ts';
import { SECURE_SESSION_COOKIE, SESSION_COOKIE } from '../../auth/session-cookie.ts';
import type { SsoErrorCode } from '../../../shared/sso-errors.ts';
import { requestFacts, sendReply } from '../../http/request-facts.ts';
import { startSession } from '../sessions/session-service.ts';
import { accountForIdentity } from './sso-service.ts';
import { safeNext } from '../../../shared/next-path.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger'>;

/** How long a round trip may take, from the button to the way back: a person typing a password and a second factor at the provider. */
export const ROUND_TRIP_MS = 10 * 60 * 1000;

const isHttps = (publicUrl: string) => publicUrl.startsWith('https:');
/** RFC 6265bis, 4.1.3.2: under https the `__Host-` prefix, so no sibling subdomain or plain-http page can plant it. */
const cookieName = (publicUrl: string) => (isHttps(publicUrl) ? '__Host-as_oidc' : 'as_oidc');

/** The round trip is kept under this; the state alone (in the browser and the URL) finds it. */
const challengeId = (state: string) => createHash('sha256').update(state).digest('base64url');

/** An invitation, as /signup carries it: bounded, so that a long one costs nothing to keep. */
const invitePattern = /^[A-Za-z0-9._~-]{1,512}$/;

export function oidcRoutes(ctx: Ports, options: { client?: OidcClient } = {}): Router {
  const router = Router();
  const settings = ctx.config.oidc;
  if (!settings) return router;
  const oidc = options.client ?? createOidcClient(settings);

  // Read per request: a server that listens on port 0 learns its PUBLIC_URL once it listens.
  const publicUrl = () => ctx.config.publicUrl.replace(/\/+$/, '');
  const basePath = () => new URL(publicUrl()).pathname.replace(/\/+$/, '');
  const redirectUri = () => `${publicUrl()}/auth/oidc/callback`;

  /** Back to /signin saying what happened; with the `next` the round trip carried, so that trying again still returns there. */
  const back = (res: Response, error: SsoErrorCode, next?: string) => {
    res.setHeader('Cache-Control', 'no-store');
    const kept = safeNext(basePath(), next);
    res.redirect(302, `${basePath()}/signin?error=${error}${kept ? `&next=${encodeURIComponent(kept)}` : ''}`);
  };

  router.get('/auth/oidc/start', async (req: Request, res: Response) => {
    const invite = typeof req.query.invite === 'string' && invitePattern.test(req.query.invite) ? req.query.invite : undefined;
    // Only a path sign-in may return to (an app's consent page on this server); any other `next` is dropped, not refused.
    const next = safeNext(basePath(), typeof req.query.next === 'string' ? req.query.next : undefined);
    let trip: Awaited<ReturnType<OidcClient['begin']>>;
    try {
      trip = await oidc.begin(redirectUri());
    } catch (error) {
      ctx.logger.warn('single sign-on could not begin', { err: error });
      return back(res, 'sso-unavailable', next);
    }
    const now = ctx.clock.now();
    // Round trips never finished are forgotten as new ones begin: the table holds only those under way.
    await ctx.store.sso.sweepChallenges(now);
    await ctx.store.sso.saveChallenge(
      challengeId(trip.state),
      { nonce: trip.nonce, codeVerifier: trip.codeVerifier, ...(invite ? { invite } : {}), ...(next ? { next } : {}) },
      now + ROUND_TRIP_MS,
    );
    res.append(
      'Set-Cookie',
      // Lax: the provider sends the browser back with a top-level GET from its own site, which Lax cookies go with.
      serializeCookie(cookieName(publicUrl()), trip.state, { httpOnly: true, sameSite: 'lax', secure: isHttps(publicUrl()), path: '/', maxAge: ROUND_TRIP_MS / 1000 }),
    );
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, trip.url.href);
  });

  router.get('/auth/oidc/callback', async (req: Request, res: Response) => {
    // The round trip's cookie is spent, whatever happens next.
    res.append('Set-Cookie', serializeCookie(cookieName(publicUrl()), '', { httpOnly: true, sameSite: 'lax', secure: isHttps(publicUrl()), path: '/', maxAge: 0 }));
    // The URL the provider sent the browser to, on PUBLIC_URL: the redirect URI the code was issued for, with the provider's answer.
    const callbackUrl = new URL(redirectUri());
    callbackUrl.search = new URL(req.originalUrl, 'http://callback.invalid').search;
    const state = callbackUrl.searchParams.get('state');
    const cookie = parseCookies(req.headers.cookie ?? '')[cookieName(publicUrl())];
    if (!state || !cookie || !sameText(state, cookie)) return back(res, 'sso-expired');
    const challenge = await ctx.store.sso.takeChallenge(challengeId(state), ctx.clock.now());
    if (!challenge) return back(res, 'sso-expired');

    let identity: Awaited<ReturnType<OidcClient['finish']>>;
    try {
      identity = await oidc.finish(callbackUrl, { state, nonce: challenge.nonce, codeVerifier: challenge.codeVerifier });
    } catch (error) {
      if (!(error instanceof OidcError)) throw error;
      ctx.logger.warn('single sign-on failed', { err: error, reason: error.reason, providerError: error.providerError });
      if (error.reason === 'unavailable') return back(res, 'sso-unavailable', challenge.next);
      if (error.reason === 'refused') return back(res, error.providerError === 'access_denied' ? 'sso-cancelled' : 'sso-refused', challenge.next);
      return back(res, 'sso-failed', challenge.next);
    }

    const facts = requestFacts(req);
    const outcome = await accountForIdentity(ctx, facts, identity, { invite: challenge.invite });
    if (outcome.error !== undefined) return back(res, outcome.error, challenge.next);
    await endCarriedSession(ctx, req);
    sendReply(res, await startSession(ctx, facts, outcome.userId, 'oidc'));
    // Checked again on the way out, as on the way in: what the database gives back is held to the same rule.
    res.redirect(302, safeNext(basePath(), challenge.next) ?? `${basePath()}/`);
  });

  return router;
}

/**
 * Ends the session the browser carried, if any: a sign-in always replaces
 * the session (session-service.ts), and these routes are outside the API,
 * whose authentication would have found it for startSession.
 */
async function endCarriedSession(ctx: Ports, req: Request): Promise<void> {
  const cookies = parseCookies(req.headers.cookie ?? '');
  const secret = cookies[SECURE_SESSION_COOKIE] ?? cookies[SESSION_COOKIE];
  if (!secret) return;
  const session = await ctx.store.sessions.findActive(secret, ctx.clock.now(), ctx.config.sessions);
  if (session) await ctx.store.sessions.delete(session.user.id, session.sessionId);
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
}
