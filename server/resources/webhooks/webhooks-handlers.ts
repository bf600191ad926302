import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { pageOf } from '../../http/paging.ts';
import { newestFirst, oldestFirst } from '../../lib/sort-keys.ts';
import * as webhooks from './webhooks-service.ts';

export function webhooksHandlers(ctx: Context): OperationHandlers {
  return {
    listWebhooks: async (req, res) => {
      res.json(pageOf(ctx, req, res, await webhooks.listWebhooks(ctx, req.user, req.auth), oldestFirst));
    },
    createWebhook: async (req, res) => {
      res.json(await webhooks.createWebhook(ctx, req.user, req.auth, req.body));
    },
    getWebhook: async (req, res) => {
      res.json(await webhooks.getWebhook(ctx, req.user, req.auth, req.params.webhookid));
    },
    updateWebhook: async (req, res) => {
      res.json(await webhooks.updateWebhook(ctx, req.user, req.auth, req.params.webhookid, req.body));
    },
    deleteWebhook: async (req, res) => {
      res.json(await webhooks.deleteWebhook(ctx, req.user, req.auth, req.params.webhookid));
    },
    rotateWebhookSecret: async (req, res) => {
      res.json(await webhooks.rotateWebhookSecret(ctx, req.user, req.auth, req.params.webhookid));
    },
    listWebhookDeliveries: async (req, res) => {
      res.json(pageOf(ctx, req, res, await webhooks.listWebhookDeliveries(ctx, req.user, req.auth, req.params.webhookid), newestFirst));
    },
    redeliverWebhook: async (req, res) => {
      res.json(await webhooks.redeliverWebhook(ctx, req.user, req.auth, req.params.webhookid, req.params.deliveryid));
    },
  };
}
