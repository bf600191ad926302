/**
 * The pages a playerUrl opens: /p/{playerid}, the full player, and
 * /embed/{playerid}, the compact one for iframes on other sites. Both are
 * the same bundled app (web/player/) in a server-rendered shell; the app
 * reads the player through the API like any other client, so these routes
 * hold no access rule: who may see what is the API's answer alone
 * (server/resources/listening/listener.ts and the access policy).
 */
import { Router, type Request, type Response } from 'express';
import type { Context } from '../context.ts';
import { playerPreview } from '../resources/listening/preview-service.ts';
import { assetRoutes } from './page-assets.ts';
import { sendPage } from './page-security.ts';
import { renderShell } from './page-shell.ts';
import { renderPortal } from './portal-shell.ts';
import { openPortal } from '../resources/portal/portal-service.ts';
import { HttpProblem } from '../lib/problems.ts';

export function playerPageRoutes(ctx: Pick<Context, 'store' | 'clock' | 'config' | 'signer' | 'blobs'>): Router {
  const router = Router();
  router.use(assetRoutes());

  const page = (embed: boolean) => async (req: Request<{ playerid: string }>, res: Response) => {
    // Read per request: a server that listens on port 0 learns its PUBLIC_URL once it listens.
    const publicUrl = ctx.config.publicUrl.replace(/\/+$/, '');
    // The path PUBLIC_URL may carry (a server behind a prefix), without a trailing slash; '' at the root.
    const basePath = new URL(publicUrl).pathname.replace(/\/+$/, '');
    const playerId = req.params.playerid;
    const preview = await playerPreview(ctx, playerId);
    // The full page links to the player's upload portal when it is open; the compact one stays a player.
    const portalOpen = !embed && preview.status === 200 && (await openPortal(ctx, playerId).then(() => true, () => false));
    const portalUrl = portalOpen ? `${basePath}/u/${encodeURIComponent(playerId)}` : undefined;
    sendPage(res, preview.status, renderShell({ basePath, publicUrl, playerId, embed, preview, portalUrl }), { embed, bucketOrigin: ctx.blobs.directOrigin });
  };
  router.get('/p/:playerid', page(false));
  router.get('/embed/:playerid', page(true));

  // The upload portal's page: open, the form; closed, missing or expired, a page that says so with its status (404, 410) and takes nothing.
  router.get('/u/:playerid', async (req: Request<{ playerid: string }>, res: Response) => {
    const basePath = new URL(ctx.config.publicUrl.replace(/\/+$/, '')).pathname.replace(/\/+$/, '');
    const playerId = req.params.playerid;
    try {
      const player = await openPortal(ctx, playerId);
      const owner = await ctx.store.users.get(player.ownerId);
      sendPage(res, 200, renderPortal({ basePath, playerId, open: player.upload ?? {}, recipient: { playerName: player.name, ownerName: owner?.name } }));
    } catch (error) {
      if (!(error instanceof HttpProblem)) throw error;
      const closedReason = error.status === 410 ? `${error.detail}` : undefined;
      sendPage(res, error.status, renderPortal({ basePath, playerId, closedReason }));
    }
  });
  return router;
}
