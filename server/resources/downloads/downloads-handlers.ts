import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { pipeline } from 'node:stream/promises';
import { downloadFile, fetchSignedDownload, getPeaksUrl } from './downloads-service.ts';
import type { Variant } from './signed-downloads.ts';
import type { Schemas } from '../../lib/api-types.ts';

export function downloadsHandlers(ctx: Context): OperationHandlers {
  return {
    downloadFile: async (req, res) => {
      res.json(await downloadFile(ctx, req.user!, req.params.projectid, req.params.fileid, req.query.quality as Schemas['Quality'] | undefined));
    },
    getPeaksUrl: async (req, res) => {
      res.json(await getPeaksUrl(ctx, req.user!, req.params.projectid, req.params.fileid, req.query.format as 'json' | 'dat' | undefined));
    },
    fetchSignedDownload: async (req, res) => {
      const delivery = await fetchSignedDownload(ctx, {
        objectId: req.params.objectid,
        // The validator checked it against the spec's enum.
        variant: req.query.variant as Variant | undefined,
        expires: Number(req.query.expires),
        signature: String(req.query.signature),
        disposition: req.query.disposition === 'inline' ? 'inline' : 'attachment',
        range: req.get('range'),
        ifNoneMatch: req.get('if-none-match'),
      });
      res.status(delivery.status).set(delivery.headers);
      if (!delivery.body || req.method === 'HEAD') {
        delivery.body?.destroy();
        res.end();
        return;
      }
      // A listener who seeks or closes the tab ends the response early; that is not an error.
      await pipeline(delivery.body, res).catch(() => {});
    },
  };
}
