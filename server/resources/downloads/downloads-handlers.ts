import type { NextFunction, Request, Response } from 'express';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { downloadFile, fetchSignedDownload, getPeaksUrl } from './downloads-service.ts';
import type { Variant } from '../../signing/signed-downloads.ts';
import { DOWNLOAD_SAFETY_HEADERS } from './download-rules.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { GrantHolder, GrantKind } from '../../signing/player-grant.ts';

/**
 * The download endpoint's headers (download-rules.ts) for answers made before
 * its handler runs: a request the validator refuses (a malformed signature),
 * one the rate limit refuses. Mount it on the download path after the global
 * security headers, whose values it replaces there.
 */
export function downloadSafetyHeaders(_req: Request, res: Response, next: NextFunction) {
  res.set(DOWNLOAD_SAFETY_HEADERS);
  next();
}

export function downloadsHandlers(ctx: Context): OperationHandlers {
  return {
    downloadFile: async (req, res) => {
      res.json(await downloadFile(ctx, req.user, req.params.projectid, req.params.fileid, req.query.quality as Schemas['Quality'] | undefined));
    },
    getPeaksUrl: async (req, res) => {
      res.json(await getPeaksUrl(ctx, req.user, req.params.projectid, req.params.fileid, req.query.format as 'json' | 'dat' | undefined));
    },
    fetchSignedDownload: async (req, res) => {
      // Set before anything can fail, so that the problem answers of this
      // route (403, 404, 416) carry them as well as 200, 206 and 304.
      res.set(DOWNLOAD_SAFETY_HEADERS);
      const delivery = await fetchSignedDownload(ctx, {
        objectId: req.params.objectid,
        // The validator checked it against the spec's enum.
        variant: req.query.variant as Variant | undefined,
        expires: Number(req.query.expires),
        signature: String(req.query.signature),
        disposition: req.query.disposition === 'inline' ? 'inline' : 'attachment',
        range: req.get('range'),
        ifNoneMatch: req.get('if-none-match'),
        // The validator checked these against the spec (all of player, grant and as, or none).
        ...(typeof req.query.player === 'string'
          ? {
              grant: {
                playerId: req.query.player,
                grant: req.query.grant as GrantKind,
                holder: req.query.as as GrantHolder,
                ...(typeof req.query.purchase === 'string' ? { purchaseId: req.query.purchase } : {}),
              },
            }
          : {}),
      });
      res.status(delivery.status).set(delivery.headers);
      if (!delivery.body || req.method === 'HEAD') {
        delivery.body?.destroy();
        res.end();
        return;
      }
      await stream(ctx, req, res, delivery.body);
    },
  };
}

/**
 * Sends the blob's bytes. A listener who seeks or closes the tab closes the
 * response before it is finished; that is normal and only noted at debug
 * level. Anything else (the blob store failing mid-read) is logged with its
 * stack; the response has begun, so the connection is cut, and the client
 * sees a short body rather than a complete-looking wrong one.
 */
async function stream(ctx: Context, req: { id: string }, res: Response, body: Readable): Promise<void> {
  // Which side failed first. When the listener goes away, the response
  // closes unfinished before pipeline destroys the source (with a
  // premature-close error of its own); when the source fails, its error
  // comes first and pipeline then destroys the response.
  let firstFailure: 'listener' | 'source' | undefined;
  res.once('close', () => {
    if (!res.writableFinished) firstFailure ??= 'listener';
  });
  body.once('error', () => {
    firstFailure ??= 'source';
  });
  try {
    await pipeline(body, res);
  } catch (error) {
    if (firstFailure === 'listener') {
      ctx.logger.debug('download closed by the listener before its end', { requestId: req.id });
      return;
    }
    ctx.logger.error('download failed while streaming', { requestId: req.id, err: error });
  }
}
