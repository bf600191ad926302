import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as account from './account-service.ts';
import { ifMatchOf, sendVersioned } from '../../http/preconditions.ts';

export function accountHandlers(ctx: Context): OperationHandlers {
  return {
    getCurrentUser: async (req, res) => {
      res.json(await account.getCurrentUser(ctx, req.user));
    },
    updateCurrentUser: async (req, res) => {
      res.json(await account.updateCurrentUser(ctx, req.user, req.body));
    },
    getPlayerPreferences: async (req, res) => {
      sendVersioned(res, await account.getPreferences(ctx, req.user));
    },
    updatePlayerPreferences: async (req, res) => {
      sendVersioned(res, await account.updatePreferences(ctx, req.user, req.body, ifMatchOf(req)));
    },
    getPaymentProvider: async (req, res) => {
      res.json(await account.getPaymentProvider(ctx, req.user));
    },
    connectPaymentProvider: async (req, res) => {
      res.json(await account.connectPaymentProvider(ctx, req.user, req.body));
    },
    disconnectPaymentProvider: async (req, res) => {
      res.json(await account.disconnectPaymentProvider(ctx, req.user));
    },
  };
}
