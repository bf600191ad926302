/**
 * The payment provider on Stripe, with the official SDK.
 *
 * Owners are paid through Stripe Connect, with Express accounts: Stripe
 * hosts their onboarding and dashboard, and this server keeps no bank or
 * identity detail. Listeners pay on Stripe Checkout, as **destination
 * charges** made by the platform (this server's Stripe account) with
 * `on_behalf_of` and `transfer_data.destination` set to the owner's account:
 * - one webhook endpoint on the platform hears every payment (a direct
 *   charge happens on the connected account, whose events reach only a
 *   Connect endpoint);
 * - "on_behalf_of: The account on behalf of which to charge, for each of
 *   the associated transactions" makes the owner the settlement merchant:
 *   their name on the buyer's statement, their country's fees and payout
 *   currency (Stripe converts from the price's currency);
 * - the whole amount goes to the owner: a self-hosted server takes no
 *   application fee.
 * Stripe's guide recommends destination charges for Express accounts.
 */
import Stripe from 'stripe';
import type { StripeSettings } from '../config.ts';
import {
  PaymentProviderError,
  WebhookSignatureError,
  type AccountStatus,
  type CheckoutPage,
  type CheckoutRequest,
  type CheckoutState,
  type PaymentEvent,
  type PaymentProvider,
} from './payment-provider.ts';

/** The API version the shapes read here were written against; pinned, so that a change of the account's default changes nothing. */
export const STRIPE_API_VERSION = '2025-02-24.acacia' as const;

/** The events that mean a checkout's money is in (Stripe, "Fulfill orders": async methods complete unpaid and succeed later). */
const PAID_EVENTS = new Set(['checkout.session.completed', 'checkout.session.async_payment_succeeded']);

export class StripeProvider implements PaymentProvider {
  readonly name = 'stripe' as const;
  private readonly stripe: Stripe;

  private readonly settings: StripeSettings;

  constructor(settings: StripeSettings) {
    this.settings = settings;
    const base = settings.apiBase;
    this.stripe = new Stripe(settings.secretKey, {
      apiVersion: STRIPE_API_VERSION,
      // The SDK retries network failures and 409/5xx answers with an idempotency key it adds to each POST, so a retry charges nothing twice.
      maxNetworkRetries: 2,
      // A listener waits on the checkout: better a clear 502 after 20 s than the SDK's 80.
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: 'audio-share' },
      // STRIPE_API_BASE: a fake on loopback (tests) or stripe-mock; the SDK's host, port and protocol options.
      ...(base
        ? { host: base.hostname.replace(/^\[|\]$/g, ''), port: base.port || (base.protocol === 'https:' ? 443 : 80), protocol: base.protocol === 'https:' ? ('https' as const) : ('http' as const) }
        : {}),
    });
  }

  async createConnectedAccount(owner: { userId: string; email: string }): Promise<{ accountId: string }> {
    const account = await this.call(() =>
      this.stripe.accounts.create(
        {
          type: 'express',
          email: owner.email,
          // on_behalf_of needs card_payments on the connected account, and transfer_data needs transfers.
          capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
          metadata: { audio_share_user: owner.userId },
        },
        // Two connects at once (a double click) make one account: Stripe answers a repeated key with the first result for 24 hours.
        { idempotencyKey: `audio-share-connect-${owner.userId}` },
      ),
    );
    return { accountId: account.id };
  }

  async onboardingLink(accountId: string, urls: { refreshUrl: string; returnUrl: string }): Promise<{ url: string; expires: number }> {
    const link = await this.call(() =>
      this.stripe.accountLinks.create({ account: accountId, type: 'account_onboarding', refresh_url: urls.refreshUrl, return_url: urls.returnUrl }),
    );
    return { url: link.url, expires: link.expires_at * 1000 };
  }

  async accountStatus(accountId: string): Promise<AccountStatus> {
    const account = await this.call(() => this.stripe.accounts.retrieve(accountId));
    return { accountId: account.id, chargesEnabled: account.charges_enabled === true, detailsSubmitted: account.details_submitted === true };
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutPage> {
    const session = await this.call(() =>
      this.stripe.checkout.sessions.create({
        mode: 'payment',
        line_items: [{ quantity: 1, price_data: { currency: request.currency, unit_amount: request.price, product_data: { name: request.productName } } }],
        payment_intent_data: {
          on_behalf_of: request.connectedAccount,
          transfer_data: { destination: request.connectedAccount },
          metadata: request.metadata,
        },
        metadata: request.metadata,
        // Stripe: "{CHECKOUT_SESSION_ID}" in success_url is replaced with the session's id on the redirect.
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        // Stripe: expires_at must be 30 minutes to 24 hours after creation; in seconds.
        expires_at: Math.floor(request.expires / 1000),
      }),
    );
    if (!session.url) throw new PaymentProviderError(`Stripe made checkout ${session.id} without a payment page URL.`, false);
    return { id: session.id, url: session.url, expires: session.expires_at * 1000 };
  }

  async retrieveCheckout(checkoutId: string): Promise<CheckoutState> {
    // The receipt is on the charge: the PaymentIntent's latest_charge, expanded in the same request.
    const session = await this.call(() => this.stripe.checkout.sessions.retrieve(checkoutId, { expand: ['payment_intent.latest_charge'] }));
    return checkoutState(session);
  }

  parseWebhook(rawBody: Buffer, signatureHeader: string): PaymentEvent {
    let event: Stripe.Event;
    try {
      // Stripe, "Verify webhook signatures": constructEvent needs "the raw request body"; it also refuses a timestamp over 300 s old (replays).
      event = this.stripe.webhooks.constructEvent(rawBody, signatureHeader, this.settings.webhookSecret);
    } catch (error) {
      throw new WebhookSignatureError(error instanceof Error ? error.message : String(error));
    }
    if (PAID_EVENTS.has(event.type)) {
      return { id: event.id, type: event.type, checkout: checkoutState(event.data.object as Stripe.Checkout.Session) };
    }
    return { id: event.id, type: event.type };
  }

  /** A Stripe call, its failures as PaymentProviderError: refusals (4xx) apart from Stripe not answering or failing. */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof Stripe.errors.StripeConnectionError) throw new PaymentProviderError(`Stripe did not answer: ${error.message}`, false);
      if (error instanceof Stripe.errors.StripeError) {
        const refused = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500;
        throw new PaymentProviderError(`Stripe ${refused ? 'refused' : 'failed'} the request: ${error.message}`, refused);
      }
      throw error;
    }
  }
}

/** Checkout Session, payment_status: "paid: The payment funds are available in your account." */
function checkoutState(session: Stripe.Checkout.Session): CheckoutState {
  const intent = typeof session.payment_intent === 'object' ? session.payment_intent : null;
  const charge = intent && typeof intent.latest_charge === 'object' ? intent.latest_charge : null;
  return {
    id: session.id,
    paid: session.payment_status === 'paid',
    amount: session.amount_total ?? null,
    currency: session.currency ?? null,
    metadata: { ...(session.metadata ?? {}) },
    ...(charge?.receipt_url ? { receiptUrl: charge.receipt_url } : {}),
  };
}
