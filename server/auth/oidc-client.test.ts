import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type OidcSettings } from '../config.ts';
import { startOidcProvider, useOidcProvider, type TestOidcProvider } from '../testing/oidc-provider.ts';
import { createOidcClient, OidcError, type OidcClient } from './oidc-client.ts';

// Never opened: the tests take the provider's redirect and hand it to the client themselves.
const redirectUri = 'http://127.0.0.1:9/auth/oidc/callback';
const settingsOf = (provider: TestOidcProvider): OidcSettings => loadConfig({ DATA_DIR: mkdtempSync(join(tmpdir(), 'oidc-')), ...provider.env('Test SSO') }).oidc!;

async function failure(promise: Promise<unknown>): Promise<OidcError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OidcError);
  return error as OidcError;
}

describe('the OpenID Connect client', () => {
  const op = useOidcProvider();
  let oidc: OidcClient;
  beforeAll(async () => {
    await op.provider.allowRedirect(redirectUri);
    op.provider.addPerson('ada', { email: 'ada@example.org', emailVerified: true, name: 'Ada Lovelace' });
    op.provider.addPerson('bob', { email: 'bob@example.org', emailVerified: false });
    op.provider.addPerson('cy', {});
    oidc = createOidcClient(settingsOf(op.provider), { retryAfterMs: 0 });
  });

  it('sends the browser with a PKCE challenge (S256), state and nonce, and learns who signed in from the code', async () => {
    const trip = await oidc.begin(redirectUri);
    const sent = trip.url.searchParams;
    expect(trip.url.origin).toBe(op.provider.issuer);
    expect(Object.fromEntries(sent)).toMatchObject({ response_type: 'code', client_id: op.provider.clientId, redirect_uri: redirectUri, scope: 'openid email profile', code_challenge_method: 'S256', state: trip.state, nonce: trip.nonce });
    expect(sent.get('code_challenge')).toBe(createHash('sha256').update(trip.codeVerifier).digest('base64url'));
    const again = await oidc.begin(redirectUri);
    expect([again.state, again.nonce, again.codeVerifier]).not.toContain(trip.state);
    expect(again.codeVerifier).not.toBe(trip.codeVerifier);

    const back = await op.provider.signIn(trip.url, 'ada');
    expect(back.href.startsWith(`${redirectUri}?`)).toBe(true);
    expect(back.searchParams.get('state')).toBe(trip.state);
    expect(await oidc.finish(back, trip)).toEqual({ issuer: op.provider.issuer, subject: 'ada', email: 'ada@example.org', emailVerified: true, name: 'Ada Lovelace' });
    // This provider keeps the email out of the ID token (OpenID Connect Core's rule for a code): it came from userinfo.
    expect(op.provider.requests).toContain('/me');
  });

  it('believes an email verified only when the provider says so', async () => {
    const bob = await oidc.begin(redirectUri);
    expect(await oidc.finish(await op.provider.signIn(bob.url, 'bob'), bob)).toMatchObject({ subject: 'bob', email: 'bob@example.org', emailVerified: false, name: undefined });
    const cy = await oidc.begin(redirectUri);
    expect(await oidc.finish(await op.provider.signIn(cy.url, 'cy'), cy)).toEqual({ issuer: op.provider.issuer, subject: 'cy', email: undefined, emailVerified: false, name: undefined });
  });

  it('refuses a tampered state, and a code given with another round trip’s state', async () => {
    const trip = await oidc.begin(redirectUri);
    const back = await op.provider.signIn(trip.url, 'ada');
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${trip.state}x`);
    expect((await failure(oidc.finish(tampered, trip))).reason).toBe('invalid');
    const other = await oidc.begin(redirectUri);
    expect((await failure(oidc.finish(back, { ...trip, state: other.state }))).reason).toBe('invalid');
    const missing = new URL(back);
    missing.searchParams.delete('state');
    expect((await failure(oidc.finish(missing, trip))).reason).toBe('invalid');
  });

  it('refuses a code exchanged with the wrong PKCE verifier, a wrong nonce, or a second time', async () => {
    const trip = await oidc.begin(redirectUri);
    const other = await oidc.begin(redirectUri);
    const wrongVerifier = await failure(oidc.finish(await op.provider.signIn(trip.url, 'ada'), { ...trip, codeVerifier: other.codeVerifier }));
    expect(wrongVerifier).toMatchObject({ reason: 'invalid', providerError: 'invalid_grant' });

    const second = await oidc.begin(redirectUri);
    const wrongNonce = await failure(oidc.finish(await op.provider.signIn(second.url, 'ada'), { ...second, nonce: other.nonce }));
    expect(wrongNonce.reason).toBe('invalid');
    expect(wrongNonce.message).toMatch(/nonce/);

    const third = await oidc.begin(redirectUri);
    const back = await op.provider.signIn(third.url, 'ada');
    expect(await oidc.finish(back, third)).toMatchObject({ subject: 'ada' });
    expect(await failure(oidc.finish(back, third))).toMatchObject({ reason: 'invalid', providerError: 'invalid_grant' });
  });

  it('says the provider refused when the person cancels there', async () => {
    const trip = await oidc.begin(redirectUri);
    const back = await op.provider.cancel(trip.url);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(await failure(oidc.finish(back, trip))).toMatchObject({ reason: 'refused', providerError: 'access_denied' });
  });
});

describe('discovery', () => {
  it('happens on first use, not before, and is tried again after a failure', async () => {
    const provider = await startOidcProvider();
    try {
      await provider.allowRedirect(redirectUri);
      await provider.pause();
      // Made while the provider is down: nothing is asked yet, so nothing fails.
      let now = 0;
      const oidc = createOidcClient(settingsOf(provider), { retryAfterMs: 1000, now: () => now });
      expect(await failure(oidc.begin(redirectUri))).toMatchObject({ reason: 'unavailable' });
      await provider.resume();
      // Within retryAfterMs the failure stands, without asking.
      expect(await failure(oidc.begin(redirectUri))).toMatchObject({ reason: 'unavailable' });
      now += 1000;
      const trip = await oidc.begin(redirectUri);
      expect(trip.url.origin).toBe(provider.issuer);
      // Once discovered, it is not asked again: a round trip begins while the provider is down.
      await provider.pause();
      expect((await oidc.begin(redirectUri)).url.origin).toBe(provider.issuer);
      await provider.resume();
    } finally {
      await provider.close();
    }
  });
});

describe('a provider that puts the claims in the ID token', () => {
  it('is believed without asking userinfo', async () => {
    const provider = await startOidcProvider({ claimsInIdToken: true });
    try {
      await provider.allowRedirect(redirectUri);
      provider.addPerson('ada', { email: 'ada@example.org', emailVerified: true });
      const oidc = createOidcClient(settingsOf(provider));
      const trip = await oidc.begin(redirectUri);
      const back = await provider.signIn(trip.url, 'ada');
      expect(await oidc.finish(back, trip)).toMatchObject({ subject: 'ada', email: 'ada@example.org', emailVerified: true });
      expect(provider.requests).toContain('/token');
      expect(provider.requests).not.toContain('/me');
    } finally {
      await provider.close();
    }
  });
});
