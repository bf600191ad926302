/**
 * The routes of the account pages: /setup, /signup, /signin,
 * /reset-password, /verify-email, /settings, and the signed-in home at /.
 * Each answers its shell (account-shell.ts) with the pages' security
 * headers (page-security.ts); the bundled app (web/account/) does the rest
 * through the API, like any client.
 *
 * Who is signed in: when `signedInUser` is given (the session cookie's
 * lookup), the server sends a signed-out visit to / or /settings to
 * /signin, and a signed-in visit to /signin to /, before any page is drawn.
 * Without it the app finds out from GET /me and goes there itself; either
 * way the API alone decides what anyone may read or change.
 */
import { Router, type Request, type Response } from 'express';
import type { Context } from '../context.ts';
import { renderAccountPage, SIGNED_IN_PAGES, type AccountPage } from './account-shell.ts';
import { sendPage } from './page-security.ts';

export interface AccountPageOptions {
  /** The account the request's session cookie belongs to, if any. */
  signedInUser?: (req: Request) => Promise<{ id: string } | undefined>;
}

const PATHS: Array<[string, AccountPage]> = [
  ['/setup', 'setup'],
  ['/signup', 'signup'],
  ['/signin', 'signin'],
  ['/reset-password', 'reset-password'],
  ['/verify-email', 'verify-email'],
  ['/settings', 'settings'],
  ['/', 'home'],
];

/** A query parameter given once, as a string of a sane length; anything else counts as absent. */
function oneParameter(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' && value.length > 0 && value.length <= 2048 ? value : undefined;
}

export function accountPageRoutes(ctx: Pick<Context, 'config'>, { signedInUser }: AccountPageOptions = {}): Router {
  const router = Router();
  for (const [path, page] of PATHS) {
    router.get(path, async (req: Request, res: Response) => {
      // Read per request: a server that listens on port 0 learns its PUBLIC_URL once it listens.
      const basePath = new URL(ctx.config.publicUrl.replace(/\/+$/, '')).pathname.replace(/\/+$/, '');
      if (signedInUser) {
        const user = await signedInUser(req);
        // 303: see the other page; the browser follows with a GET whatever the first request was.
        if (!user && SIGNED_IN_PAGES.has(page)) return void res.redirect(303, `${basePath}/signin`);
        if (user && page === 'signin') return void res.redirect(303, `${basePath}/`);
      }
      const html = renderAccountPage({ basePath, page, invite: oneParameter(req, 'invite'), withToken: oneParameter(req, 'token') !== undefined });
      sendPage(res, 200, html);
    });
  }
  return router;
}
