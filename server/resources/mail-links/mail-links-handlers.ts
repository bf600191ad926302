import type { OperationHandlers } from '../../http/operations.ts';
import { requestFacts } from '../../http/request-facts.ts';
import type { Context } from '../../context.ts';
import * as mailLinks from './mail-links-service.ts';

export function mailLinksHandlers(ctx: Context): OperationHandlers {
  return {
    requestPasswordReset: async (req, res) => {
      await mailLinks.requestPasswordReset(ctx, requestFacts(req), req.body.email);
      res.status(202).json({});
    },
    completePasswordReset: async (req, res) => {
      res.json(await mailLinks.completePasswordReset(ctx, requestFacts(req), req.body));
    },
    sendEmailVerification: async (req, res) => {
      res.status(202).json(await mailLinks.sendEmailVerification(ctx, req.user));
    },
    verifyEmail: async (req, res) => {
      res.json(await mailLinks.verifyEmail(ctx, requestFacts(req), req.body.token));
    },
  };
}
