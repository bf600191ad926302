import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { pageOf } from '../../http/paging.ts';
import { requestFacts } from '../../http/request-facts.ts';
import { newestFirst } from '../../lib/sort-keys.ts';
import * as tokens from './token-service.ts';
import { confirmDeletion, deleteAccount } from './account-deletion.ts';
import { clearedSessionCookie } from '../../auth/session-cookie.ts';

/** The account's own security: its tokens, its security events, and deleting it. */
export function accountSecurityHandlers(ctx: Context): OperationHandlers {
  return {
    listTokens: async (req, res) => {
      res.json(pageOf(ctx, req, res, await tokens.listTokens(ctx, req.user), newestFirst));
    },
    createToken: async (req, res) => {
      res.json(await tokens.createToken(ctx, req.user, requestFacts(req), req.body));
    },
    revokeToken: async (req, res) => {
      await tokens.revokeToken(ctx, req.user, requestFacts(req), req.params.tokenid);
      res.json({});
    },
    listSecurityEvents: async (req, res) => {
      res.json(pageOf(ctx, req, res, await tokens.listSecurityEvents(ctx, req.user), newestFirst));
    },
    deleteCurrentUser: async (req, res) => {
      await confirmDeletion(ctx, req.user, req.auth, req.body?.password, req.ip ?? 'unknown');
      await deleteAccount(ctx, req.user.id);
      // Its sessions are gone with it; the browser's cookie goes too.
      res.append('Set-Cookie', clearedSessionCookie(ctx.config.publicUrl));
      res.json({});
    },
  };
}
