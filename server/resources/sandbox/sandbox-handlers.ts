import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { resetSandbox } from './sandbox-service.ts';

export function sandboxHandlers(ctx: Context): OperationHandlers {
  return {
    resetSandbox: async (req, res) => {
      // The bearer token is the sandbox account's only name: the demo is made again with it.
      const token = /^Bearer\s+(\S+)/i.exec(req.get('authorization') ?? '')![1];
      res.json(await resetSandbox(ctx, req.user, token));
    },
  };
}
