/**
 * Stripe's events (receiveStripeEvent). Stripe, "Receive Stripe events in
 * your webhook endpoint": verify the signature over the raw body, "return a
 * successful status code (2xx) prior to any complex logic", and handle
 * duplicate events ("make your event processing idempotent"). A paid
 * checkout of a player records its purchase, once per checkout; any other
 * event is acknowledged, so that Stripe does not retry it for days.
 */
import type { Context } from '../../context.ts';
import { HttpProblem } from '../../lib/problems.ts';
import { WebhookSignatureError, type PaymentEvent } from '../../payments/payment-provider.ts';
import { requirePayments } from '../../payments/payment-problems.ts';
import { recordPaidCheckout } from '../listening/fulfilment.ts';

export async function receiveStripeEvent(ctx: Pick<Context, 'store' | 'clock' | 'logger' | 'payments'>, rawBody: Buffer | undefined, signature: string): Promise<{ received: true }> {
  const payments = requirePayments(ctx);
  let event: PaymentEvent;
  try {
    event = payments.parseWebhook(rawBody ?? Buffer.alloc(0), signature);
  } catch (error) {
    if (!(error instanceof WebhookSignatureError)) throw error;
    throw new HttpProblem('validation-error', `The event's signature does not verify: ${error.message}`, {
      errors: [{ header: 'stripe-signature', detail: 'does not match the body under the endpoint\'s signing secret, or is too old' }],
    });
  }
  if (event.checkout) {
    const purchase = await recordPaidCheckout(ctx, event.checkout);
    if (purchase) ctx.logger.info('a player was bought', { event: event.id, checkout: event.checkout.id, purchase: purchase.id, playerId: purchase.playerId });
  }
  return { received: true };
}
