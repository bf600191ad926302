/**
 * Issue 28 ("One door"): a new password takes the account back. Under open
 * registration someone may sign up first with another person's address
 * (a squatter), and make a personal token, a passkey and an app's grant
 * while it is theirs. The address's owner then resets the password through
 * the mailed link (real SMTP on loopback), which also verifies the address,
 * so the players shared with it open to the account: the squatter must keep
 * nothing. The same for a change of password, which keeps only the session
 * that made it. Each way in is tried as its holder would: the token on the
 * API, the passkey at sign-in, the app's refresh token at the token endpoint
 * and its access token on the API.
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../auth/passwords.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { consentByFetch, startCallback } from '../../testing/oauth-partner.ts';
import { linkTo, startSmtpSink, type SmtpSink } from '../../testing/smtp-sink.ts';
import { SoftAuthenticator } from '../../testing/webauthn-authenticator.ts';

const SQUATTER_PASSWORD = 'the squatter chose this passphrase';
const OWNER_PASSWORD = 'the owner of the address chose this';

type Json = Record<string, unknown>;

describe.each(backends)('a new password takes the account back, on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: 'Audio Share <audio@example.org>', JOB_POLL_MS: '20', REGISTRATION: 'open', OAUTH_DYNAMIC_REGISTRATION: 'true' };
  let sink: SmtpSink;
  let callback: Awaited<ReturnType<typeof startCallback>>;
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
    callback = await startCallback();
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await callback?.stop();
    await sink?.close();
  });

  const origin = () => new URL(t.server.apiUrl).origin;
  /** A request from the server's own page, as a browser sends it, with a session cookie when there is one. */
  const ownPage = (path: string, { method = 'GET', body, cookie }: { method?: string; body?: unknown; cookie?: string } = {}) =>
    t.fetch(path, {
      method,
      headers: { Origin: origin(), 'Sec-Fetch-Site': 'same-origin', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...(cookie ? { Cookie: cookie } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const cookieOf = (response: Response) => response.headers.getSetCookie().find((line) => line.startsWith('as_session='))?.split(';')[0];
  /** An account with the squatter's password and the address unverified, as an open sign-up without mail makes it. */
  const squat = async (email: string) => {
    const user = await t.server.ctx.store.users.findOrCreate(email, Date.now());
    await t.server.ctx.store.users.setPasswordHash(user.id, await hashPassword(SQUATTER_PASSWORD));
    await t.server.ctx.store.db.execute('UPDATE users SET email_verified = 0 WHERE id = $1', [user.id]);
  };
  const signIn = async (email: string, password: string) => {
    const response = await ownPage('/auth/signin', { method: 'POST', body: { email, password } });
    return { status: response.status, cookie: cookieOf(response) };
  };
  const insecure = { execute: [client.allowInsecureRequests], algorithm: 'oauth2' as const };

  /** A passkey sign-in with the authenticator's newest passkey: the API's status. */
  async function passkeySignIn(authenticator: SoftAuthenticator): Promise<number> {
    const started = (await (await ownPage('/auth/passkeys/options', { method: 'POST' })).json()) as { challengeId: string; options: Json };
    return (await ownPage('/auth/passkeys/signin', { method: 'POST', body: { challengeId: started.challengeId, response: authenticator.get(started.options) } })).status;
  }

  /**
   * Everything a holder of the account's session makes that outlives the session: a personal token, a passkey, and an
   * app let in (registered dynamically, RFC 7591, consented on the real consent page, its code exchanged).
   */
  async function waysIn(cookie: string) {
    const made = await ownPage('/me/tokens', { method: 'POST', body: { name: 'Kept for later', scopes: ['account:read'] }, cookie });
    expect(made.status).toBe(200);
    const { secret: token } = (await made.json()) as { secret: string };

    const authenticator = new SoftAuthenticator(origin());
    const { challengeId, options } = (await (await ownPage('/me/passkeys/options', { method: 'POST', cookie })).json()) as { challengeId: string; options: Json };
    expect((await ownPage('/me/passkeys', { method: 'POST', body: { challengeId, name: 'Kept for later', response: authenticator.create(options) }, cookie })).status).toBe(200);

    const config = await client.dynamicClientRegistration(
      new URL(t.server.address),
      { client_name: 'Kept for later', redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', application_type: 'native' },
      client.None(),
      insecure,
    );
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: callback.redirectUri,
      scope: 'projects:read',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const back = await consentByFetch(url, cookie);
    const app = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });

    // Each works before the new password.
    expect((await t.fetch('/me', { token })).status).toBe(200);
    expect(await passkeySignIn(authenticator)).toBe(200);
    expect((await t.fetch('/projects', { token: app.access_token })).status).toBe(200);
    return { token, authenticator, config, app };
  }

  /** Each way in, tried again by its holder: none works. */
  async function expectAllEnded({ token, authenticator, config, app }: Awaited<ReturnType<typeof waysIn>>) {
    const withToken = await t.fetch('/me', { token });
    expect(withToken.status).toBe(401);
    expect(withToken.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await passkeySignIn(authenticator)).toBe(401);
    await expect(client.refreshTokenGrant(config, app.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await t.fetch('/projects', { token: app.access_token })).status).toBe(401);
  }

  it('a reset through the mailed link ends the squatter’s sessions, token, passkey and app, and says so', async () => {
    const email = `owner-${backend}@example.com`;
    // The squatter made an account first with the owner's address, nothing verified: open registration on a server
    // without mail signs such a sign-up straight in (one with mail now sends the finishing link to the address, which
    // the squatter cannot read), and accounts made so before this change exist.
    await squat(email);
    const signedIn = await signIn(email, SQUATTER_PASSWORD);
    expect(signedIn.status).toBe(200);
    const squatter = signedIn.cookie!;
    expect(await (await t.fetch('/me', { headers: { Cookie: squatter } })).json()).toMatchObject({ email, emailVerified: false });
    const ways = await waysIn(squatter);
    const userId = ((await (await t.fetch('/me', { headers: { Cookie: squatter } })).json()) as { id: string }).id;

    // The owner asks for a reset, and uses the link mailed to the address.
    expect((await ownPage('/auth/password-reset', { method: 'POST', body: { email } })).status).toBe(202);
    const reset = linkTo(await sink.nextTo(email), '/reset-password').searchParams.get('token')!;
    const done = await ownPage('/auth/password-reset/complete', { method: 'POST', body: { token: reset, password: OWNER_PASSWORD } });
    expect(done.status).toBe(200);
    // The squatter's sign-up session and the one the passkey sign-in made; the token, the passkey, the app.
    expect(await done.json()).toEqual({ ended: 2, tokens: 1, passkeys: 1, apps: 1 });

    expect((await t.fetch('/me', { headers: { Cookie: squatter } })).status).toBe(401);
    await expectAllEnded(ways);
    expect((await signIn(email, SQUATTER_PASSWORD)).status).toBe(401);
    // The owner's account now: verified, with nothing of the squatter's left to list.
    const owner = await signIn(email, OWNER_PASSWORD);
    expect(owner.status).toBe(200);
    expect(await (await t.fetch('/me', { headers: { Cookie: owner.cookie! } })).json()).toMatchObject({ emailVerified: true });
    expect(await (await ownPage('/me/tokens', { cookie: owner.cookie })).json()).toEqual([]);
    expect(await (await ownPage('/me/passkeys', { cookie: owner.cookie })).json()).toEqual([]);
    expect(await (await ownPage('/me/connected-apps', { cookie: owner.cookie })).json()).toEqual([]);
    const events = await t.server.ctx.store.securityEvents.listOf(userId);
    expect(events.find((event) => event.kind === 'password-reset')?.detail).toBe('2 sessions, 1 personal token, 1 passkey and 1 connected app ended');
  });

  it('a change of password ends every other session, and every token, passkey and app made before it', async () => {
    const email = `changer-${backend}@example.com`;
    await squat(email);
    const kept = (await signIn(email, SQUATTER_PASSWORD)).cookie!;
    const other = (await signIn(email, SQUATTER_PASSWORD)).cookie!;
    const ways = await waysIn(other);

    const changed = await ownPage('/me/password', { method: 'POST', body: { currentPassword: SQUATTER_PASSWORD, newPassword: OWNER_PASSWORD }, cookie: kept });
    expect(changed.status).toBe(200);
    // The other sign-in's session and the one the passkey sign-in made; the token, the passkey, the app.
    expect(await changed.json()).toEqual({ ended: 2, tokens: 1, passkeys: 1, apps: 1 });
    expect((await t.fetch('/me', { headers: { Cookie: kept } })).status).toBe(200);
    expect((await t.fetch('/me', { headers: { Cookie: other } })).status).toBe(401);
    await expectAllEnded(ways);

    // What is made after the change works: the change ended what was there, not what comes.
    const later = await ownPage('/me/tokens', { method: 'POST', body: { name: 'After the change', scopes: ['account:read'] }, cookie: kept });
    expect((await t.fetch('/me', { token: ((await later.json()) as { secret: string }).secret })).status).toBe(200);
  });
});
