import type { OperationHandlers } from '../../http/operations.ts';
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
      res.json(await passkeys.addPasskey(ctx, req.user, req.body));
    },
    renamePasskey: async (req, res) => {
      res.json(await passkeys.renamePasskey(ctx, req.user, req.params.passkeyid, req.body));
    },
    removePasskey: async (req, res) => {
      await passkeys.removePasskey(ctx, req.user, req.params.passkeyid);
      res.json({});
    },
    startPasskeySignIn: async (_req, res) => {
      res.json(await passkeys.startSignIn(ctx));
    },
    finishPasskeySignIn: async (req, res) => {
      const outcome = await passkeys.finishSignIn(ctx, req.body);
      if (!outcome.ok) throw passkeys.passkeySignInRefused();
      const user = (await ctx.store.users.get(outcome.userId))!;
      // Until the accounts core lands: the session is started here (startSession) in phase 2.
      res.json({ id: user.id, object: 'user', email: user.email, ...(user.name !== null ? { name: user.name } : {}), timeCreated: user.timeCreated });
    },
  };
}
