/**
 * The routes of the studio (web/studio/): each of its paths answers the same
 * shell, with the pages' security headers, and the app draws the page the
 * path names through the API. A signed-out visit goes to /signin first
 * (303), as the account pages do; the API alone decides what anyone may
 * read or change, so this only spares a page that would have nothing to show.
 */
import { Router, type Request, type Response } from 'express';
import type { Context } from '../context.ts';
import { signedInUser } from './account-pages.ts';
import { sendPage } from './page-security.ts';
import { renderStudio } from './studio-shell.ts';

/** The studio's paths (Express 5 path syntax); the app's router (web/studio/router.tsx) knows the same ones. */
export const STUDIO_PATHS = ['/', '/projects/:projectid', '/links', '/links/:playerid', '/inbox', '/settings', '/admin'] as const;

export function studioPageRoutes(ctx: Pick<Context, 'config' | 'store' | 'clock' | 'blobs'>): Router {
  const router = Router();
  const page = async (req: Request, res: Response) => {
    // Read per request: a server that listens on port 0 learns its PUBLIC_URL once it listens.
    const basePath = new URL(ctx.config.publicUrl.replace(/\/+$/, '')).pathname.replace(/\/+$/, '');
    if (!(await signedInUser(ctx, req))) {
      res.setHeader('Cache-Control', 'private, no-store');
      return void res.redirect(303, `${basePath}/signin`);
    }
    // Artwork may come from the bucket (an S3 store's redirect): the policy allows that origin for images and media.
    sendPage(res, 200, renderStudio({ basePath }), { bucketOrigin: ctx.blobs.directOrigin });
  };
  for (const path of STUDIO_PATHS) router.get(path, page);
  return router;
}
