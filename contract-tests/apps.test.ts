/**
 * Apps and connected apps (extension, OAuth 2.1 for partners): each
 * operation called validly and invalidly. On a real server an app is
 * connected for real, through the authorization server: a signed-in
 * session answers the consent form, as its page would. Registering,
 * deleting and revoking apps is the session's alone (issue 28): a bearer
 * token, a person's or an app's, is refused with 403. The mock keeps no
 * state and has no authorization server: it answers from the examples.
 */
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../generated/client.ts';
import { adminToken, baseUrl, checkedFetch, client, onMock, raw } from './support/context.ts';

const json = { 'Content-Type': 'application/json' };
const origin = new URL(baseUrl).origin;
const REDIRECT = 'http://127.0.0.1:9/callback';

/** A signed-in session of a new account (an administrator's invitation, then sign-up), as in security.test.ts. */
async function newSignedInAccount() {
  const admin = client(adminToken);
  const email = `contract-apps-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const { data: invitation } = await admin.POST('/admin/invitations', { body: { email } });
  const invite = new URL(invitation!.url).searchParams.get('invite')!;
  const ownPage = { Origin: origin, 'Sec-Fetch-Site': 'same-origin' };
  const made = await checkedFetch(`${baseUrl}/auth/signup`, {
    method: 'POST',
    headers: { ...json, ...ownPage },
    body: JSON.stringify({ name: 'Contract', email, password: 'a long and unusual contract passphrase', invite }),
  });
  expect(made.status).toBe(200);
  const cookie = made.headers.getSetCookie().map((line) => line.split(';')[0]).find((pair) => /^(__Host-)?as_session=/.test(pair)) ?? 'as_session=mock';
  const headers = { ...ownPage, Cookie: cookie };
  return { cookie, api: createApiClient({ baseUrl, headers, fetch: checkedFetch }) };
}

/**
 * Runs the authorization code flow with PKCE for `appId` against the
 * server's authorization server, consenting with the sandbox token or the
 * session cookie; answers the access token.
 */
async function connectApp(appId: string, consent: { bearer: string } | { cookie: string }): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${origin}/oauth/authorize`);
  for (const [name, value] of Object.entries({
    client_id: appId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'projects:read',
    state: 'contract',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })) {
    authorize.searchParams.set(name, value);
  }
  const jar = new Map<string, string>();
  if ('cookie' in consent) jar.set(consent.cookie.split('=')[0], consent.cookie.split('=').slice(1).join('='));
  const cookies = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const keep = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  let at = authorize;
  for (let step = 0; step < 8 && at.origin === origin; step += 1) {
    const interaction = at.pathname.startsWith('/oauth/interaction/');
    const headers: Record<string, string> = { cookie: cookies(), ...(interaction && 'bearer' in consent ? { authorization: `Bearer ${consent.bearer}` } : {}) };
    let response = await fetch(at, { redirect: 'manual', headers });
    keep(response);
    if (response.status === 200 && interaction) {
      response = await fetch(at, { method: 'POST', redirect: 'manual', headers: { cookie: cookies(), origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'decision=allow' });
      keep(response);
    }
    expect([302, 303]).toContain(response.status);
    at = new URL(response.headers.get('location')!, at);
  }
  expect(at.href.startsWith(REDIRECT)).toBe(true);
  const code = at.searchParams.get('code')!;
  const exchanged = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: appId, code_verifier: verifier }),
  });
  expect(exchanged.status).toBe(200);
  return ((await exchanged.json()) as { access_token: string }).access_token;
}

describe('apps and connected apps (extension)', () => {
  /**
   * Registering, deleting and revoking apps takes a signed-in session (issue 28): a person's browser on the server's own
   * pages. The mock takes any session cookie as its one account.
   */
  let person: { cookie: string; api: ReturnType<typeof createApiClient> };
  beforeAll(async () => {
    person = onMock
      ? { cookie: 'as_session=mock', api: createApiClient({ baseUrl, headers: { Origin: origin, 'Sec-Fetch-Site': 'same-origin', Cookie: 'as_session=mock' }, fetch: checkedFetch }) }
      : await newSignedInAccount();
  });

  it('createApp makes a public app and a confidential one with its secret, and refuses a body without redirect URIs (400) and a bearer token (403)', async () => {
    const api = person.api;
    const { data: app, response } = await api.POST('/apps', { body: { name: 'Contract app', type: 'public', redirectUris: [REDIRECT] } });
    expect(response.status).toBe(200);
    expect(app!.object).toBe('app');
    const { data: confidential } = await api.POST('/apps', { body: { name: 'Contract desk', type: 'confidential', redirectUris: ['https://desk.example.com/cb'] } });
    expect(confidential!.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const bySession = { ...json, Origin: origin, 'Sec-Fetch-Site': 'same-origin', Cookie: person.cookie };
    expect((await raw('/apps', { method: 'POST', token: null, headers: bySession, body: JSON.stringify({ name: 'No redirect', type: 'public' }) })).status).toBe(400);
    // A token, a person's or an app's, manages no apps: no app may register, delete or let in apps for the account it acts for.
    expect((await raw('/apps', { method: 'POST', headers: json, body: JSON.stringify({ name: 'By token', type: 'public', redirectUris: [REDIRECT] }) })).status).toBe(403);
    if (!onMock) {
      // http on a host that is not loopback: refused by the server's own rule, with the field named.
      const refused = await raw('/apps', { method: 'POST', token: null, headers: bySession, body: JSON.stringify({ name: 'Plain http', type: 'public', redirectUris: ['http://example.com/cb'] }) });
      expect(refused.status).toBe(400);
      expect((await refused.json()).errors[0].pointer).toBe('#/redirectUris/0');
    }
  });

  it('listApps lists the apps without secrets, and refuses a bad limit (400)', async () => {
    const { data, response } = await person.api.GET('/apps', { params: { query: { limit: 10 } } });
    expect(response.status).toBe(200);
    expect(data!.every((app) => !('secret' in app))).toBe(true);
    expect((await raw('/apps?limit=0')).status).toBe(400);
  });

  it('getApp answers an app without its secret, and refuses a malformed id (400) and, on a real server, an app that is not yours (404)', async () => {
    const { data: app } = await person.api.POST('/apps', { body: { name: 'Readable', type: 'confidential', redirectUris: ['https://desk.example.com/callback'] } });
    const { data, response } = await person.api.GET('/apps/{appid}', { params: { path: { appid: app!.id } } });
    expect(response.status).toBe(200);
    if (!onMock) expect(data).toMatchObject({ id: app!.id, name: 'Readable', type: 'confidential' });
    expect(data).not.toHaveProperty('secret');
    expect((await raw(`/apps/${'x'.repeat(65)}`)).status).toBe(400);
    // The suite's token is another account's: the person's app is as unknown to it as a missing one.
    if (!onMock) expect((await raw(`/apps/${app!.id}`)).status).toBe(404);
  });

  it('deleteApp deletes an app, and refuses no credential (401) and a bearer token (403)', async () => {
    const { data: app } = await person.api.POST('/apps', { body: { name: 'Short-lived', type: 'public', redirectUris: [REDIRECT] } });
    expect((await raw(`/apps/${app!.id}`, { method: 'DELETE' })).status).toBe(403);
    expect((await person.api.DELETE('/apps/{appid}', { params: { path: { appid: app!.id } } })).response.status).toBe(200);
    expect((await raw(`/apps/${app!.id}`, { method: 'DELETE', token: null })).status).toBe(401);
    if (!onMock) expect((await person.api.DELETE('/apps/{appid}', { params: { path: { appid: app!.id } } })).response.status).toBe(404);
  });

  it('listConnectedApps and revokeConnectedApp: an app connected through the authorization server, revoked, and its token refused', async () => {
    expect((await raw('/me/connected-apps?limit=0')).status).toBe(400);
    if (onMock) {
      expect((await person.api.GET('/me/connected-apps')).response.status).toBe(200);
      expect((await person.api.DELETE('/me/connected-apps/{appid}', { params: { path: { appid: 'app_8c4v7n2k5q1w3e6r9t0y' } } })).response.status).toBe(200);
      expect((await raw('/me/connected-apps/app_8c4v7n2k5q1w3e6r9t0y', { method: 'DELETE', token: null })).status).toBe(401);
      return;
    }
    const { data: app } = await person.api.POST('/apps', { body: { name: 'Contract partner', type: 'public', redirectUris: [REDIRECT] } });
    const accessToken = await connectApp(app!.id, { cookie: person.cookie });
    expect((await raw('/projects', { token: accessToken })).status).toBe(200);

    const { data: connected, response } = await person.api.GET('/me/connected-apps');
    expect(response.status).toBe(200);
    expect(connected!.find((one) => one.id === app!.id)).toMatchObject({ name: 'Contract partner', scopes: ['projects:read'] });
    // The app cannot revoke itself, nor any other app of the person's: that is the person's, from a signed-in browser.
    expect((await raw(`/me/connected-apps/${app!.id}`, { method: 'DELETE', token: accessToken })).status).toBe(403);
    const revoked = await person.api.DELETE('/me/connected-apps/{appid}', { params: { path: { appid: app!.id } } });
    expect(revoked.response.status).toBe(200);
    expect((await raw('/projects', { token: accessToken })).status).toBe(401);
    expect((await person.api.DELETE('/me/connected-apps/{appid}', { params: { path: { appid: app!.id } } })).response.status).toBe(404);
  });
});
