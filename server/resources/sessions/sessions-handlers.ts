import type { OperationHandlers } from '../../http/operations.ts';
import { requestFacts, sendReply } from '../../http/request-facts.ts';
import type { Context } from '../../context.ts';
import * as sessions from './session-service.ts';
import * as signUp from './sign-up-service.ts';

export function sessionsHandlers(ctx: Context): OperationHandlers {
  return {
    getAuthConfig: async (_req, res) => {
      res.json(await signUp.getAuthConfig(ctx));
    },
    createFirstAccount: async (req, res) => {
      res.json(sendReply(res, await signUp.createFirstAccount(ctx, requestFacts(req), req.body)));
    },
    signUp: async (req, res) => {
      const answer = sendReply(res, await signUp.signUp(ctx, requestFacts(req), req.body));
      res.status(answer.status).json(answer.body);
    },
    signIn: async (req, res) => {
      res.json(sendReply(res, await signUp.signIn(ctx, requestFacts(req), req.body)));
    },
    changePassword: async (req, res) => {
      res.json(await signUp.changePassword(ctx, requestFacts(req), req.user, req.body));
    },
    signOut: async (req, res) => {
      res.json(sendReply(res, req.user ? await sessions.endCurrentSession(ctx, requestFacts(req), req.user) : sessions.clearSessionCookie(ctx)));
    },
    listSessions: async (req, res) => {
      res.json(await sessions.listSessions(ctx, req.user, requestFacts(req)));
    },
    endOtherSessions: async (req, res) => {
      res.json({ ended: await sessions.endOtherSessions(ctx, req.user, requestFacts(req)) });
    },
    endSession: async (req, res) => {
      res.json(sendReply(res, await sessions.endSession(ctx, req.user, requestFacts(req), req.params.sessionid)));
    },
  };
}
