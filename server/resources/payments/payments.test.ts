/**
 * Paying for a paywall, over HTTP on both stores, with the real Stripe SDK
 * talking to a fake Stripe on loopback (server/testing/fake-stripe.ts):
 * onboarding an owner's connected account, a listener's checkout (its
 * amount, currency, destination and metadata as Stripe receives them),
 * signed webhook deliveries recording one purchase per checkout, the
 * buyer's return, and who the purchase opens the player for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { FakeStripe, signedDelivery } from '../../testing/fake-stripe.ts';
import { PURCHASE_SESSION_TTL_MS } from '../listening/listener-session.ts';

const SECRET = 'whsec_payments_test_secret';
const OWNER = 'seller@example.com';
const paywall = { price: 499, fulfillment: 'allow-access', recipient: 'customer' } as const;

/** The session cookie a response sets, as a Cookie header value (name=value), or undefined. */
const sessionCookieOf = (response: Response) => response.headers.getSetCookie().find((cookie) => cookie.startsWith('as_player_session='))?.split(';')[0];

describe.each(backends)('payments on %s', (backend) => {
  const stripe = new FakeStripe();
  const env: Record<string, string> = { STRIPE_SECRET_KEY: 'sk_test_payments', STRIPE_WEBHOOK_SECRET: SECRET };
  // Before the server starts (hooks run in order): its Stripe is the fake.
  beforeAll(async () => {
    env.STRIPE_API_BASE = await stripe.start();
  });
  const t = useTestServer(backend, env);
  afterAll(() => stripe.stop());

  const origin = () => new URL(t.server.ctx.config.publicUrl).origin;
  const checkout = (playerid: string, headers: Record<string, string> = { Origin: origin() }) => t.fetch(`/players/${playerid}/checkout`, { method: 'POST', headers });
  const view = async (playerid: string, cookie?: string) => {
    const response = await t.fetch(`/players/${playerid}/view`, { headers: cookie ? { Cookie: cookie } : {} });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as Schemas['PlayerView'];
  };
  const deliver = (payload: string, secret = SECRET) => t.fetch('/payments/stripe/webhook', { method: 'POST', headers: signedDelivery(payload, secret), body: payload });
  const makePlayer = async (payment: Schemas['Payment'] = paywall) => {
    const { api } = await t.as(OWNER);
    const { data, error } = await api.POST('/players', { body: { name: 'Night Drive EP', public: true, payment } });
    expect(error).toBeUndefined();
    return data!;
  };
  /** A checkout started by a browser with no session yet: its id and the session cookie it was given. */
  const startCheckout = async (playerid: string) => {
    const response = await checkout(playerid);
    expect(response.status, await response.clone().text()).toBe(200);
    const body = (await response.json()) as Schemas['Checkout'];
    return { body, cookie: sessionCookieOf(response)! };
  };

  describe('with the owner onboarded', () => {
    let accountId: string;

    beforeAll(async () => {
      const { api } = await t.as(OWNER);
      const { data, error } = await api.POST('/me/payment-provider', { body: { provider: 'stripe' } });
      expect(error).toBeUndefined();
      accountId = data!.accountId!;
    });

    it('onboards the owner: makes an Express account once, stores it, answers the onboarding link, and reports its status as Stripe does', async () => {
      const created = stripe.calls('POST /v1/accounts');
      expect(created).toHaveLength(1);
      expect(created[0].params).toMatchObject({ type: 'express', email: OWNER, 'capabilities[card_payments][requested]': 'true', 'capabilities[transfers][requested]': 'true' });
      expect(created[0].headers['idempotency-key']).toMatch(/^audio-share-connect-usr_/);
      expect(accountId).toMatch(/^acct_/);
      const user = await t.server.ctx.store.users.findOrCreate(OWNER, Date.now());
      expect(user.paymentProvider).toMatchObject({ provider: 'stripe', accountId });

      const { api } = await t.as(OWNER);
      // Connecting again reuses the account: a new link, no new account.
      const { data: again } = await api.POST('/me/payment-provider', { body: { provider: 'stripe' } });
      expect(again).toMatchObject({ connected: true, accountId, chargesEnabled: false, detailsSubmitted: false, onboardingUrl: expect.stringContaining(`/setup/${accountId}/`) });
      expect(again!.onboardingUrlExpires).toBeGreaterThan(Date.now());
      expect(stripe.calls('POST /v1/accounts')).toHaveLength(1);
      const link = stripe.calls('POST /v1/account_links').at(-1)!;
      expect(link.params).toMatchObject({ account: accountId, type: 'account_onboarding', return_url: `${origin()}/docs#tag/Account/operation/getPaymentProvider` });

      expect((await api.GET('/me/payment-provider')).data).toMatchObject({ connected: true, accountId, chargesEnabled: false });
      stripe.accounts.get(accountId)!.charges_enabled = true;
      stripe.accounts.get(accountId)!.details_submitted = true;
      expect((await api.GET('/me/payment-provider')).data).toMatchObject({ connected: true, accountId, chargesEnabled: true, detailsSubmitted: true });
    });

    it('refuses a checkout while the owner\'s account cannot take payments, and charges nothing', async () => {
      const player = await makePlayer();
      stripe.accounts.get(accountId)!.charges_enabled = false;
      try {
        const response = await checkout(player.id);
        expect(response.status).toBe(409);
        expect(await response.json()).toMatchObject({ type: '/problems/payment-provider-required', detail: expect.stringContaining('not finished setting up payments') });
      } finally {
        stripe.accounts.get(accountId)!.charges_enabled = true;
      }
    });

    it('makes a checkout for the price, in the owner\'s account, bound to this browser\'s session; only from the player\'s page', async () => {
      const player = await makePlayer();
      expect((await checkout(player.id, {})).status).toBe(403);
      expect((await checkout(player.id, { Origin: 'https://evil.example' })).status).toBe(403);
      const { body, cookie } = await startCheckout(player.id);
      expect(body).toMatchObject({ object: 'checkout', id: expect.stringMatching(/^cs_test_/), price: 499, currency: 'usd' });
      expect(body.url).toBe(`${stripe.base}/c/pay/${body.id}`);
      expect(cookie).toBeDefined();
      const sent = stripe.calls('POST /v1/checkout/sessions').at(-1)!.params;
      expect(sent).toMatchObject({
        mode: 'payment',
        'line_items[0][quantity]': '1',
        'line_items[0][price_data][unit_amount]': '499',
        'line_items[0][price_data][currency]': 'usd',
        'line_items[0][price_data][product_data][name]': 'Night Drive EP',
        'payment_intent_data[on_behalf_of]': accountId,
        'payment_intent_data[transfer_data][destination]': accountId,
        'metadata[audio_share_player]': player.id,
        'metadata[audio_share_session]': expect.stringMatching(/^pss_/),
        success_url: `${origin()}/p/${player.id}?checkout={CHECKOUT_SESSION_ID}`,
        cancel_url: `${origin()}/p/${player.id}`,
      });
      // Stripe: 30 minutes to 24 hours ahead.
      expect(Number(sent.expires_at) * 1000 - Date.now()).toBeGreaterThan(30 * 60_000);
      // A player without a paywall has nothing to buy.
      const { api } = await t.as(OWNER);
      const { data: free } = await api.POST('/players', { body: { name: 'Free', public: true } });
      expect((await checkout(free!.id)).status).toBe(409);
    });

    it("pays the project owner's account for a player an editor made, also after the editor is removed; the editor cannot sell it", async () => {
      const EDITOR = 'editor.with.stripe@example.com';
      const owner = await t.as(OWNER);
      const editor = await t.as(EDITOR);
      const { data: connected } = await editor.api.POST('/me/payment-provider', { body: { provider: 'stripe' } });
      const editorAccount = connected!.accountId!;
      expect(editorAccount).not.toBe(accountId);
      stripe.accounts.get(accountId)!.charges_enabled = true;
      stripe.accounts.get(editorAccount)!.charges_enabled = true;
      const { data: review } = await owner.api.POST('/players', { body: { name: 'Review', collaborators: [{ email: EDITOR, role: 'editor' }] } });
      const projectid = review!.projectid;

      const refused = await editor.api.POST('/players', { body: { name: 'Sold behind your back', projectid, public: true, payment: paywall } });
      expect(refused.response.status).toBe(403);
      const { data: made } = await editor.api.POST('/players', { body: { name: 'Made by the editor', projectid, public: true } });
      expect((await editor.api.POST('/players/{playerid}', { params: { path: { playerid: made!.id } }, body: { payment: paywall } })).response.status).toBe(403);
      const { error } = await owner.api.POST('/players/{playerid}', { params: { path: { playerid: made!.id } }, body: { payment: paywall } });
      expect(error).toBeUndefined();
      const destination = () => stripe.calls('POST /v1/checkout/sessions').at(-1)!.params['payment_intent_data[transfer_data][destination]'];
      await startCheckout(made!.id);
      expect(destination()).toBe(accountId);

      // A player recorded as the editor's (as the server made them before): still the project's owner is paid.
      const editorId = (await t.server.ctx.store.users.findByEmail(EDITOR))!.id;
      await t.server.ctx.store.db.execute('UPDATE players SET owner_id = $1 WHERE id = $2', [editorId, made!.id]);
      await startCheckout(made!.id);
      expect(destination()).toBe(accountId);

      // The owner removes the editor: checkouts still pay the owner, and the player is listed as the owner's alone.
      expect((await t.fetch(`/players/${review!.id}/collaborators/${encodeURIComponent(EDITOR)}`, { method: 'DELETE', token: owner.token })).status).toBe(200);
      await startCheckout(made!.id);
      expect(destination()).toBe(accountId);
      expect(stripe.calls('POST /v1/checkout/sessions').map((call) => call.params['payment_intent_data[transfer_data][destination]'])).not.toContain(editorAccount);
      expect((await owner.api.GET('/players')).data!.map((player) => player.id)).toContain(made!.id);
      expect((await editor.api.GET('/players')).data!.map((player) => player.id)).not.toContain(made!.id);
    });

    it('records one purchase from a signed checkout.session.completed, however often it comes, and opens a customer paywall for the buyer only', async () => {
      const player = await makePlayer();
      const buyer = await startCheckout(player.id);
      const other = await startCheckout(player.id);
      expect((await view(player.id, buyer.cookie)).access).toMatchObject({ state: 'locked', lock: 'paywall' });

      const event = stripe.paid(buyer.body.id);
      const first = await deliver(event);
      expect(first.status, await first.clone().text()).toBe(200);
      expect(await first.json()).toEqual({ received: true });
      // Stripe retries a delivery it did not see answered: the same event again is the same purchase.
      expect((await deliver(event)).status).toBe(200);
      const purchases = await t.server.ctx.store.purchases.listPlayer(player.id);
      expect(purchases).toHaveLength(1);
      expect(purchases[0]).toMatchObject({ checkoutId: buyer.body.id, amount: 499, currency: 'usd', id: expect.stringMatching(/^pur_/) });

      const bought = await view(player.id, buyer.cookie);
      expect(bought.access).toMatchObject({ state: 'open', viewer: { kind: 'purchaser' } });
      expect(bought.paywall).toMatchObject({ paid: true, purchase: { id: purchases[0].id } });
      // `customer`: the listener who started another checkout, and one with no session, stay locked.
      expect((await view(player.id, other.cookie)).access).toMatchObject({ state: 'locked', lock: 'paywall' });
      expect((await view(player.id)).access).toMatchObject({ state: 'locked', lock: 'paywall' });
      // Paid already: no second checkout for the buyer.
      expect((await checkout(player.id, { Origin: origin(), Cookie: buyer.cookie })).status).toBe(409);
    });

    it('opens an everyone paywall for every listener once one has paid', async () => {
      const player = await makePlayer({ price: 1500, fulfillment: 'allow-access', recipient: 'everyone' });
      const buyer = await startCheckout(player.id);
      expect((await view(player.id)).access.state).toBe('locked');
      expect((await deliver(stripe.paid(buyer.body.id))).status).toBe(200);
      expect((await view(player.id)).access).toMatchObject({ state: 'open', viewer: { kind: 'purchaser' } });
    });

    it('refuses a delivery whose signature does not verify (400), and records nothing', async () => {
      const player = await makePlayer();
      const buyer = await startCheckout(player.id);
      const event = stripe.paid(buyer.body.id);
      const forged = await deliver(event, 'whsec_someone_else');
      expect(forged.status).toBe(400);
      expect(forged.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await forged.json()).toMatchObject({ type: '/problems/validation-error', detail: expect.stringContaining('signature') });
      // The right signature over other bytes: the body was changed on the way.
      const tampered = await t.fetch('/payments/stripe/webhook', { method: 'POST', headers: signedDelivery(event, SECRET), body: event.replace('"paid"', '"paid" ') });
      expect(tampered.status).toBe(400);
      const unsigned = await t.fetch('/payments/stripe/webhook', { ...json(JSON.parse(event)) });
      expect(unsigned.status).toBe(400);
      expect(await t.server.ctx.store.purchases.listPlayer(player.id)).toEqual([]);
      expect((await view(player.id, buyer.cookie)).access.state).toBe('locked');
    });

    it('acknowledges events that are not a paid checkout of a player, recording nothing', async () => {
      const other = JSON.stringify({ id: 'evt_other', object: 'event', type: 'customer.created', data: { object: { id: 'cus_1', object: 'customer' } } });
      expect((await deliver(other)).status).toBe(200);
      const foreign = JSON.stringify({ id: 'evt_foreign', object: 'event', type: 'checkout.session.completed', data: { object: { id: 'cs_test_foreign', object: 'checkout.session', payment_status: 'paid', metadata: {} } } });
      expect((await deliver(foreign)).status).toBe(200);
      expect(await t.server.ctx.store.purchases.byCheckout('cs_test_foreign')).toBeUndefined();
    });

    it('claims the purchase when the buyer comes back, before the webhook: a year-long session with the receipt; another browser cannot', async () => {
      const player = await makePlayer();
      const buyer = await startCheckout(player.id);
      const claim = (cookie: string | undefined, checkoutId: string) =>
        t.fetch(`/players/${player.id}/session`, { ...json({ checkout: checkoutId }), headers: { 'Content-Type': 'application/json', Origin: origin(), ...(cookie ? { Cookie: cookie } : {}) } });

      // Not paid yet: the view, still locked.
      const early = await claim(buyer.cookie, buyer.body.id);
      expect(early.status).toBe(200);
      expect(((await early.json()) as Schemas['PlayerView']).access.state).toBe('locked');

      stripe.paid(buyer.body.id);
      const returned = await claim(buyer.cookie, buyer.body.id);
      expect(returned.status, await returned.clone().text()).toBe(200);
      const opened = (await returned.json()) as Schemas['PlayerView'];
      expect(opened.access).toMatchObject({ state: 'open', viewer: { kind: 'purchaser' } });
      expect(opened.paywall!.purchase).toMatchObject({ id: expect.stringMatching(/^pur_/), receiptUrl: expect.stringContaining('/receipts/') });
      const maxAge = Number(/Max-Age=(\d+)/.exec(returned.headers.getSetCookie().join())![1]);
      expect(maxAge).toBe(PURCHASE_SESSION_TTL_MS / 1000);

      // The webhook arriving afterwards changes nothing: one purchase.
      expect((await deliver(JSON.stringify({ id: 'evt_late', object: 'event', type: 'checkout.session.completed', data: { object: { ...stripe.sessions.get(buyer.body.id), object: 'checkout.session' } } }))).status).toBe(200);
      expect(await t.server.ctx.store.purchases.listPlayer(player.id)).toHaveLength(1);

      // The return URL in another browser opens nothing.
      const elsewhere = await claim(undefined, buyer.body.id);
      expect(elsewhere.status).toBe(409);
      expect(await elsewhere.json()).toMatchObject({ type: '/problems/conflict' });
    });
  });
});

describe('a server that takes no payments', () => {
  const t = useTestServer('sqlite', { STRIPE_SECRET_KEY: '', STRIPE_WEBHOOK_SECRET: '', STRIPE_API_BASE: '' });

  it('refuses a paywall, saying what its operator must configure, and refuses onboarding and checkout', async () => {
    const { api } = await t.as('seller@example.com');
    // A connection recorded by hand is not enough: no payment could be taken.
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_NoPayments001' } });
    const refused = await api.POST('/players', { body: { name: 'Paid', public: true, payment: paywall } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ type: '/problems/payment-provider-required', detail: expect.stringContaining('STRIPE_SECRET_KEY') });
    const onboarding = await api.POST('/me/payment-provider', { body: { provider: 'stripe' } });
    expect(onboarding.response.status).toBe(409);
    expect(onboarding.error).toMatchObject({ type: '/problems/payments-not-configured' });
    const { data: free } = await api.POST('/players', { body: { name: 'Free', public: true } });
    const response = await t.fetch(`/players/${free!.id}/checkout`, { method: 'POST', headers: { Origin: new URL(t.server.ctx.config.publicUrl).origin } });
    expect(response.status).toBe(409);
  });
});
