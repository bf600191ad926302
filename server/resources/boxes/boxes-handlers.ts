import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as boxes from './boxes-service.ts';
import { listingItems } from './box-listing.ts';
import { ifMatchOf, sendVersioned } from '../../http/preconditions.ts';
import { pageOf } from '../../http/paging.ts';

export function boxesHandlers(ctx: Context): OperationHandlers {
  return {
    listAllFiles: async (req, res) => {
      const listing = await boxes.listAll(ctx, req.user, req.params.projectid);
      // The whole list, as pageOf answers it when the request names neither limit nor cursor, is sent as the bytes the
      // listing keeps: the same bytes and headers res.json would send for it, without serialising 10,000 boxes again.
      // Pages, and the response validator (which checks what res.json is given), take the list as objects.
      const whole = req.query.limit === undefined && req.query.cursor === undefined;
      if (whole && !ctx.config.validateResponses) res.type('application/json').send(listing.body);
      else res.json(pageOf(ctx, req, res, listingItems(listing), boxes.listOrder));
    },
    listFolders: async (req, res) => {
      res.json(await boxes.listFolders(ctx, req.user, req.params.projectid));
    },
    createFolder: async (req, res) => {
      sendVersioned(res, await boxes.createFolder(ctx, req.user, req.params.projectid, req.body));
    },
    createStack: async (req, res) => {
      sendVersioned(res, await boxes.createStack(ctx, req.user, req.params.projectid, req.body));
    },
    getFile: async (req, res) => {
      sendVersioned(res, await boxes.getBox(ctx, req.user, req.params.projectid, req.params.fileid));
    },
    updateFile: async (req, res) => {
      sendVersioned(res, await boxes.updateBox(ctx, req.user, req.params.projectid, req.params.fileid, req.body, ifMatchOf(req)));
    },
    deleteFile: async (req, res) => {
      res.json(await boxes.deleteFile(ctx, req.user, req.params.projectid, req.params.fileid));
    },
  };
}
