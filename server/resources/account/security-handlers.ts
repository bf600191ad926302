import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { pageOf } from '../../http/paging.ts';
import { newestFirst } from '../../lib/sort-keys.ts';
import * as tokens from './token-service.ts';
import { confirmDeletion, deleteAccount } from './account-deletion.ts';
import { verify } from '@node-rs/argon2';

/** The account's own security: its tokens, its security events, and deleting it. */
export function accountSecurityHandlers(ctx: Context): OperationHandlers {
  return {
    listTokens: async (req, res) => {
      res.json(pageOf(ctx, req, res, await tokens.listTokens(ctx, req.user), newestFirst));
    },
    createToken: async (req, res) => {
      res.json((await tokens.createToken(ctx, req.user, req.body)).token);
    },
    revokeToken: async (req, res) => {
      await tokens.revokeToken(ctx, req.user, req.params.tokenid);
      res.status(204).end();
    },
    listSecurityEvents: async (req, res) => {
      res.json(pageOf(ctx, req, res, await tokens.listSecurityEvents(ctx, req.user), newestFirst));
    },
    deleteCurrentUser: async (req, res) => {
      await confirmDeletion(ctx, req.user.id, { password: req.body?.password, session: undefined }, verify);
      await deleteAccount(ctx, req.user.id);
      res.status(204).end();
    },
  };
}
