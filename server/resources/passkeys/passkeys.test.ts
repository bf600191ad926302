/**
 * Passkeys through the API on each store, with a software authenticator
 * (server/testing/webauthn-authenticator.ts) in the browser's place: added,
 * listed, renamed, removed; a sign-in that names no account; and what must
 * be refused (a replayed or expired challenge, another origin, another
 * account's challenge or passkey, a removed passkey, a counter gone back).
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { SoftAuthenticator } from '../../testing/webauthn-authenticator.ts';

type Json = Record<string, unknown>;

describe.each(backends)('passkeys on %s', (backend) => {
  const t = useTestServer(backend);
  let people = 0;
  const origin = () => new URL(t.server.apiUrl).origin;

  /** A new account with a token, and an authenticator of its own. */
  async function person() {
    const { token } = await t.as(`passkey-${people++}@example.com`);
    return { token, authenticator: new SoftAuthenticator(origin()) };
  }

  async function startRegistration(token: string) {
    const response = await t.fetch('/me/passkeys/options', { method: 'POST', token });
    expect(response.status).toBe(200);
    return (await response.json()) as { challengeId: string; options: Json };
  }

  /** Registers a new passkey of the authenticator's; answers the API's answer. */
  async function addPasskey(token: string, authenticator: SoftAuthenticator, name = 'Laptop') {
    const { challengeId, options } = await startRegistration(token);
    return t.fetch('/me/passkeys', { ...json({ challengeId, name, response: authenticator.create(options) }), token });
  }

  async function startSignIn() {
    const response = await t.fetch('/auth/passkeys/options', { method: 'POST' });
    expect(response.status).toBe(200);
    return (await response.json()) as { challengeId: string; options: Json };
  }

  const finishSignIn = (body: unknown) => t.fetch('/auth/passkeys/signin', json(body));

  it('adds a passkey, lists it, and signs in with it without an email address', async () => {
    const { token, authenticator } = await person();
    const me = await (await t.fetch('/me', { token })).json();
    const { challengeId, options } = await startRegistration(token);
    // Issue 20: "The relying party is PUBLIC_URL's host name"; discoverable, so that signing in needs no email.
    expect(options.rp).toMatchObject({ id: new URL(t.server.apiUrl).hostname });
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'preferred' });
    expect(options.user).toMatchObject({ name: me.email, id: Buffer.from(me.id).toString('base64url') });

    const added = await t.fetch('/me/passkeys', { ...json({ challengeId, name: '  Laptop  ', response: authenticator.create(options) }), token });
    expect(added.status).toBe(200);
    const passkey = await added.json();
    expect(passkey).toMatchObject({ object: 'passkey', name: 'Laptop', transports: ['internal'], backedUp: true, timeLastUsed: null });
    expect(await (await t.fetch('/me/passkeys', { token })).json()).toEqual([passkey]);

    const signIn = await startSignIn();
    expect(signIn.options).toMatchObject({ rpId: new URL(t.server.apiUrl).hostname, userVerification: 'preferred' });
    expect(signIn.options).not.toHaveProperty('allowCredentials');
    // No email anywhere: the passkey names its account.
    const signedIn = await finishSignIn({ challengeId: signIn.challengeId, response: authenticator.get(signIn.options) });
    expect(signedIn.status).toBe(200);
    expect(await signedIn.json()).toMatchObject({ id: me.id, object: 'user', email: me.email });
    const [used] = await (await t.fetch('/me/passkeys', { token })).json();
    expect(used.timeLastUsed).toBeGreaterThanOrEqual(passkey.timeCreated);
  });

  it('excludes the passkeys the account has already when adding another', async () => {
    const { token, authenticator } = await person();
    expect((await addPasskey(token, authenticator)).status).toBe(200);
    const { options } = await startRegistration(token);
    expect((options.excludeCredentials as Array<{ id: string }>).map((credential) => credential.id)).toEqual([authenticator.credentials[0].id]);
    // The same authenticator refuses to make a second one for the account, as a browser's would.
    expect(() => authenticator.create(options)).toThrow(/InvalidStateError/);
  });

  it('refuses a replayed sign-in: each challenge works once', async () => {
    const { token, authenticator } = await person();
    await addPasskey(token, authenticator);
    const { challengeId, options } = await startSignIn();
    const body = { challengeId, response: authenticator.get(options) };
    expect((await finishSignIn(body)).status).toBe(200);
    const replay = await finishSignIn(body);
    expect(replay.status).toBe(401);
    expect(replay.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await replay.json()).toMatchObject({ type: '/problems/unauthorized' });
  });

  it('refuses a registration answered twice, after 5 minutes, or with another account\'s challenge', async () => {
    const { token, authenticator } = await person();
    const other = await person();
    const first = await startRegistration(token);
    const response = authenticator.create(first.options);
    expect((await t.fetch('/me/passkeys', { ...json({ challengeId: first.challengeId, name: 'Key', response }), token })).status).toBe(200);
    const again = await t.fetch('/me/passkeys', { ...json({ challengeId: first.challengeId, name: 'Key', response }), token });
    expect(again.status).toBe(400);
    expect((await again.json()).errors).toEqual([expect.objectContaining({ pointer: '#/challengeId' })]);

    const theirs = await startRegistration(other.token);
    const stolen = await t.fetch('/me/passkeys', { ...json({ challengeId: theirs.challengeId, name: 'Key', response: new SoftAuthenticator(origin()).create(theirs.options) }), token });
    expect(stolen.status).toBe(400);

    const late = await startRegistration(token);
    const lateResponse = new SoftAuthenticator(origin()).create(late.options);
    t.server.clock.advance(5 * 60_000 + 1);
    expect((await t.fetch('/me/passkeys', { ...json({ challengeId: late.challengeId, name: 'Key', response: lateResponse }), token })).status).toBe(400);
    expect(await (await t.fetch('/me/passkeys', { token })).json()).toHaveLength(1);
  });

  it('refuses a passkey made for another origin, and a malformed answer, with 400', async () => {
    const { token } = await person();
    const phishing = new SoftAuthenticator('https://audio-share.example.net');
    const { challengeId, options } = await startRegistration(token);
    const refused = await t.fetch('/me/passkeys', { ...json({ challengeId, name: 'Key', response: phishing.create(options) }), token });
    expect(refused.status).toBe(400);
    expect((await refused.json()).detail).toMatch(/origin/i);

    const malformed = await startRegistration(token);
    const garbage = await t.fetch('/me/passkeys', { ...json({ challengeId: malformed.challengeId, name: 'Key', response: { id: 'x', rawId: 'x', type: 'public-key', response: {} } }), token });
    expect(garbage.status).toBe(400);
    expect(await (await t.fetch('/me/passkeys', { token })).json()).toEqual([]);
  });

  it('refuses a sign-in answered for another origin, with a forged signature, or with a malformed answer, alike', async () => {
    const { token, authenticator } = await person();
    await addPasskey(token, authenticator);

    const elsewhere = await startSignIn();
    authenticator.origin = 'https://audio-share.example.net';
    const phished = await finishSignIn({ challengeId: elsewhere.challengeId, response: authenticator.get(elsewhere.options) });
    authenticator.origin = origin();
    expect(phished.status).toBe(401);

    const forged = await startSignIn();
    const answer = authenticator.get(forged.options) as { response: Json };
    answer.response.signature = Buffer.alloc(70, 1).toString('base64url');
    expect((await finishSignIn({ challengeId: forged.challengeId, response: answer })).status).toBe(401);

    const malformed = await startSignIn();
    const garbage = await finishSignIn({ challengeId: malformed.challengeId, response: { id: authenticator.credentials[0].id, rawId: 'x', type: 'public-key', response: { signature: 5 } } });
    expect(garbage.status).toBe(401);

    const unknown = await startSignIn();
    const stranger = new SoftAuthenticator(origin());
    stranger.create({ rp: { id: new URL(t.server.apiUrl).hostname }, user: { id: 'dXNy' }, challenge: 'AAAA' });
    expect((await finishSignIn({ challengeId: unknown.challengeId, response: stranger.get(unknown.options) })).status).toBe(401);
  });

  it('refuses a signature counter that went back, as a cloned authenticator\'s would', async () => {
    const { token, authenticator } = await person();
    await addPasskey(token, authenticator);
    const first = await startSignIn();
    expect((await finishSignIn({ challengeId: first.challengeId, response: authenticator.get(first.options) })).status).toBe(200);
    authenticator.credentials[0].counter -= 1;
    const cloned = await startSignIn();
    expect((await finishSignIn({ challengeId: cloned.challengeId, response: authenticator.get(cloned.options) })).status).toBe(401);
  });

  it('signs in again and again with a passkey whose counter stays 0 (a synced passkey)', async () => {
    const { token } = await person();
    const synced = new SoftAuthenticator(origin(), { counts: false });
    await addPasskey(token, synced);
    for (let i = 0; i < 2; i++) {
      const { challengeId, options } = await startSignIn();
      expect((await finishSignIn({ challengeId, response: synced.get(options) })).status).toBe(200);
    }
  });

  it('renames and removes a passkey; a removed one signs nobody in', async () => {
    const { token, authenticator } = await person();
    const passkey = await (await addPasskey(token, authenticator)).json();
    const renamed = await t.fetch(`/me/passkeys/${passkey.id}`, { ...json({ name: 'Phone' }), token });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id: passkey.id, name: 'Phone' });

    expect((await t.fetch(`/me/passkeys/${passkey.id}`, { method: 'DELETE', token })).status).toBe(200);
    expect(await (await t.fetch('/me/passkeys', { token })).json()).toEqual([]);
    const { challengeId, options } = await startSignIn();
    expect((await finishSignIn({ challengeId, response: authenticator.get(options) })).status).toBe(401);
    expect((await t.fetch(`/me/passkeys/${passkey.id}`, { method: 'DELETE', token })).status).toBe(404);
  });

  it("answers 404 for another account's passkey, and changes nothing", async () => {
    const owner = await person();
    const passkey = await (await addPasskey(owner.token, owner.authenticator, 'Mine')).json();
    const other = await person();
    expect(await (await t.fetch('/me/passkeys', { token: other.token })).json()).toEqual([]);
    const rename = await t.fetch(`/me/passkeys/${passkey.id}`, { ...json({ name: 'Stolen' }), token: other.token });
    expect(rename.status).toBe(404);
    expect(await rename.json()).toMatchObject({ type: '/problems/not-found' });
    expect((await t.fetch(`/me/passkeys/${passkey.id}`, { method: 'DELETE', token: other.token })).status).toBe(404);
    expect(await (await t.fetch('/me/passkeys', { token: owner.token })).json()).toEqual([expect.objectContaining({ id: passkey.id, name: 'Mine' })]);
  });

  it('refuses a passkey registered already, to this account or another, with 409', async () => {
    const { token, authenticator } = await person();
    const other = await person();
    await addPasskey(token, authenticator);
    const [held] = authenticator.credentials;
    // excludeCredentials asks honest authenticators only: a hostile client can send a credential that is taken.
    for (const who of [token, other.token]) {
      const { challengeId, options } = await startRegistration(who);
      const duplicate = await t.fetch('/me/passkeys', { ...json({ challengeId, name: 'Copy', response: authenticator.create(options, held) }), token: who });
      expect(duplicate.status).toBe(409);
    }
    expect(await (await t.fetch('/me/passkeys', { token: other.token })).json()).toEqual([]);
  });
});
