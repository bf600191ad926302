/**
 * The pages a playerUrl opens: /p/{playerid}, the full player, and
 * /embed/{playerid}, the compact one for iframes on other sites. Both are
 * the same bundled app (web/player/) in a server-rendered shell; the app
 * reads the player through the API like any other client, so these routes
 * hold no access rule: who may see what is the API's answer alone
 * (server/resources/listening/listener.ts and the access policy).
 */
import { Router, type Request, type Response } from 'express';
import type { Context } from '../server/context.ts';
import { playerPreview } from '../server/resources/listening/preview-service.ts';
import { assetRoutes } from './page-assets.ts';
import { sendPage } from './page-security.ts';
import { renderShell } from './page-shell.ts';

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
    sendPage(res, preview.status, renderShell({ basePath, publicUrl, playerId, embed, preview }), { embed, bucketOrigin: ctx.blobs.directOrigin });
  };
  router.get('/p/:playerid', page(false));
  router.get('/embed/:playerid', page(true));
  return router;
}
