/** The apps and connected apps operations (oauth-apps.ts). */
import type { Context } from '../../context.ts';
import type { OperationHandlers } from '../../http/operations.ts';
import { pageOf } from '../../http/paging.ts';
import { newestFirst } from '../../lib/sort-keys.ts';
import * as apps from './oauth-apps.ts';

/** Connected apps: the most recently connected first, then by id. */
const connectedFirst = (app: { timeConnected: number; id: string }) => newestFirst({ timeCreated: app.timeConnected, id: app.id });

export function oauthHandlers(ctx: Context): OperationHandlers {
  return {
    listApps: async (req, res) => {
      res.json(pageOf(ctx, req, res, await apps.listApps(ctx, req.user), newestFirst));
    },
    createApp: async (req, res) => {
      res.json(await apps.createApp(ctx, req.user, req.body));
    },
    getApp: async (req, res) => {
      res.json(await apps.getApp(ctx, req.user, req.params.appid));
    },
    deleteApp: async (req, res) => {
      await apps.deleteApp(ctx, req.user, req.params.appid);
      res.json({});
    },
    listConnectedApps: async (req, res) => {
      res.json(pageOf(ctx, req, res, await apps.listConnectedApps(ctx, req.user), connectedFirst));
    },
    revokeConnectedApp: async (req, res) => {
      await apps.revokeConnectedApp(ctx, req.user, req.params.appid);
      res.json({});
    },
  };
}
