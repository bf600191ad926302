import { Router } from 'express';
import type { Context } from '../../context.ts';
import * as account from './account-service.ts';

export function accountRoutes(ctx: Context): Router {
  return Router()
    .get('/me', async (req, res) => {
      res.json(await account.getCurrentUser(ctx, req.user!));
    })
    .get('/me/preferences', async (req, res) => {
      res.json(await account.getPreferences(ctx, req.user!));
    })
    .post('/me/preferences', async (req, res) => {
      res.json(await account.updatePreferences(ctx, req.user!, req.body));
    })
    .get('/me/payment-provider', async (req, res) => {
      res.json(await account.getPaymentProvider(ctx, req.user!));
    })
    .post('/me/payment-provider', async (req, res) => {
      res.json(await account.connectPaymentProvider(ctx, req.user!, req.body));
    })
    .delete('/me/payment-provider', async (req, res) => {
      res.json(await account.disconnectPaymentProvider(ctx, req.user!));
    });
}
