/**
 * A listener's payment of a paywall (createPlayerCheckout): a Stripe
 * Checkout page for the player's price, paid into the connected account of
 * its project's owner, and bound to this browser's player session.
 */
import { reply, type Reply, type RequestFacts } from '../../lib/request-facts.ts';
import type { RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { conflict, HttpProblem } from '../../lib/problems.ts';
import { consumeOrRefuse } from '../../http/rate-limit.ts';
import type { Db } from '../../store/db.ts';
import { requirePayments, viaProvider } from '../../payments/payment-problems.ts';
import { listenerOf, listenerSessions, readSession } from '../listening/listener.ts';
import { LISTENER_SESSION_COOKIE, LISTENER_SESSION_TTL_MS, listenerSessionCookie, newSessionId, renewedSession, type ListenerSession } from '../listening/listener-session.ts';
import { playerToOpen, requireSameOrigin } from '../listening/session-service.ts';
import { CHECKOUT_PLAYER, CHECKOUT_SESSION } from '../listening/fulfilment.ts';
import { addressKey } from '../../lib/client-address.ts';

/** How long the payment page takes the payment. Stripe: expires_at "can be anywhere from 30 minutes to 24 hours after Checkout Session creation". */
export const CHECKOUT_TTL_MS = 60 * 60 * 1000;

/**
 * Payment pages per address and player: 10 a minute. A listener who clicks
 * Pay, goes back and clicks again is far from it; a script making pages at
 * the platform's Stripe account (which Stripe rate limits as a whole) is
 * stopped here.
 */
export const CHECKOUT_ATTEMPTS = { points: 10, durationSeconds: 60 };

const limiters = new WeakMap<Db, RateLimiterAbstract>();
function checkoutLimiter(db: Db): RateLimiterAbstract {
  let limiter = limiters.get(db);
  if (!limiter) {
    limiter = db.rateLimiter({ keyPrefix: 'player-checkout', ...CHECKOUT_ATTEMPTS });
    limiters.set(db, limiter);
  }
  return limiter;
}

export async function createPlayerCheckout(ctx: Context, facts: RequestFacts, playerId: string): Promise<Reply<Schemas['Checkout']>> {
  // Like the session: another site must not start payments in a visitor's name.
  requireSameOrigin(ctx, facts, 'Start a payment');
  const player = await playerToOpen(ctx, playerId);
  const now = ctx.clock.now();
  const existing = readSession(ctx, facts.cookies[LISTENER_SESSION_COOKIE], playerId, now);
  const session: ListenerSession = existing ?? { id: newSessionId(), expires: now + LISTENER_SESSION_TTL_MS };
  // As this session, the player must open (401 for a password not given, collaborators only), and hold something back to pay for.
  const listener = await listenerOf(ctx, player, undefined, session);
  if (!player.payment) throw conflict('This player has no paywall: it opens without paying.');
  if (listener.principal.kind !== 'listener' && listener.principal.kind !== 'password') {
    throw conflict('This player is paid for already in this browser (or you are its collaborator). Reload the player.');
  }
  const payments = requirePayments(ctx);
  // Every checkout pays the owner of the player's project, read from the project itself: never whoever created the
  // player (an editor, perhaps removed since), and only the owner may set the paywall (the policy's `project:sell`).
  const project = await ctx.store.projects.get(player.projectId);
  const owner = project && (await ctx.store.users.get(project.ownerId));
  const notReady = () =>
    new HttpProblem('payment-provider-required', "This player's owner has not finished setting up payments, so it cannot be bought yet. Try again later.");
  if (!owner?.paymentProvider) throw notReady();
  await consumeOrRefuse(
    checkoutLimiter(ctx.store.db),
    `${addressKey(facts.address ?? '')}|${player.id}`,
    (retryAfter) => `Too many payment pages asked for on this player from your address: ${CHECKOUT_ATTEMPTS.points} a minute. Retry after ${retryAfter} second(s).`,
  );

  // A new session id for the payment, known to this browser only: a cookie planted here before (it carries the old id) finds no purchase (renewedSession).
  const buyer: ListenerSession = { ...renewedSession(session), expires: now + LISTENER_SESSION_TTL_MS };
  const pageUrl = `${ctx.config.publicUrl}/p/${player.id}`;
  const price = player.payment.price;
  const connectedAccount = owner.paymentProvider.accountId;
  const checkout = await viaProvider(
    ctx,
    'creating a checkout',
    () =>
      payments.createCheckout({
        price,
        // The view shows prices in US dollars (ViewPaywall.currency); the page must charge what it showed. Stripe converts for the owner's payouts.
        currency: 'usd',
        connectedAccount,
        playerId: player.id,
        productName: player.payment!.fulfillment === 'allow-download' ? `${player.name} (downloads)` : player.name,
        // Stripe replaces {CHECKOUT_SESSION_ID}; the page then claims the purchase for this session (openPlayerSession, `checkout`).
        successUrl: `${pageUrl}?checkout={CHECKOUT_SESSION_ID}`,
        cancelUrl: pageUrl,
        metadata: { [CHECKOUT_PLAYER]: player.id, [CHECKOUT_SESSION]: buyer.id },
        expires: now + CHECKOUT_TTL_MS,
      }),
    // Stripe refuses a destination account that cannot take charges yet (its onboarding unfinished): the owner's to fix, not a failure.
    notReady,
  );
  return reply(
    { object: 'checkout', id: checkout.id, url: checkout.url, price, currency: 'usd', expires: checkout.expires },
    { cookies: [listenerSessionCookie(ctx.config, player.id, listenerSessions(ctx).issue(player.id, buyer), LISTENER_SESSION_TTL_MS)] },
  );
}
