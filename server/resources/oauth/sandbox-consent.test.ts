/**
 * The sandbox's consent page takes a bearer token as its account's consent,
 * so that a partner's script runs the whole OAuth flow; but only a token
 * that could give that consent itself, as a person must be able to: one
 * that works, is a person's (not an app's access token), and holds every
 * scope the app asks for. The sandbox runs on SQLite only (it refuses
 * DATABASE_URL).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../../testing/harness.ts';
import { Jar, startCallback } from '../../testing/oauth-partner.ts';

describe('the sandbox consent page', () => {
  const t = useTestServer('sqlite', { SANDBOX: 'true', PROCESSING: 'external' });
  let callback: Awaited<ReturnType<typeof startCallback>>;  beforeAll(async () => {
    callback = await startCallback();
    // The partner's sandbox account, as its first request makes it (every scope), without the demo project's analysis,
    // which sandbox.test.ts waits for.
    const user = await t.server.ctx.store.users.findOrCreate(`partner-${randomBytes(4).toString('hex')}@sandbox.example`, Date.now());
    await t.server.ctx.store.tokens.register(user.id, partnerToken, 'sandbox', Date.now());
  });
  afterAll(async () => {
    await callback?.stop();
  });

  const partnerToken = `sandbox-consent-${randomBytes(8).toString('hex')}`;

  /**
   * A public app of the partner's, registered as apps register on the sandbox: at /oauth/register (RFC 7591), which
   * the sandbox always has on. (POST /apps takes a signed-in session, issue 28, and nobody signs in to a sandbox account.)
   */
  async function newApp(): Promise<string> {
    const made = await fetch(`${new URL(t.server.address).origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Script', redirect_uris: [callback.redirectUri], token_endpoint_auth_method: 'none' }),
    });
    expect(made.status, await made.clone().text()).toBe(201);
    return ((await made.json()) as { client_id: string }).client_id;
  }

  /**
   * An authorization request followed as a script does, the bearer token sent to the consent page: the app's callback
   * URL it ends at, or the consent page's refusal.
   */
  async function consentWith(appId: string, scope: string, bearer: string): Promise<{ back: URL; verifier: string } | { status: number; page: string }> {
    const verifier = randomBytes(32).toString('base64url');
    let at = new URL(`${new URL(t.server.address).origin}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      client_id: appId,
      response_type: 'code',
      redirect_uri: callback.redirectUri,
      scope,
      state: 'script',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })) {
      at.searchParams.set(name, value);
    }
    const jar = new Jar();
    for (let step = 0; step < 8; step += 1) {
      if (at.href.startsWith(callback.redirectUri)) return { back: at, verifier };
      const interaction = at.pathname.startsWith('/oauth/interaction/');
      const response = await fetch(at, { redirect: 'manual', headers: { cookie: jar.header(), ...(interaction ? { authorization: `Bearer ${bearer}` } : {}) } });
      jar.take(response);
      if (response.status !== 302 && response.status !== 303) return { status: response.status, page: await response.text() };
      at = new URL(response.headers.get('location')!, at);
    }
    throw new Error('Too many steps');
  }

  async function exchange(appId: string, back: URL, verifier: string): Promise<string> {
    const response = await fetch(`${new URL(t.server.address).origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: callback.redirectUri, client_id: appId, code_verifier: verifier }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { access_token: string }).access_token;
  }

  it("takes the partner's own sandbox token, which holds every scope, as its account's consent", async () => {
    const appId = await newApp();
    const answered = await consentWith(appId, 'projects:read projects:write', partnerToken);
    if (!('back' in answered)) throw new Error(`The consent page answered ${answered.status}: ${answered.page}`);
    expect(answered.back.searchParams.get('state')).toBe('script');
    const accessToken = await exchange(appId, answered.back, answered.verifier);
    expect((await t.fetch('/projects', { token: accessToken })).status).toBe(200);
  });

  it('refuses a token that lacks a scope the app asks for, and says which', async () => {
    const holder = await t.server.ctx.store.tokens.findHolder(partnerToken);
    const narrow = await t.server.ctx.store.tokens.create(holder!.user.id, 'read only', t.server.clock.now(), { scopes: ['projects:read'] });
    const appId = await newApp();
    const refused = await consentWith(appId, 'projects:read projects:write', narrow.secret);
    expect(refused).toMatchObject({ status: 403, page: expect.stringContaining('does not hold projects:write') });
    // Within its scopes, it consents.
    const within = await consentWith(appId, 'projects:read', narrow.secret);
    expect('back' in within && within.back.searchParams.get('code')).toEqual(expect.any(String));
  });

  it("refuses an app's access token, an expired token and a revoked one", async () => {
    const appId = await newApp();
    const first = await consentWith(appId, 'projects:read', partnerToken);
    if (!('back' in first)) throw new Error(`The consent page answered ${first.status}: ${first.page}`);
    const accessToken = await exchange(appId, first.back, first.verifier);
    expect(await consentWith(await newApp(), 'projects:read', accessToken)).toMatchObject({ status: 403, page: expect.stringContaining("an app&#39;s access token") });

    const holder = await t.server.ctx.store.tokens.findHolder(partnerToken);
    const now = t.server.clock.now();
    const expired = await t.server.ctx.store.tokens.create(holder!.user.id, 'expired', now, { expires: now - 1000 });
    expect(await consentWith(appId, 'projects:read', expired.secret)).toMatchObject({ status: 403, page: expect.stringContaining('expired at') });
    const revoked = await t.server.ctx.store.tokens.create(holder!.user.id, 'revoked', now);
    await t.server.ctx.store.tokens.revoke(revoked.id, now);
    expect(await consentWith(appId, 'projects:read', revoked.secret)).toMatchObject({ status: 403, page: expect.stringContaining('is revoked') });
  });
});
