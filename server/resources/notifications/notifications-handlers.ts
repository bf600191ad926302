import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { pageOf } from '../../http/paging.ts';
import { newestFirst } from '../../lib/sort-keys.ts';
import * as notifications from './notifications-service.ts';

/** The account's notifications and how they are mailed. */
export function notificationsHandlers(ctx: Context): OperationHandlers {
  return {
    listNotifications: async (req, res) => {
      const unread = req.query.unread === true;
      const list = await notifications.listNotifications(ctx, req.user, { unread });
      // The validator made `unread` a boolean; the next page's link carries it as the text it came as.
      const query = { ...req.query, ...(req.query.unread !== undefined ? { unread: String(unread) } : {}) };
      res.json(pageOf(ctx, { path: req.path, query }, res, list, newestFirst));
    },
    markNotificationsRead: async (req, res) => {
      res.json(await notifications.markNotificationsRead(ctx, req.user, req.body));
    },
    getNotificationSettings: async (req, res) => {
      res.json(await notifications.getNotificationSettings(ctx, req.user));
    },
    updateNotificationSettings: async (req, res) => {
      res.json(await notifications.updateNotificationSettings(ctx, req.user, req.body));
    },
  };
}
