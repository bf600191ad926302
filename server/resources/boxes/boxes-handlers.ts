import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as boxes from './boxes-service.ts';
import { listingItems } from './box-listing.ts';
import { ifMatchOf, sendVersioned } from '../../http/preconditions.ts';
import { asksForPage, keysetPage, pageAsked } from '../../http/paging.ts';
import { LIST_ORDER_KEY_SHAPE, listAllPage } from './box-pages.ts';

export function boxesHandlers(ctx: Context): OperationHandlers {
  return {
    listAllFiles: async (req, res) => {
      // A page is read by keyset from the store (box-pages.ts); the whole listing comes from listAll's cache.
      if (asksForPage(req)) {
        const { asked, read } = await listAllPage(ctx, req.user, req.params.projectid, () => pageAsked(ctx, req, LIST_ORDER_KEY_SHAPE)!);
        res.json(keysetPage(ctx, req, res, asked, read, boxes.listOrder));
        return;
      }
      const listing = await boxes.listAll(ctx, req.user, req.params.projectid);
      // The whole list is sent as the bytes the listing keeps: the same bytes and headers res.json would send for it,
      // without serialising 10,000 boxes again. The response validator (which checks what res.json is given) takes the
      // list as objects.
      if (!ctx.config.validateResponses) res.type('application/json').send(listing.body);
      else res.json(listingItems(listing));
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
      res.json(await boxes.deleteFile(ctx, req.user, req.params.projectid, req.params.fileid, ifMatchOf(req)));
    },
  };
}
