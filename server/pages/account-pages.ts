/**
 * The routes of the account pages, the signed-out ones: /setup, /signup,
 * /signin, /reset-password and /verify-email (the signed-in home at / and
 * the settings at /settings are the studio's: studio-pages.ts).
 * Each answers its shell (account-shell.ts) with the pages' security
 * headers (page-security.ts); the bundled app (web/account/) does the rest
 * through the API, like any client.
 *
 * Who is signed in is the session cookie's business: the server sends a
 * signed-in visit to /signin to /, before any page is drawn (the studio's
 * routes send a signed-out visit to /signin). Either way the API alone
 * decides what anyone may read or change: these redirects only spare a
 * page that would have nothing to show.
 */
import { parse } from 'cookie';
import { Router, type Request, type Response } from 'express';
import type { Context } from '../context.ts';
import { sessionCookieName } from '../auth/session-cookie.ts';
import { renderAccountPage, type AccountPage } from './account-shell.ts';
import { sendPage } from './page-security.ts';

type Ports = Pick<Context, 'config' | 'store' | 'clock'>;

/** The account whose live session the request's cookie carries, if any. */
export async function signedInUser(ctx: Ports, req: Request): Promise<{ id: string } | undefined> {
  const secret = parse(req.get('cookie') ?? '')[sessionCookieName(ctx.config.publicUrl)];
  if (!secret) return undefined;
  const session = await ctx.store.sessions.findActive(secret, ctx.clock.now(), ctx.config.sessions);
  return session?.user;
}

const PATHS: Array<[string, AccountPage]> = [
  ['/setup', 'setup'],
  ['/signup', 'signup'],
  ['/signin', 'signin'],
  ['/reset-password', 'reset-password'],
  ['/verify-email', 'verify-email'],
];

/** A query parameter given once, as a string of a sane length; anything else counts as absent. */
function oneParameter(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 2048 ? value : undefined;
}

export function accountPageRoutes(ctx: Ports): Router {
  const router = Router();
  for (const [path, page] of PATHS) {
    router.get(path, async (req: Request, res: Response) => {
      // Read per request: a server that listens on port 0 learns its PUBLIC_URL once it listens.
      const basePath = new URL(ctx.config.publicUrl.replace(/\/+$/, '')).pathname.replace(/\/+$/, '');
      if (page === 'signin' && (await signedInUser(ctx, req))) {
        // 303 See Other: the browser follows with a GET; no-store, as the answer depends on the cookie. Back to an app's
        // consent page when it sent the person here (the same rule as the page's own, web/account/signed-out.ts).
        res.setHeader('Cache-Control', 'private, no-store');
        const next = oneParameter(req, 'next');
        const back = next?.startsWith(`${basePath}/oauth/interaction/`) && /^[A-Za-z0-9/_-]+$/.test(next) ? next : `${basePath}/`;
        return void res.redirect(303, back);
      }
      const html = renderAccountPage({
        basePath,
        page,
        invite: oneParameter(req, 'invite'),
        withToken: oneParameter(req, 'token') !== undefined,
        registration: ctx.config.registration,
      });
      sendPage(res, 200, html);
    });
  }
  return router;
}
