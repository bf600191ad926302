import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import * as sessions from './session-service.ts';
import * as signUp from './sign-up-service.ts';

export function sessionsHandlers(ctx: Context): OperationHandlers {
  return {
    getAuthConfig: async (_req, res) => {
      res.json(await signUp.getAuthConfig(ctx));
    },
    createFirstAccount: async (req, res) => {
      res.json(await signUp.createFirstAccount(ctx, req, res, req.body));
    },
    signUp: async (req, res) => {
      const answer = await signUp.signUp(ctx, req, res, req.body);
      res.status(answer.status).json(answer.body);
    },
    signIn: async (req, res) => {
      res.json(await signUp.signIn(ctx, req, res, req.body));
    },
    changePassword: async (req, res) => {
      res.json(await signUp.changePassword(ctx, req, req.user, req.body));
    },
    signOut: async (req, res) => {
      if (req.user) await sessions.endCurrentSession(ctx, req, res, req.user);
      else await sessions.clearSessionCookie(ctx, res);
      res.json({});
    },
    listSessions: async (req, res) => {
      res.json(await sessions.listSessions(ctx, req.user, req));
    },
    endOtherSessions: async (req, res) => {
      res.json({ ended: await sessions.endOtherSessions(ctx, req.user, req) });
    },
    endSession: async (req, res) => {
      await sessions.endSession(ctx, req.user, req, res, req.params.sessionid);
      res.json({});
    },
  };
}
