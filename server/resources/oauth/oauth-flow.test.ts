/**
 * OAuth 2.1 for partners, end to end, on both stores: a partner app built
 * on openid-client (the certified relying-party library) runs discovery,
 * registers itself (RFC 7591), sends a person through the consent page in
 * headless Chromium (signing in first, and back), exchanges the code, calls
 * the API within and beyond its scopes, rotates its refresh token, is caught
 * reusing one, and revokes. Each refusal of the issue (no PKCE, `plain`, a
 * wrong redirect URI, a reused code, an expired token) is a test of its own.
 *
 * The partner's redirect URI is a real loopback HTTP server, registered as
 * http://127.0.0.1/callback and reached on whatever port it got (RFC 8252
 * §7.3). Consents after the Chromium one are given by fetch with the
 * person's session cookie, through the same page and the same form post.
 */
import { mkdirSync } from 'node:fs';
import * as client from 'openid-client';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { backends } from '../../testing/databases.ts';
import { startTestServer, type TestServer } from '../../testing/test-server.ts';
import { signIn, TEST_PASSWORD, type SignedIn } from '../../testing/sessions.ts';
import { screenshot, useBrowser } from '../../testing/browser.ts';
import { seriousAxeViolations } from '../../../web/testing/player-browser.ts';
import { appScopes } from './oauth-scopes.ts';
import { consentByFetch, startCallback } from '../../testing/oauth-partner.ts';

const SHOTS = '/tmp/shots-oauth';
const BROWSER_TEST_MS = 120_000;

describe.each(backends)('OAuth 2.1 for partners on %s', (backend) => {
  let server: TestServer;
  let callback: Awaited<ReturnType<typeof startCallback>>;
  let person: SignedIn;
  const email = `oauth-${backend}@example.org`;
  const chromium = useBrowser();

  beforeEach((context) => {
    (context.task.meta as { store?: string }).store = backend;
  });
  beforeAll(async () => {
    server = await startTestServer(backend, { OAUTH_DYNAMIC_REGISTRATION: 'true' });
    callback = await startCallback();
    person = await signIn(server, email);
  });
  afterAll(async () => {
    await new Promise((closed) => callback?.server.close(closed));
    await server?.stop();
  });

  const issuer = () => new URL(server.address);
  const redirectUri = () => `http://127.0.0.1:${callback.port}/callback`;
  const insecure = { execute: [client.allowInsecureRequests], algorithm: 'oauth2' as const };

  /** A public app registered dynamically (RFC 7591), as an MCP client or a desktop app would. */
  async function registerPublicApp(name = 'Mix Notes'): Promise<client.Configuration> {
    return client.dynamicClientRegistration(
      issuer(),
      { client_name: name, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none', application_type: 'native' },
      client.None(),
      insecure,
    );
  }

  async function authorizationRequest(config: client.Configuration, scope: string, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri(),
      scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      ...extra,
    });
    return { url, verifier, state };
  }

  /** A whole flow, without the browser: registration, consent, exchange. */
  async function connect(scope: string) {
    const config = await registerPublicApp();
    const request = await authorizationRequest(config, scope);
    const back = await consentByFetch(request.url, person.cookie);
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: request.verifier, expectedState: request.state });
    return { config, tokens, back, request };
  }

  const api = (token: string, path: string, init: RequestInit = {}) =>
    fetch(`${server.apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });

  it('publishes its metadata (RFC 8414, RFC 9728) with the scopes an app may have (no admin unless allowed), the code grant and S256 only', async () => {
    const config = await client.discovery(issuer(), 'nobody-yet', undefined, client.None(), insecure);
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(issuer().origin);
    expect(metadata.scopes_supported).toEqual([...appScopes(false)]);
    expect(metadata.response_types_supported).toEqual(['code']);
    expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token']);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.authorization_endpoint).toBe(`${issuer().origin}/oauth/authorize`);
    expect(metadata.token_endpoint).toBe(`${issuer().origin}/oauth/token`);
    expect(metadata.revocation_endpoint).toBe(`${issuer().origin}/oauth/revoke`);
    expect(metadata.registration_endpoint).toBe(`${issuer().origin}/oauth/register`);
    const resource = await (await fetch(`${server.address}/.well-known/oauth-protected-resource`)).json();
    expect(resource).toMatchObject({ resource: server.apiUrl, authorization_servers: [issuer().origin], scopes_supported: [...appScopes(false)], bearer_methods_supported: ['header'] });
  });

  it(
    'signs the person in, asks in Chromium, and the app calls the API within its scopes only',
    async () => {
      const config = await registerPublicApp('Mix Notes for Reaper');
      const request = await authorizationRequest(config, 'projects:read comments:read');
      const context = await chromium.browser.newContext();
      await context.route((url) => url.hostname !== '127.0.0.1', (route) => route.abort());
      const page = await context.newPage();
      try {
        await page.goto(request.url.href);
        // Not signed in: the sign-in page, which comes back here.
        await page.waitForURL((url) => url.pathname === '/signin');
        expect(new URL(page.url()).searchParams.get('next')).toMatch(/^\/oauth\/interaction\//);
        await page.getByLabel('Email').fill(email);
        await page.getByLabel('Password').fill(TEST_PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.getByRole('heading', { name: 'Allow Mix Notes for Reaper to:' }).waitFor();
        expect(await page.locator('.scopes li').allTextContents()).toEqual([
          expect.stringContaining('Read projects, their files, folders and stacks, and download them.'),
          expect.stringContaining('Read comments on files, through the project or a player.'),
        ]);
        await checkPage(page, 'consent');
        const landed = page.waitForRequest((r) => r.url().startsWith(redirectUri()));
        await page.getByRole('button', { name: 'Allow', exact: true }).click();
        const back = new URL((await landed).url());
        expect(back.searchParams.get('state')).toBe(request.state);
        expect(back.searchParams.get('iss')).toBe(issuer().origin);

        const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: request.verifier, expectedState: request.state });
        expect(tokens.token_type).toBe('bearer');
        expect(tokens.expires_in).toBe(3600);
        // No offline_access asked, and a refresh token all the same.
        expect(tokens.refresh_token).toEqual(expect.any(String));
        expect(tokens.scope?.split(' ').sort()).toEqual(['comments:read', 'projects:read']);

        expect((await api(tokens.access_token, '/projects')).status).toBe(200);
        const beyond = await api(tokens.access_token, '/projects', { method: 'POST', body: JSON.stringify({ name: 'Not allowed' }) });
        expect(beyond.status).toBe(403);
        expect(beyond.headers.get('www-authenticate')).toContain('error="insufficient_scope", scope="projects:write"');

        const connected = await (await person.fetch('/me/connected-apps')).json();
        expect(connected).toEqual([
          expect.objectContaining({ id: config.clientMetadata().client_id, object: 'connected_app', name: 'Mix Notes for Reaper', scopes: ['projects:read', 'comments:read'], lastUsedAt: expect.any(Number) }),
        ]);
        // The app's access token is no personal token: GET /me/tokens does not list it.
        expect(await (await person.fetch('/me/tokens')).json()).toEqual([]);
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'denies in Chromium: the app gets error=access_denied with its state',
    async () => {
      const config = await registerPublicApp('Denied App');
      const request = await authorizationRequest(config, 'account:read');
      const context = await chromium.browser.newContext();
      await context.addCookies([{ name: person.cookie.split('=')[0], value: person.cookie.split('=')[1], url: server.address }]);
      const page = await context.newPage();
      try {
        await page.goto(request.url.href);
        await page.getByRole('heading', { name: 'Allow Denied App to:' }).waitFor();
        const landed = page.waitForRequest((r) => r.url().startsWith(redirectUri()));
        await page.getByRole('button', { name: 'Deny', exact: true }).click();
        const back = new URL((await landed).url());
        expect(back.searchParams.get('error')).toBe('access_denied');
        expect(back.searchParams.get('state')).toBe(request.state);
        expect(back.searchParams.get('code')).toBeNull();
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it('rotates the refresh token on every use; a used one presented again revokes the whole grant', async () => {
    const { config, tokens } = await connect('projects:read');
    const first = tokens.refresh_token!;
    const rotated = await client.refreshTokenGrant(config, first);
    expect(rotated.refresh_token).toEqual(expect.any(String));
    expect(rotated.refresh_token).not.toBe(first);
    expect((await api(rotated.access_token, '/projects')).status).toBe(200);

    // The first refresh token again: refused, and the grant ends with it (RFC 9700 §4.14.2).
    await expect(client.refreshTokenGrant(config, first)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await api(rotated.access_token, '/projects')).status).toBe(401);
    expect((await api(tokens.access_token, '/projects')).status).toBe(401);
  });

  it('revokes an access token (RFC 7009): it and the tokens of its grant stop working', async () => {
    const { config, tokens } = await connect('projects:read');
    await client.tokenRevocation(config, tokens.access_token);
    expect((await api(tokens.access_token, '/projects')).status).toBe(401);
    // oidc-provider ends the grant's other tokens with it (RFC 7009 §2.1 lets a server do so).
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('revokes a refresh token (RFC 7009): it, and the access tokens of its grant, stop working', async () => {
    const { config, tokens } = await connect('projects:read');
    await client.tokenRevocation(config, tokens.refresh_token!);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await api(tokens.access_token, '/projects')).status).toBe(401);
  });

  it('ends every token of an app at once when the person revokes it (DELETE /me/connected-apps/{appid})', async () => {
    const { config, tokens } = await connect('projects:read');
    const appId = config.clientMetadata().client_id;
    expect((await person.fetch(`/me/connected-apps/${appId}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api(tokens.access_token, '/projects')).status).toBe(401);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await person.fetch(`/me/connected-apps/${appId}`, { method: 'DELETE' })).status).toBe(404);
  });

  it('refuses an authorization request without PKCE, and sends the refusal back to the app', async () => {
    const config = await registerPublicApp();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: redirectUri(), scope: 'projects:read', state: 'no-pkce' });
    const back = await consentByFetch(url, person.cookie);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(back.searchParams.get('state')).toBe('no-pkce');
  });

  it('refuses the plain PKCE method', async () => {
    const config = await registerPublicApp();
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: redirectUri(), scope: 'projects:read', state: 'plain', code_challenge: verifier, code_challenge_method: 'plain' });
    const back = await consentByFetch(url, person.cookie);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('never redirects to a redirect URI the app did not register', async () => {
    const config = await registerPublicApp();
    const { url } = await authorizationRequest(config, 'projects:read', { redirect_uri: 'https://evil.example/callback' });
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: person.cookie } });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    expect(await response.text()).toContain('redirect_uri');
  });

  it('refuses a code used twice, and ends the tokens the first use gave', async () => {
    const config = await registerPublicApp();
    const request = await authorizationRequest(config, 'projects:read');
    const back = await consentByFetch(request.url, person.cookie);
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: request.verifier, expectedState: request.state });
    await expect(client.authorizationCodeGrant(config, back, { pkceCodeVerifier: request.verifier, expectedState: request.state })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await api(tokens.access_token, '/projects')).status).toBe(401);
  });

  it('refuses an access token an hour old', async () => {
    const { tokens } = await connect('projects:read');
    expect((await api(tokens.access_token, '/projects')).status).toBe(200);
    server.clock.advance(3600 * 1000 + 1000);
    try {
      const expired = await api(tokens.access_token, '/projects');
      expect(expired.status).toBe(401);
      expect((await expired.json()).detail).toMatch(/expired/);
    } finally {
      server.clock.advance(-(3600 * 1000 + 1000));
    }
  });

  it('registers a confidential app through POST /apps, whose secret is shown once and works at the token endpoint', async () => {
    const created = await person.fetch('/apps', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Release Desk', type: 'confidential', redirectUris: [redirectUri()] }) });
    expect(created.status).toBe(200);
    const app = await created.json();
    expect(app).toMatchObject({ object: 'app', name: 'Release Desk', type: 'confidential', redirectUris: [redirectUri()], secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    const listed = await (await person.fetch('/apps')).json();
    expect(listed.find((one: { id: string }) => one.id === app.id)).not.toHaveProperty('secret');

    const config = await client.discovery(issuer(), app.id, undefined, client.ClientSecretBasic(app.secret), insecure);
    const request = await authorizationRequest(config, 'webhooks:read');
    const back = await consentByFetch(request.url, person.cookie);
    const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: request.verifier, expectedState: request.state });
    expect((await api(tokens.access_token, '/webhooks')).status).toBe(200);
    const wrong = await client.discovery(issuer(), app.id, undefined, client.ClientSecretBasic('not-the-secret'), insecure);
    await expect(client.refreshTokenGrant(wrong, tokens.refresh_token!)).rejects.toMatchObject({ status: 401, cause: [expect.objectContaining({ parameters: expect.objectContaining({ error: 'invalid_client' }) })] });

    // Deleting the app ends what it was given.
    expect((await person.fetch(`/apps/${app.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await api(tokens.access_token, '/webhooks')).status).toBe(401);
  });

  it('refuses a refresh naming a resource the grant lacks (invalid_target, RFC 8707), without spending the refresh token', async () => {
    const { config, tokens } = await connect('projects:read');
    const mcp = `${issuer().origin}/mcp`;
    // The grant is for the API only: a refresh for the MCP server is refused, and so is one for a resource nobody serves.
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!, { resource: mcp })).rejects.toMatchObject({ error: 'invalid_target', error_description: expect.stringContaining('refresh without resource') });
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!, { resource: 'https://elsewhere.example/api' })).rejects.toMatchObject({ error: 'invalid_target' });
    // The refresh token was not spent: the right refresh works, and is no reuse that would end the grant.
    const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await api(renewed.access_token, '/projects')).status).toBe(200);
    expect((await api(tokens.access_token, '/projects')).status).toBe(200);
    // Naming the grant's own resource is a right refresh too.
    const named = await client.refreshTokenGrant(config, renewed.refresh_token!, { resource: server.apiUrl });
    expect((await api(named.access_token, '/projects')).status).toBe(200);
  });

  it('refuses a scope this server does not have with invalid_scope (RFC 6749 §4.1.2.1), back to the app, before the consent page', async () => {
    const config = await registerPublicApp();
    const { url } = await authorizationRequest(config, 'projects:read photos:delete', { state: 'unknown-scope' });
    // Straight back to the app, signed in or not: no consent page on the way.
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: person.cookie } });
    expect([302, 303]).toContain(response.status);
    const back = new URL(response.headers.get('location')!);
    expect(back.href.startsWith(redirectUri())).toBe(true);
    expect(back.searchParams.get('error')).toBe('invalid_scope');
    expect(back.searchParams.get('error_description')).toContain('photos:delete');
    expect(back.searchParams.get('state')).toBe('unknown-scope');
    expect(back.searchParams.get('code')).toBeNull();
    // OpenID's offline_access is no unknown scope: it is taken, and dropped (every exchange gives a refresh token here).
    const asking = await authorizationRequest(config, 'projects:read offline_access', { prompt: 'consent' });
    const tokens = await client.authorizationCodeGrant(config, await consentByFetch(asking.url, person.cookie), { pkceCodeVerifier: asking.verifier, expectedState: asking.state });
    expect(tokens.scope).toBe('projects:read');
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });

  it('registers dynamically (RFC 7591) only the redirect URIs POST /apps takes, refusing the rest with invalid_redirect_uri', async () => {
    const register = (metadata: Record<string, unknown>) =>
      fetch(`${issuer().origin}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Odd', ...metadata }) });
    const publicApp = { token_endpoint_auth_method: 'none', application_type: 'native' };
    for (const [uris, kind, words] of [
      [['myapp:/callback'], publicApp, 'reversed domain name'],
      [['https://127.0.0.1/callback'], publicApp, 'uses http, not https'],
      [['http://partner.example/callback'], {}, 'not loopback'],
      [['com.example.app:/callback'], {}, 'confidential app is a web app'],
      [['http://127.0.0.1/callback', 'http://partner.example/callback'], publicApp, 'not loopback'],
    ] as const) {
      const refused = await register({ redirect_uris: uris, ...kind });
      expect(refused.status, uris.join(' ')).toBe(400);
      expect(await refused.json(), uris.join(' ')).toEqual({ error: 'invalid_redirect_uri', error_description: expect.stringContaining(words) });
    }
    // What POST /apps takes, registration takes.
    expect((await register({ redirect_uris: ['com.example.app:/callback'], ...publicApp })).status).toBe(201);
    expect((await register({ redirect_uris: ['https://partner.example/callback'] })).status).toBe(201);
  });

  it('sweeps the records past their expiry in the periodic sweep, and keeps the grant and refresh token that live on', async () => {
    const { config, tokens } = await connect('projects:read');
    const appId = config.clientMetadata().client_id;
    const db = server.ctx.store.db;
    const modelsOfApp = async () =>
      (await db.query<{ model: string }>('SELECT model FROM oauth_records WHERE client_id = $1 AND grant_id IS NOT NULL ORDER BY model', [appId])).map((row) => row.model);
    const expiredLeft = async (now: number) => Number((await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM oauth_records WHERE time_expires <= $1', [now]))[0].n);
    expect(await modelsOfApp()).toEqual(['AccessToken', 'AuthorizationCode', 'Grant', 'RefreshToken']);

    // A sweep now takes nothing of this grant: none of it expired.
    await server.sweep();
    expect(await modelsOfApp()).toEqual(['AccessToken', 'AuthorizationCode', 'Grant', 'RefreshToken']);

    // Two hours on, by the server's clock: the code (a minute) and the access token (an hour) are past their expiry.
    const later = 2 * 3600 * 1000;
    server.clock.advance(later);
    try {
      expect(await expiredLeft(server.clock.now())).toBeGreaterThanOrEqual(2);
      await server.sweep();
      expect(await modelsOfApp()).toEqual(['Grant', 'RefreshToken']);
      // Nothing past its expiry is left, of any app or person (interactions, consumed codes, …).
      expect(await expiredLeft(server.clock.now())).toBe(0);
    } finally {
      server.clock.advance(-later);
    }
    // What lives on still works: the refresh token gives a new access token.
    const renewed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await api(renewed.access_token, '/projects')).status).toBe(200);
  });

  /** Screenshots at 1280 and 360 px, axe clean, no horizontal scroll at 360. */
  async function checkPage(page: Page, name: string) {
    mkdirSync(SHOTS, { recursive: true });
    expect(await seriousAxeViolations(page)).toEqual([]);
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: 800 });
      await screenshot(page, { path: `${SHOTS}/${name}-${backend}-${width}.png`, fullPage: true });
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
  }
});
