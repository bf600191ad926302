import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as boxes from './boxes-service.ts';

export function boxesHandlers(ctx: Context): OperationHandlers {
  return {
    listAllFiles: async (req, res) => {
      res.json(await boxes.listAll(ctx, req.user!, req.params.projectid));
    },
    listFolders: async (req, res) => {
      res.json(await boxes.listFolders(ctx, req.user!, req.params.projectid));
    },
    createFolder: async (req, res) => {
      res.json(await boxes.createFolder(ctx, req.user!, req.params.projectid, req.body));
    },
    createStack: async (req, res) => {
      res.json(await boxes.createStack(ctx, req.user!, req.params.projectid, req.body));
    },
    getFile: async (req, res) => {
      res.json(await boxes.getBox(ctx, req.user!, req.params.projectid, req.params.fileid));
    },
    updateFile: async (req, res) => {
      res.json(await boxes.updateBox(ctx, req.user!, req.params.projectid, req.params.fileid, req.body));
    },
    deleteFile: async (req, res) => {
      res.json(await boxes.deleteFile(ctx, req.user!, req.params.projectid, req.params.fileid));
    },
  };
}
