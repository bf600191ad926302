/**
 * Passkeys through the API on each store, with a software authenticator
 * (server/testing/webauthn-authenticator.ts) in the browser's place: added,
 * listed, renamed, removed with a signed-in session; a sign-in that names no
 * account and starts a session; and what must be refused (a replayed or
 * expired challenge, another origin, another account's challenge or
 * passkey, a removed passkey, a counter gone back, a token in place of a
 * session, another site's page, too many failures).
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { SoftAuthenticator } from '../../testing/webauthn-authenticator.ts';
import { FAILURES_PER_ACCOUNT } from '../../auth/attempt-limits.ts';

type Json = Record<string, unknown>;

describe.each(backends)('passkeys on %s', (backend) => {
  const t = useTestServer(backend);
  let people = 0;
  const origin = () => new URL(t.server.apiUrl).origin;

  /** A request from the server's own page (the browser says so), with the session's cookie when there is one. */
  function call(path: string, { method = 'GET', body, cookie }: { method?: string; body?: unknown; cookie?: string } = {}) {
    const headers: Record<string, string> = { Origin: origin(), 'Sec-Fetch-Site': 'same-origin' };
    if (cookie) headers.Cookie = cookie;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    return t.fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  }
  const cookieOf = (response: Response) => response.headers.getSetCookie().find((line) => line.startsWith('as_session='))?.split(';')[0];

  /** A new account, signed in (a session made through the store: password sign-in has its own tests), with an authenticator of its own. */
  async function person() {
    const email = `passkey-${people++}@example.com`;
    const user = await t.server.ctx.store.users.findOrCreate(email, Date.now());
    const { secret } = await t.server.ctx.store.sessions.create(user.id, 'password', { userAgent: null, address: null }, Date.now());
    return { email, userId: user.id, cookie: `as_session=${secret}`, authenticator: new SoftAuthenticator(origin()) };
  }

  async function startRegistration(cookie: string) {
    const response = await call('/me/passkeys/options', { method: 'POST', cookie });
    expect(response.status).toBe(200);
    return (await response.json()) as { challengeId: string; options: Json };
  }

  /** Registers a new passkey of the authenticator's; answers the API's answer. */
  async function addPasskey(cookie: string, authenticator: SoftAuthenticator, name = 'Laptop') {
    const { challengeId, options } = await startRegistration(cookie);
    return call('/me/passkeys', { method: 'POST', body: { challengeId, name, response: authenticator.create(options) }, cookie });
  }

  const listPasskeys = async (cookie: string) => (await call('/me/passkeys', { cookie })).json();

  async function startSignIn() {
    const response = await call('/auth/passkeys/options', { method: 'POST' });
    expect(response.status).toBe(200);
    return (await response.json()) as { challengeId: string; options: Json };
  }

  const finishSignIn = (body: unknown) => call('/auth/passkeys/signin', { method: 'POST', body });

  /** A whole sign-in with the authenticator's newest passkey. */
  async function signIn(authenticator: SoftAuthenticator) {
    const { challengeId, options } = await startSignIn();
    return finishSignIn({ challengeId, response: authenticator.get(options) });
  }

  const eventsOf = async (userId: string) => (await t.server.ctx.store.securityEvents.listOf(userId)).map((event) => `${event.kind}${event.detail ? ` (${event.detail})` : ''}`);

  it('adds a passkey, lists it, and signs in with it without an email address: a new session, whose method is passkey', async () => {
    const { email, userId, cookie, authenticator } = await person();
    const { challengeId, options } = await startRegistration(cookie);
    // The accounts rules: "The relying party is PUBLIC_URL's host name"; discoverable, so that signing in needs no email.
    expect(options.rp).toMatchObject({ id: new URL(t.server.apiUrl).hostname });
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'preferred' });
    expect(options.user).toMatchObject({ name: email, id: Buffer.from(userId).toString('base64url') });

    const added = await call('/me/passkeys', { method: 'POST', body: { challengeId, name: '  Laptop  ', response: authenticator.create(options) }, cookie });
    expect(added.status).toBe(200);
    const passkey = await added.json();
    expect(passkey).toMatchObject({ object: 'passkey', name: 'Laptop', transports: ['internal'], backedUp: true, timeLastUsed: null });
    expect(await listPasskeys(cookie)).toEqual([passkey]);

    const started = await startSignIn();
    expect(started.options).toMatchObject({ rpId: new URL(t.server.apiUrl).hostname, userVerification: 'preferred' });
    expect(started.options).not.toHaveProperty('allowCredentials');
    // No email anywhere: the passkey names its account.
    const signedIn = await finishSignIn({ challengeId: started.challengeId, response: authenticator.get(started.options) });
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toMatchObject({ id: userId, object: 'user', email });
    const session = cookieOf(signedIn)!;
    expect(session).toBeDefined();
    expect(signedIn.headers.get('cache-control')).toBe('no-store');
    const sessions = await (await call('/me/sessions', { cookie: session })).json();
    expect(sessions.find((listed: { current: boolean }) => listed.current)).toMatchObject({ method: 'passkey' });
    const [used] = await listPasskeys(session);
    expect(used.timeLastUsed).toBeGreaterThanOrEqual(passkey.timeCreated);
    expect(await eventsOf(userId)).toEqual(['signin (passkey)', 'passkey-added (Laptop)']);
  });

  it('manages passkeys only with a signed-in session, from its own pages', async () => {
    const { cookie, authenticator } = await person();
    const passkey = await (await addPasskey(cookie, authenticator)).json();
    const token = (await t.as('passkey-token@example.com')).token;
    // A token can neither add a way into its account nor take one away.
    for (const [method, path] of [['GET', '/me/passkeys'], ['POST', '/me/passkeys/options'], ['DELETE', `/me/passkeys/${passkey.id}`]]) {
      expect((await t.fetch(path, { method, token })).status).toBe(403);
      expect((await t.fetch(path, { method })).status).toBe(401);
    }
    // Another site's page, with the visitor's cookie: refused, and nothing changes.
    const crossSite = await t.fetch(`/me/passkeys/${passkey.id}`, { method: 'DELETE', headers: { Cookie: cookie, 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    expect(await listPasskeys(cookie)).toHaveLength(1);
  });

  it("refuses a passkey sign-in from another site's page (login CSRF)", async () => {
    const { authenticator, cookie } = await person();
    await addPasskey(cookie, authenticator);
    const { challengeId, options } = await startSignIn();
    const crossSite = await t.fetch('/auth/passkeys/signin', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' },
      body: JSON.stringify({ challengeId, response: authenticator.get(options) }),
    });
    expect(crossSite.status).toBe(403);
    expect(cookieOf(crossSite)).toBeUndefined();
  });

  it('excludes the passkeys the account has already when adding another', async () => {
    const { cookie, authenticator } = await person();
    expect((await addPasskey(cookie, authenticator)).status).toBe(200);
    const { options } = await startRegistration(cookie);
    expect((options.excludeCredentials as Array<{ id: string }>).map((credential) => credential.id)).toEqual([authenticator.credentials[0].id]);
    // The same authenticator refuses to make a second one for the account, as a browser's would.
    expect(() => authenticator.create(options)).toThrow(/InvalidStateError/);
  });

  it('refuses a replayed sign-in: each challenge works once', async () => {
    const { cookie } = await person();
    // A passkey whose counter stays 0 (synced passkeys keep none), so that only the challenge's single use stops the replay.
    const authenticator = new SoftAuthenticator(origin(), { counts: false });
    await addPasskey(cookie, authenticator);
    const { challengeId, options } = await startSignIn();
    const body = { challengeId, response: authenticator.get(options) };
    expect((await finishSignIn(body)).status).toBe(200);
    const replay = await finishSignIn(body);
    expect(replay.status).toBe(401);
    expect(replay.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await replay.json()).toMatchObject({ type: '/problems/unauthorized' });
    expect(cookieOf(replay)).toBeUndefined();
  });

  it("refuses a registration answered twice, after 5 minutes, or with another account's challenge", async () => {
    const { cookie, authenticator } = await person();
    const other = await person();
    const first = await startRegistration(cookie);
    const response = authenticator.create(first.options);
    expect((await call('/me/passkeys', { method: 'POST', body: { challengeId: first.challengeId, name: 'Key', response }, cookie })).status).toBe(200);
    const again = await call('/me/passkeys', { method: 'POST', body: { challengeId: first.challengeId, name: 'Key', response }, cookie });
    expect(again.status).toBe(400);
    expect((await again.json()).errors).toEqual([expect.objectContaining({ pointer: '#/challengeId' })]);

    const theirs = await startRegistration(other.cookie);
    const stolen = await call('/me/passkeys', { method: 'POST', body: { challengeId: theirs.challengeId, name: 'Key', response: new SoftAuthenticator(origin()).create(theirs.options) }, cookie });
    expect(stolen.status).toBe(400);

    const late = await startRegistration(cookie);
    const lateResponse = new SoftAuthenticator(origin()).create(late.options);
    t.server.clock.advance(5 * 60_000 + 1);
    expect((await call('/me/passkeys', { method: 'POST', body: { challengeId: late.challengeId, name: 'Key', response: lateResponse }, cookie })).status).toBe(400);
    expect(await listPasskeys(cookie)).toHaveLength(1);
  });

  it('refuses a passkey made for another origin, and a malformed answer, with 400', async () => {
    const { cookie } = await person();
    const phishing = new SoftAuthenticator('https://audio-share.example.net');
    const { challengeId, options } = await startRegistration(cookie);
    const refused = await call('/me/passkeys', { method: 'POST', body: { challengeId, name: 'Key', response: phishing.create(options) }, cookie });
    expect(refused.status).toBe(400);
    expect((await refused.json()).detail).toMatch(/origin/i);

    const malformed = await startRegistration(cookie);
    const garbage = await call('/me/passkeys', { method: 'POST', body: { challengeId: malformed.challengeId, name: 'Key', response: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }, cookie });
    expect(garbage.status).toBe(400);
    expect(await listPasskeys(cookie)).toEqual([]);
  });

  it('refuses a sign-in answered for another origin, with a forged signature, a malformed answer or an unknown passkey, alike', async () => {
    const { cookie, userId, authenticator } = await person();
    await addPasskey(cookie, authenticator);

    const elsewhere = await startSignIn();
    authenticator.origin = 'https://audio-share.example.net';
    const phished = await finishSignIn({ challengeId: elsewhere.challengeId, response: authenticator.get(elsewhere.options) });
    authenticator.origin = origin();
    expect(phished.status).toBe(401);

    const forged = await startSignIn();
    const answer = authenticator.get(forged.options) as { response: Json };
    answer.response.signature = Buffer.alloc(70, 1).toString('base64url');
    const forgedAnswer = await finishSignIn({ challengeId: forged.challengeId, response: answer });
    expect(forgedAnswer.status).toBe(401);

    const malformed = await startSignIn();
    const garbage = await finishSignIn({ challengeId: malformed.challengeId, response: { id: authenticator.credentials[0].id, rawId: 'x', type: 'public-key', response: { signature: 5 } } });
    expect(garbage.status).toBe(401);

    const unknown = await startSignIn();
    const stranger = new SoftAuthenticator(origin());
    stranger.create({ rp: { id: new URL(t.server.apiUrl).hostname }, user: { id: 'dXNy' }, challenge: 'AAAA' });
    const unknownAnswer = await finishSignIn({ challengeId: unknown.challengeId, response: stranger.get(unknown.options) });
    expect(unknownAnswer.status).toBe(401);
    // One answer for all: nothing tells which check failed.
    const details = new Set(await Promise.all([phished, forgedAnswer, garbage, unknownAnswer].map(async (response) => (await response.json()).detail)));
    expect(details.size).toBe(1);
    expect((await eventsOf(userId)).filter((event) => event === 'signin-failed (passkey)')).toHaveLength(3);
  });

  it("refuses a signature counter that went back, as a cloned authenticator's would", async () => {
    const { cookie, authenticator } = await person();
    await addPasskey(cookie, authenticator);
    expect((await signIn(authenticator)).status).toBe(200);
    authenticator.credentials[0].counter -= 1;
    expect((await signIn(authenticator)).status).toBe(401);
  });

  it('signs in again and again with a passkey whose counter stays 0 (a synced passkey)', async () => {
    const { cookie } = await person();
    const synced = new SoftAuthenticator(origin(), { counts: false });
    await addPasskey(cookie, synced);
    for (let i = 0; i < 2; i++) expect((await signIn(synced)).status).toBe(200);
  });

  it('renames and removes a passkey; a removed one signs nobody in', async () => {
    const { cookie, userId, authenticator } = await person();
    const passkey = await (await addPasskey(cookie, authenticator)).json();
    const renamed = await call(`/me/passkeys/${passkey.id}`, { method: 'POST', body: { name: 'Phone' }, cookie });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id: passkey.id, name: 'Phone' });

    expect((await call(`/me/passkeys/${passkey.id}`, { method: 'DELETE', cookie })).status).toBe(200);
    expect(await listPasskeys(cookie)).toEqual([]);
    expect((await signIn(authenticator)).status).toBe(401);
    expect((await call(`/me/passkeys/${passkey.id}`, { method: 'DELETE', cookie })).status).toBe(404);
    expect(await eventsOf(userId)).toEqual(['passkey-removed (Phone)', 'passkey-added (Laptop)']);
  });

  it("answers 404 for another account's passkey, and changes nothing", async () => {
    const owner = await person();
    const passkey = await (await addPasskey(owner.cookie, owner.authenticator, 'Mine')).json();
    const other = await person();
    expect(await listPasskeys(other.cookie)).toEqual([]);
    const rename = await call(`/me/passkeys/${passkey.id}`, { method: 'POST', body: { name: 'Stolen' }, cookie: other.cookie });
    expect(rename.status).toBe(404);
    expect(await rename.json()).toMatchObject({ type: '/problems/not-found' });
    expect((await call(`/me/passkeys/${passkey.id}`, { method: 'DELETE', cookie: other.cookie })).status).toBe(404);
    expect(await listPasskeys(owner.cookie)).toEqual([expect.objectContaining({ id: passkey.id, name: 'Mine' })]);
  });

  it('refuses a passkey registered already, to this account or another, with 409', async () => {
    const { cookie, authenticator } = await person();
    const other = await person();
    await addPasskey(cookie, authenticator);
    const [held] = authenticator.credentials;
    // excludeCredentials asks honest authenticators only: a hostile client can send a credential that is taken.
    for (const who of [cookie, other.cookie]) {
      const { challengeId, options } = await startRegistration(who);
      const duplicate = await call('/me/passkeys', { method: 'POST', body: { challengeId, name: 'Copy', response: authenticator.create(options, held) }, cookie: who });
      expect(duplicate.status).toBe(409);
    }
    expect(await listPasskeys(other.cookie)).toEqual([]);
  });

  it("a disabled account's passkey signs nobody in", async () => {
    const { cookie, userId, authenticator } = await person();
    await addPasskey(cookie, authenticator);
    await t.server.ctx.store.db.execute('UPDATE users SET disabled = 1 WHERE id = $1', [userId]);
    const refused = await signIn(authenticator);
    expect(refused.status).toBe(401);
    expect(cookieOf(refused)).toBeUndefined();
    expect(await t.server.ctx.store.sessions.listOf(userId, Date.now(), t.server.ctx.config.sessions)).toHaveLength(1);
  });

  // Last: its failures count against the test server's one address too.
  it('limits failed passkey sign-ins per account, as password sign-ins are: then even a good one is refused, 429', async () => {
    const { cookie, authenticator } = await person();
    await addPasskey(cookie, authenticator);
    for (let attempt = 0; attempt < FAILURES_PER_ACCOUNT; attempt++) {
      const { challengeId, options } = await startSignIn();
      const answer = authenticator.get(options) as { response: Json };
      answer.response.signature = Buffer.alloc(70, attempt + 1).toString('base64url');
      expect((await finishSignIn({ challengeId, response: answer })).status).toBe(401);
    }
    const locked = await signIn(authenticator);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(cookieOf(locked)).toBeUndefined();
  });
});
