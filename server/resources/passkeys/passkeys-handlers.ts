import type { OperationHandlers } from '../../http/operations.ts';
import { requestFacts, sendReply } from '../../http/request-facts.ts';
import type { Context } from '../../context.ts';
import * as passkeys from './passkeys-service.ts';

export function passkeysHandlers(ctx: Context): OperationHandlers {
  return {
    listPasskeys: async (req, res) => {
      res.json(await passkeys.listPasskeys(ctx, req.user));
    },
    startPasskeyRegistration: async (req, res) => {
      res.json(await passkeys.startRegistration(ctx, req.user));
    },
    addPasskey: async (req, res) => {
      res.json(await passkeys.addPasskey(ctx, requestFacts(req), req.user, req.body));
    },
    renamePasskey: async (req, res) => {
      res.json(await passkeys.renamePasskey(ctx, req.user, req.params.passkeyid, req.body));
    },
    removePasskey: async (req, res) => {
      await passkeys.removePasskey(ctx, requestFacts(req), req.user, req.params.passkeyid);
      res.json({});
    },
    startPasskeySignIn: async (_req, res) => {
      res.json(await passkeys.startSignIn(ctx));
    },
    finishPasskeySignIn: async (req, res) => {
      res.json(sendReply(res, await passkeys.finishSignIn(ctx, requestFacts(req), req.body)));
    },
  };
}
