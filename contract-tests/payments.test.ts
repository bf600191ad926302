/**
 * Paying for a paywall (extension): a listener's checkout, and Stripe's
 * notifications. The real servers of the suite take payments from a fake
 * Stripe on loopback (see support/global-setup.ts), so a checkout answers a
 * payment page there; the mock keeps no state and answers the examples.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { client, onMock, raw, stripeWebhookSecret } from './support/context.ts';
import { signedDelivery } from '../server/testing/fake-stripe.ts';

const api = client();
const tooLongId = 'x'.repeat(65);
/** The player page's own requests: the checkout refuses anything from another site. */
const samePage = { 'Sec-Fetch-Site': 'same-origin' };
let playerid = 'ply_4c8n2r7t1v';

/** An event Stripe sends that is not a paid checkout: acknowledged and ignored. */
const otherEvent = JSON.stringify({ id: 'evt_contract_other', object: 'event', type: 'payment_intent.created', data: { object: { id: 'pi_contract', object: 'payment_intent' } } });

beforeAll(async () => {
  if (onMock) return;
  // The owner onboards at the (fake) provider, whose accounts can take payments at once, then puts up a paywall.
  // Disconnected first: the account tests connect this account with an account id the fake never made.
  await api.DELETE('/me/payment-provider');
  const connected = await api.POST('/me/payment-provider', { body: { provider: 'stripe' } });
  expect(connected.response.status).toBe(200);
  const { data, error } = await api.POST('/players', { body: { name: 'Contract: paywall', public: true, payment: { price: 499, fulfillment: 'allow-access', recipient: 'customer' } } });
  expect(error).toBeUndefined();
  playerid = data!.id;
});

describe('payments (extension)', () => {
  it('createPlayerCheckout answers the payment page for the paywall, from the player page', async () => {
    const response = await raw(`/players/${playerid}/checkout`, { method: 'POST', token: null, headers: samePage });
    expect(response.status).toBe(200);
    const checkout = await response.json();
    expect(checkout).toMatchObject({ object: 'checkout', url: expect.stringMatching(/^https?:\/\//) });
    if (!onMock) expect(checkout).toMatchObject({ price: 499, currency: 'usd' });
  });

  it('createPlayerCheckout refuses an id over 64 characters, and (on a server) a request from another site', async () => {
    expect((await raw(`/players/${tooLongId}/checkout`, { method: 'POST', token: null, headers: samePage })).status).toBe(400);
    if (!onMock) expect((await raw(`/players/${playerid}/checkout`, { method: 'POST', token: null, headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
  });

  it('receiveStripeEvent acknowledges a signed event, and refuses one without a signature', async () => {
    const signed = await raw('/payments/stripe/webhook', { method: 'POST', token: null, headers: signedDelivery(otherEvent, stripeWebhookSecret), body: otherEvent });
    expect(signed.status).toBe(200);
    expect(await signed.json()).toEqual({ received: true });
    const unsigned = await raw('/payments/stripe/webhook', { method: 'POST', token: null, headers: { 'Content-Type': 'application/json' }, body: otherEvent });
    expect(unsigned.status).toBe(400);
  });

  it.skipIf(onMock)('receiveStripeEvent refuses a forged signature (needs the real check: skipped on the mock)', async () => {
    const forged = await raw('/payments/stripe/webhook', { method: 'POST', token: null, headers: signedDelivery(otherEvent, 'whsec_not_the_secret'), body: otherEvent });
    expect(forged.status).toBe(400);
    expect((await forged.json()).type).toBe('/problems/validation-error');
  });
});
