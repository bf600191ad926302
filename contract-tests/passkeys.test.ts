/**
 * Passkeys (extension), as a partner's client sees them. Signing in with a
 * passkey needs no credential; the account's passkeys are managed only with
 * a signed-in session, which this suite (made of bearer tokens) does not
 * have: there a token is refused. The ceremonies themselves are tested on
 * each store in server/resources/passkeys/passkeys.test.ts and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { baseUrl, onMock, raw } from './support/context.ts';

/** Sign-in is taken only from the server's own pages: a browser there sends its origin. */
const ownPage = { 'Content-Type': 'application/json', Origin: new URL(baseUrl).origin, 'Sec-Fetch-Site': 'same-origin' };

describe('passkeys (extension)', () => {
  it('startPasskeySignIn answers the options of a sign-in that names no account, with no credential', async () => {
    const response = await raw('/auth/passkeys/options', { method: 'POST', token: null });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.challengeId).toEqual(expect.any(String));
    expect(body.options.challenge).toEqual(expect.any(String));
    expect(body.options).not.toHaveProperty('allowCredentials');
  });

  it('finishPasskeySignIn refuses an answer without its challenge, or not an answer at all', async () => {
    const missing = await raw('/auth/passkeys/signin', { method: 'POST', token: null, headers: ownPage, body: JSON.stringify({ response: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }) });
    expect(missing.status).toBe(400);
    const wrongType = await raw('/auth/passkeys/signin', { method: 'POST', token: null, headers: ownPage, body: JSON.stringify({ challengeId: 'chl_x', response: { id: 'x', rawId: 'x', type: 'password', response: {} } }) });
    expect(wrongType.status).toBe(400);
  });

  it.skipIf(onMock)('finishPasskeySignIn answers 401 for a passkey the server does not know (needs stored state: skipped on the mock)', async () => {
    const { challengeId } = await (await raw('/auth/passkeys/options', { method: 'POST', token: null })).json();
    const response = { id: 'AAAAAAAAAAAAAAAAAAAAAA', rawId: 'AAAAAAAAAAAAAAAAAAAAAA', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' }, clientExtensionResults: {} };
    const refused = await raw('/auth/passkeys/signin', { method: 'POST', token: null, headers: ownPage, body: JSON.stringify({ challengeId, response }) });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ type: '/problems/unauthorized' });
  });

  it('the account\'s passkeys are not managed with a bearer token', async () => {
    expect((await raw('/me/passkeys')).status).toBe(403);
    expect((await raw('/me/passkeys/options', { method: 'POST' })).status).toBe(403);
    expect((await raw('/me/passkeys/pky_8c2m5r9t3w', { method: 'DELETE' })).status).toBe(403);
    expect((await raw('/me/passkeys', { token: null })).status).toBe(401);
  });
});
