import type { OperationHandlers } from '../../http/operations.ts';
import type { Context } from '../../context.ts';
import { requestFacts, sendReply } from '../../http/request-facts.ts';
import { createPlayerCheckout } from './checkout-service.ts';
import { receiveStripeEvent } from './stripe-webhook.ts';
import { rawBodyOf } from '../../http/json-body.ts';

/** As the other player-session answers: for this browser alone (RFC 9111 §5.2.2.5, no-store). */
const PRIVATE = { 'Cache-Control': 'private, no-store' };

export function paymentsHandlers(ctx: Context): OperationHandlers {
  return {
    createPlayerCheckout: async (req, res) => {
      res.set(PRIVATE).json(sendReply(res, await createPlayerCheckout(ctx, requestFacts(req), req.params.playerid)));
    },
    receiveStripeEvent: async (req, res) => {
      res.json(await receiveStripeEvent(ctx, rawBodyOf(req), req.get('stripe-signature') ?? ''));
    },
  };
}
