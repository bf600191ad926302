/**
 * Passkeys (extension), as a browser on the server's own pages calls them:
 * an account of this file's own (signed up by invitation) adds a passkey,
 * lists, renames and removes it, and signs in with it, naming no account.
 * The browser's part is a software authenticator
 * (server/testing/webauthn-authenticator.ts); the mock, which keeps no
 * state, answers with the spec's examples. Chromium's own authenticator is
 * tested in web/passkeys-browser.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { baseUrl, checkedFetch, onMock, passkeyInvite, raw } from './support/context.ts';
import { SoftAuthenticator } from '../server/testing/webauthn-authenticator.ts';

const origin = new URL(baseUrl).origin;

/** A call as the server's own page makes it: its Origin, and the session's cookie when there is one. */
function call(path: string, init: { method?: string; body?: unknown; cookie?: string } = {}): Promise<Response> {
  const headers = new Headers({ Origin: origin });
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  if (init.cookie) headers.set('Cookie', init.cookie);
  return checkedFetch(baseUrl + path, { method: init.method ?? 'GET', headers, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });
}

const cookieOf = (response: Response) => response.headers.getSetCookie().map((line) => line.split(';')[0]).find((pair) => /session=/.test(pair)) ?? 'as_session=mock';

describe('passkeys (extension)', () => {
  const authenticator = new SoftAuthenticator(origin);
  let cookie = '';
  let passkeyId = 'pky_8c2m5r9t3w';

  beforeAll(async () => {
    const signedUp = await call('/auth/signup', { method: 'POST', body: { name: 'Passkey Person', email: 'contract-passkeys@example.com', password: 'a passkey person passphrase', invite: passkeyInvite } });
    expect(signedUp.status).toBe(200);
    cookie = cookieOf(signedUp);
  });

  it('startPasskeyRegistration and addPasskey add a passkey; addPasskey refuses one without a name', async () => {
    const started = await call('/me/passkeys/options', { method: 'POST', cookie });
    expect(started.status).toBe(200);
    const { challengeId, options } = await started.json();
    const response = authenticator.create(options);
    expect((await call('/me/passkeys', { method: 'POST', cookie, body: { challengeId, response } })).status).toBe(400);
    const added = await call('/me/passkeys', { method: 'POST', cookie, body: { challengeId, name: 'Contract key', response } });
    expect(added.status).toBe(200);
    passkeyId = (await added.json()).id;
  });

  it('startPasskeyRegistration and listPasskeys need a session: a token is refused, and no credential is 401', async () => {
    expect((await raw('/me/passkeys/options', { method: 'POST' })).status).toBe(403);
    expect((await raw('/me/passkeys/options', { method: 'POST', token: null })).status).toBe(401);
    expect((await raw('/me/passkeys')).status).toBe(403);
    expect((await raw('/me/passkeys', { token: null })).status).toBe(401);
  });

  it('listPasskeys lists the passkey', async () => {
    const listed = await call('/me/passkeys', { cookie });
    expect(listed.status).toBe(200);
    expect((await listed.json()).map((passkey: { id: string }) => passkey.id)).toContain(passkeyId);
  });

  it('renamePasskey renames it, and refuses an empty name', async () => {
    const renamed = await call(`/me/passkeys/${passkeyId}`, { method: 'POST', cookie, body: { name: 'Renamed key' } });
    expect(renamed.status).toBe(200);
    expect((await call(`/me/passkeys/${passkeyId}`, { method: 'POST', cookie, body: { name: '' } })).status).toBe(400);
  });

  it('startPasskeySignIn and finishPasskeySignIn sign in with it, naming no account; an unknown parameter and a malformed answer are refused', async () => {
    expect((await call('/auth/passkeys/options?email=contract-passkeys@example.com', { method: 'POST' })).status).toBe(400);
    const started = await call('/auth/passkeys/options', { method: 'POST' });
    expect(started.status).toBe(200);
    const { challengeId, options } = await started.json();
    expect(options).not.toHaveProperty('allowCredentials');
    const bad = await call('/auth/passkeys/signin', { method: 'POST', body: { challengeId, response: { id: 'x', rawId: 'x', type: 'password', response: {} } } });
    expect(bad.status).toBe(400);
    const signedIn = await call('/auth/passkeys/signin', { method: 'POST', body: { challengeId, response: authenticator.get(options) } });
    expect(signedIn.status).toBe(200);
    if (!onMock) expect(await signedIn.json()).toMatchObject({ email: 'contract-passkeys@example.com' });
    expect((await call('/me', { cookie: cookieOf(signedIn) })).status).toBe(200);
  });

  it.skipIf(onMock)('finishPasskeySignIn answers 401 for a passkey the server does not know (needs stored state: skipped on the mock)', async () => {
    const { challengeId, options } = await (await call('/auth/passkeys/options', { method: 'POST' })).json();
    const stranger = new SoftAuthenticator(origin);
    stranger.create({ rp: { id: options.rpId }, user: { id: 'dXNy' }, challenge: 'AAAA' });
    const refused = await call('/auth/passkeys/signin', { method: 'POST', body: { challengeId, response: stranger.get(options) } });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: '/problems/unauthorized' });
  });

  it('removePasskey removes it; it is then not found (on the mock: a call without a session is refused)', async () => {
    expect((await call(`/me/passkeys/${passkeyId}`, { method: 'DELETE', cookie })).status).toBe(200);
    if (onMock) expect((await raw(`/me/passkeys/${passkeyId}`, { method: 'DELETE', token: null })).status).toBe(401);
    else expect((await call(`/me/passkeys/${passkeyId}`, { method: 'DELETE', cookie })).status).toBe(404);
  });
});
