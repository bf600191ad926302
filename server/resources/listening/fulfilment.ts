/**
 * Recording a paid checkout as a purchase. Stripe's "Fulfill orders" guide:
 * fulfil from the webhook (it arrives even when the buyer closes the tab)
 * and from the landing page (the buyer should not wait for it), with a
 * fulfilment that "is safe to run multiple times, possibly concurrently,
 * with the same Checkout Session ID": the purchase is unique per checkout
 * (PurchaseRepository.recordCheckout).
 */
import type { Context } from '../../context.ts';
import { conflict } from '../../lib/problems.ts';
import { newId } from '../../lib/ids.ts';
import type { CheckoutState } from '../../payments/payment-provider.ts';
import { requirePayments, viaProvider } from '../../payments/payment-problems.ts';
import type { PurchaseRecord } from './purchase-repository.ts';
import type { ListenerSession } from './listener-session.ts';
import type { PlayerRecord } from '../players/player-repository.ts';

/** The keys a checkout carries in its metadata: which player it buys, for which player session. Prefixed: the Stripe account may serve other apps. */
export const CHECKOUT_PLAYER = 'audio_share_player';
export const CHECKOUT_SESSION = 'audio_share_session';

/**
 * The purchase of a paid checkout of one of our players, made once; the
 * same purchase for the same checkout however often it is heard. Undefined
 * when the checkout is not ours, not paid (yet), or its player is gone.
 */
export async function recordPaidCheckout(ctx: Pick<Context, 'store' | 'clock' | 'logger'>, checkout: CheckoutState): Promise<PurchaseRecord | undefined> {
  const playerId = checkout.metadata[CHECKOUT_PLAYER];
  if (!playerId || !checkout.paid) return undefined;
  if (!(await ctx.store.players.get(playerId))) {
    // Paid, but the owner deleted the player meanwhile: nothing to open. The owner sees the payment in Stripe, and can refund it there.
    ctx.logger.warn('a checkout was paid for a player that no longer exists', { checkout: checkout.id, playerId });
    return undefined;
  }
  const purchase = await ctx.store.purchases.recordCheckout({
    id: newId('pur'),
    playerId,
    timeCreated: ctx.clock.now(),
    checkoutId: checkout.id,
    ...(checkout.metadata[CHECKOUT_SESSION] ? { buyerSession: checkout.metadata[CHECKOUT_SESSION] } : {}),
    ...(checkout.amount !== null ? { amount: checkout.amount } : {}),
    ...(checkout.currency !== null ? { currency: checkout.currency } : {}),
    ...(checkout.receiptUrl ? { receiptUrl: checkout.receiptUrl } : {}),
  });
  return purchase;
}

/**
 * The buyer's return from the payment page (`?checkout=` on the player
 * page): the checkout is read from the provider, not taken from the URL, and
 * counts only for the player session that started it, so that a shared or
 * leaked return URL opens nothing for anyone else. Undefined while the
 * payment is not complete (an asynchronous method): the webhook records it
 * when it is.
 *
 * A paid purchase moves to `renewedId`, the id the claiming session takes
 * (session fixation: the id is renewed when access is gained), in one
 * statement that needs the purchase still to be the starting session's: so
 * the old id, and any other cookie carrying it, no longer finds the
 * purchase, and of two claims with the same old id only one wins.
 */
export async function claimCheckout(
  ctx: Pick<Context, 'store' | 'clock' | 'logger' | 'payments'>,
  player: PlayerRecord,
  session: ListenerSession,
  checkoutId: string,
  renewedId: string,
): Promise<PurchaseRecord | undefined> {
  const payments = requirePayments(ctx);
  const notOurs = () => conflict('This payment was not started by this browser on this player, so it does not open the player here.');
  const checkout = await viaProvider(ctx, 'reading a checkout', () => payments.retrieveCheckout(checkoutId), notOurs);
  if (checkout.metadata[CHECKOUT_PLAYER] !== player.id) throw notOurs();
  if (checkout.metadata[CHECKOUT_SESSION] !== session.id) {
    // The buyer back a second time (a reload of the return URL): their session holds the purchase already, under its renewed id, which is renewed again.
    const claimed = session.purchaseId !== undefined ? await ctx.store.purchases.byCheckout(checkout.id) : undefined;
    if (!claimed || claimed.id !== session.purchaseId || claimed.playerId !== player.id) throw notOurs();
    await ctx.store.purchases.moveToSession(claimed.id, session.id, renewedId);
    return claimed;
  }
  const purchase = await recordPaidCheckout(ctx, checkout);
  if (!purchase) return undefined;
  if (!(await ctx.store.purchases.moveToSession(purchase.id, session.id, renewedId))) {
    throw conflict('This payment was claimed already, by the browser that came back from the payment page. Open the player in that browser.');
  }
  return { ...purchase, buyerSession: renewedId };
}
