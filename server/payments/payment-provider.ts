/**
 * The payment provider, as the paywall needs it: accounts for the players'
 * owners (they are paid), payment pages for listeners (they pay), and the
 * provider's notifications that a payment was made. One adapter exists,
 * Stripe (stripe-provider.ts); the resources see only this port, so tests
 * and another provider need no change to them.
 */

/** Whether an owner's account can take payments yet, as the provider says now. */
export interface AccountStatus {
  accountId: string;
  /** The provider lets the account take card payments. */
  chargesEnabled: boolean;
  /** The owner finished the provider's onboarding. */
  detailsSubmitted: boolean;
}

export interface CheckoutRequest {
  /** In the currency's smallest unit (cents): the interface on the players operations, `price`: "Paywall price in cents". */
  price: number;
  currency: 'usd';
  /** The player owner's account, which is paid. */
  connectedAccount: string;
  playerId: string;
  /** What the payment page says is bought. */
  productName: string;
  successUrl: string;
  cancelUrl: string;
  /** Carried by the payment and handed back with it (the provider's notification, a read of the page). */
  metadata: Record<string, string>;
  /** When the page stops taking the payment (milliseconds since the epoch). */
  expires: number;
}

export interface CheckoutPage {
  id: string;
  url: string;
  /** Milliseconds since the epoch. */
  expires: number;
}

/** A payment page as the provider has it now. */
export interface CheckoutState {
  id: string;
  /** The money is in: a paid purchase may be recorded. */
  paid: boolean;
  /** What was charged, in cents, and its currency (null while the provider does not say). */
  amount: number | null;
  currency: string | null;
  metadata: Record<string, string>;
  /** The provider's receipt for the buyer, when it has made one. */
  receiptUrl?: string;
}

/** A notification from the provider, once its signature is checked. */
export type PaymentEvent = { id: string; type: string; checkout?: CheckoutState };

export interface PaymentProvider {
  readonly name: 'stripe';
  /** A new account for an owner, to be paid into; the same one again for a repeated call within a day (idempotent per user). */
  createConnectedAccount(owner: { userId: string; email: string }): Promise<{ accountId: string }>;
  /** A link to the provider's onboarding of the account: it works once, for a few minutes. */
  onboardingLink(accountId: string, urls: { refreshUrl: string; returnUrl: string }): Promise<{ url: string; expires: number }>;
  accountStatus(accountId: string): Promise<AccountStatus>;
  createCheckout(request: CheckoutRequest): Promise<CheckoutPage>;
  retrieveCheckout(checkoutId: string): Promise<CheckoutState>;
  /** The event a notification carries; throws WebhookSignatureError when its signature does not verify over these exact bytes. */
  parseWebhook(rawBody: Buffer, signatureHeader: string): PaymentEvent;
}

/** The provider refused a request or did not answer; nothing was charged by it. */
export class PaymentProviderError extends Error {
  /** The provider refused what was asked (an account it does not know, one not ready), rather than failing. */
  readonly refused: boolean;

  constructor(
    message: string,
    refused: boolean,
  ) {
    super(message);
    this.refused = refused;
    this.name = 'PaymentProviderError';
  }
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}
