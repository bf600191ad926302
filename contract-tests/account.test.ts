import { describe, expect, it } from 'vitest';
import { client, onMock, raw } from './support/context.ts';

const api = client();
const json = { 'Content-Type': 'application/json' };

describe('account (extension)', () => {
  it('getCurrentUser answers for a valid token and refuses a missing one', async () => {
    const { data, response } = await api.GET('/me');
    expect(response.status).toBe(200);
    expect(data!.object).toBe('user');
    expect((await raw('/me', { token: null })).status).toBe(401);
  });

  it('getPlayerPreferences and updatePlayerPreferences', async () => {
    const got = await api.GET('/me/preferences');
    expect(got.response.status).toBe(200);
    const updated = await api.POST('/me/preferences', { body: { options: { downloads: false } } });
    expect(updated.response.status).toBe(200);
  });

  it('updatePlayerPreferences applies the ETag of getPlayerPreferences sent back in If-Match, and refuses a malformed If-Match', async () => {
    const got = await api.GET('/me/preferences');
    const etag = got.response.headers.get('etag')!;
    const updated = await api.POST('/me/preferences', { params: { header: { 'If-Match': etag } }, body: { options: { stacks: null } } });
    expect(updated.response.status).toBe(200);
    const refused = await raw('/me/preferences', { method: 'POST', headers: { ...json, 'If-Match': 'W/' + etag.replaceAll('"', '') }, body: JSON.stringify({}) });
    expect(refused.status).toBe(400);
  });

  it.skipIf(onMock)('updatePlayerPreferences refuses a stale If-Match with 412 and changes nothing (needs stored state: skipped on the mock)', async () => {
    const before = await api.GET('/me/preferences');
    const stale = before.response.headers.get('etag')!;
    await api.POST('/me/preferences', { body: { options: { isrc: true } } });
    try {
      const refused = await api.POST('/me/preferences', { params: { header: { 'If-Match': stale } }, body: { options: { isrc: false, metadata: true } } });
      expect(refused.response.status).toBe(412);
      expect(refused.error).toMatchObject({ type: '/problems/precondition-failed', status: 412 });
      const { data } = await api.GET('/me/preferences');
      expect(data!.options.isrc).toBe(true);
      expect(data!.options).not.toHaveProperty('metadata');
    } finally {
      await api.POST('/me/preferences', { body: { options: { isrc: null } } });
    }
  });

  it('updatePlayerPreferences refuses a quality outside its enum; getPlayerPreferences refuses a missing token', async () => {
    const refused = await raw('/me/preferences', { method: 'POST', headers: json, body: JSON.stringify({ options: { quality: 'ultra' } }) });
    expect(refused.status).toBe(400);
    expect((await raw('/me/preferences', { token: null })).status).toBe(401);
  });

  it.skipIf(onMock)('stored preferences become the defaults of new players (needs stored state: skipped on the mock)', async () => {
    await api.POST('/me/preferences', { body: { public: false, options: { comments: false } } });
    try {
      const { data } = await api.POST('/players', { body: { name: 'Contract: preferences', options: { downloads: false } } });
      expect(data).toMatchObject({ public: false, options: { comments: false, downloads: false, serviceCTA: true } });
    } finally {
      await api.POST('/me/preferences', { body: { public: null, options: { comments: null, downloads: null } } });
    }
  });

  it('connect, read and disconnect a payment provider', async () => {
    const connected = await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_ContractTest01' } });
    expect(connected.response.status).toBe(200);
    const got = await api.GET('/me/payment-provider');
    expect(got.response.status).toBe(200);
    const disconnected = await api.DELETE('/me/payment-provider');
    expect(disconnected.response.status).toBe(200);
  });

  it('connectPaymentProvider refuses a malformed account id; get and disconnect refuse a missing token', async () => {
    const refused = await raw('/me/payment-provider', { method: 'POST', headers: json, body: JSON.stringify({ provider: 'stripe', accountId: 'nope' }) });
    expect(refused.status).toBe(400);
    expect((await raw('/me/payment-provider', { token: null })).status).toBe(401);
    expect((await raw('/me/payment-provider', { method: 'DELETE', token: null })).status).toBe(401);
  });

  it.skipIf(onMock)('a paywall is refused until a payment provider is connected (needs stored state: skipped on the mock)', async () => {
    await api.DELETE('/me/payment-provider');
    const payment = { price: 499, fulfillment: 'allow-download', recipient: 'customer' } as const;
    const refused = await api.POST('/players', { body: { name: 'Contract: paywall', payment } });
    expect(refused.response.status).toBe(409);
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_ContractTest01' } });
    const accepted = await api.POST('/players', { body: { name: 'Contract: paywall', payment } });
    expect(accepted.data?.payment).toEqual(payment);
  });
});
