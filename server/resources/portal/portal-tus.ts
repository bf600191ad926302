/**
 * The upload portal's resumable uploads: tus 1.0.0 (https://tus.io/protocols/resumable-upload)
 * through @tus/server, under /api/v1/portal/{playerid}/tus. Mounted before
 * the API's bearer authentication and request validator: a portal's
 * uploader has no token, and PATCH bodies (application/offset+octet-stream)
 * must stream to disk unparsed.
 *
 * The protocol is tus/tus-routes.ts's, shared with project members'
 * uploads; this file says what is the portal's: the portal must be open, an
 * upload must be this portal's, and creations are rate limited per client
 * address. The rules of a new upload (sizes, types, quota) are
 * portal-service.ts's. While a PATCH streams, the portal is read again every
 * second: closing it cuts the PATCH.
 *
 * The bytes go to DATA_DIR/portal-uploads (@tus/file-store) while they
 * arrive, and into the blob store (disk or S3) once complete.
 */
import type { Request } from 'express';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Context } from '../../context.ts';
import { apiRoot } from '../../lib/api-root.ts';
import { HttpProblem, notFound } from '../../lib/problems.ts';
import { consumeOrRefuse } from '../../http/rate-limit.ts';
import { announcedBytes, TUS_WATCH_MS, tusHandler, type TusResource } from '../tus/tus-routes.ts';
import { abandon, claimRoom, CLOSED_BEFORE_COMPLETE, createUpload, finishUpload, openPortal, portalUploadDir, requireOpenUpload, settleRoom, type PortalPlayer } from './portal-service.ts';
import { addressKey } from '../../lib/client-address.ts';

/** How often a PATCH under way reads the portal again, so that closing it stops the PATCH within about this long. */
export const PORTAL_WATCH_MS = TUS_WATCH_MS;

export { portalUploadDir };

export function portalTusHandler(ctx: Context) {
  const limiter: RateLimiterAbstract | undefined =
    ctx.config.portal.uploadsPerHour > 0 ? ctx.store.db.rateLimiter({ keyPrefix: 'portal', points: ctx.config.portal.uploadsPerHour, durationSeconds: 3600 }) : undefined;

  const portal: TusResource<PortalPlayer> = {
    what: 'a portal upload',
    scopeParam: 'playerid',
    uploadParam: 'portaluploadid',
    idPrefix: 'pup',
    directory: portalUploadDir(ctx.config.dataDir),
    // Under the portal's own path, at PUBLIC_URL, like every other URL the API gives out.
    uploadUrlBase: (player) => `${apiRoot(ctx.config)}/portal/${encodeURIComponent(player.id)}/tus`,
    admit: (req: Request) =>
      openPortal(ctx, String(req.params.playerid)).catch((error: unknown) => {
        // The capabilities (OPTIONS) document no 410: there, the portal of an expired link is one that is not open (404).
        if (req.method === 'OPTIONS' && error instanceof HttpProblem && error.status === 410) throw notFound(`There is no open upload portal at ${req.params.playerid}: its link has expired.`);
        throw error;
      }),
    async beforeCreate(req) {
      if (!limiter) return;
      await consumeOrRefuse(limiter, addressKey(req.ip ?? req.socket.remoteAddress ?? 'unknown'), (retryAfter) =>
        `Too many uploads from your address: at most ${ctx.config.portal.uploadsPerHour} per hour. Retry after ${retryAfter} second(s).`,
      );
    },
    async beforeUpload(req, _res, player, uploadId) {
      const upload = await requireOpenUpload(ctx, player, uploadId);
      if (req.method === 'DELETE') {
        // tus 1.0.0, termination: "the Server SHOULD free resources"; the file box waiting for these bytes goes with them.
        await abandon(ctx, upload, 'The uploader cancelled the upload.');
      }
      if (req.method === 'PATCH') {
        // Only bytes received take room: this PATCH claims the room of the bytes it announces, and is refused (413) before a byte when
        // they would overfill the portal or the owner's quota.
        const offset = Number(req.get('upload-offset'));
        await claimRoom(ctx, player, upload, offset, announcedBytes(req, upload.size - offset));
      }
      return false;
    },
    async create(player, upload) {
      await createUpload(ctx, player, upload);
      return undefined;
    },
    async finish(player, uploadId, path) {
      await finishUpload(ctx, player.id, uploadId, path);
      return undefined;
    },
    /**
     * An upload given up meanwhile, or whose portal is now closed, loses
     * what this request wrote; an unfinished one takes the room of the
     * bytes stored.
     */
    async settle(uploadId, stored) {
      const upload = await ctx.store.portal.get(uploadId);
      if (upload && upload.timeCompleted !== null) return;
      // A creation whose upload was recorded as its portal closed escaped releasePortal's listing: it is given up here.
      const closed = await openPortal(ctx, upload?.playerId ?? '').then(() => false, (error: unknown) => error instanceof HttpProblem && error.status === 404);
      if (upload && closed) await abandon(ctx, upload, CLOSED_BEFORE_COMPLETE);
      if (!upload || closed) return 'remove';
      await settleRoom(ctx, uploadId, await stored());
    },
    // Closing the portal, or its link expiring, cuts a request under way.
    stillOpen: (player) => openPortal(ctx, player.id).then(() => true),
  };
  return tusHandler(ctx, portal);
}
