import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { pageOf } from '../../http/paging.ts';
import { oldestFirst } from '../../lib/sort-keys.ts';
import * as admin from './admin-service.ts';

export function adminHandlers(ctx: Context): OperationHandlers {
  return {
    listUsers: async (req, res) => {
      res.json(pageOf(ctx, req, res, await admin.listUsers(ctx, req.user), oldestFirst));
    },
    updateUser: async (req, res) => {
      res.json(await admin.updateUser(ctx, req.user, req.params.userid, req.body));
    },
    createInvitation: async (req, res) => {
      res.json(await admin.createInvitation(ctx, req.user, req.body));
    },
  };
}
