import { describe, expect, it } from 'vitest';
import { createApiClient } from '../generated/client.ts';
import { adminToken, baseUrl, checkedFetch, client, onMock, raw } from './support/context.ts';

const api = client();
const json = { 'Content-Type': 'application/json' };
const PASSWORD = 'a long and unusual contract passphrase';

/**
 * A new account, signed up through an administrator's invitation, and its
 * signed-in session: a client that sends the cookie from the server's own
 * origin, as its pages do.
 */
async function newSignedInAccount() {
  const admin = client(adminToken);
  const email = `contract-session-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const { data: invitation } = await admin.POST('/admin/invitations', { body: { email } });
  const invite = new URL(invitation!.url).searchParams.get('invite')!;
  const ownPage = { Origin: new URL(baseUrl).origin, 'Sec-Fetch-Site': 'same-origin' };
  const made = await checkedFetch(`${baseUrl}/auth/signup`, { method: 'POST', headers: { ...json, ...ownPage }, body: JSON.stringify({ name: 'Contract', email, password: PASSWORD, invite }) });
  expect(made.status).toBe(200);
  // The mock sets no cookie, and takes any.
  const cookie = made.headers.getSetCookie().map((line) => line.split(';')[0]).find((pair) => /^(__Host-)?as_session=/.test(pair)) ?? 'as_session=mock';
  const headers = { ...ownPage, Cookie: cookie };
  return {
    api: createApiClient({ baseUrl, headers, fetch: checkedFetch }),
    fetch: (path: string, init: RequestInit = {}) => checkedFetch(baseUrl + path, { ...init, headers: { ...headers, ...Object.fromEntries(new Headers(init.headers)) } }),
  };
}

describe("the account's security (extension)", () => {
  it('listSecurityEvents answers the account its events, and refuses a missing token (401) and a bad limit (400)', async () => {
    const { data, response } = await api.GET('/me/security-events', { params: { query: { limit: 10 } } });
    expect(response.status).toBe(200);
    expect(Array.isArray(data)).toBe(true);
    expect((await raw('/me/security-events', { token: null })).status).toBe(401);
    expect((await raw('/me/security-events?limit=0')).status).toBe(400);
  });

  it('listTokens, createToken, revokeToken and deleteCurrentUser refuse a bearer token (403) and no credential (401)', async () => {
    for (const [path, init] of [
      ['/me/tokens', {}],
      ['/me/tokens', { method: 'POST', headers: json, body: JSON.stringify({ name: 'contract', scopes: ['projects:read'] }) }],
      ['/me/tokens/tok_contract', { method: 'DELETE' }],
      ['/me', { method: 'DELETE', headers: json, body: JSON.stringify({ password: PASSWORD }) }],
    ] as const) {
      expect((await raw(path, init)).status, `${init.method ?? 'GET'} ${path}`).toBe(403);
      expect((await raw(path, { ...init, token: null })).status, `${init.method ?? 'GET'} ${path}`).toBe(401);
    }
  });

  it('with a session: createToken, listTokens and revokeToken; an unknown scope is 400, and on a real server a revoked token 404', async () => {
    const session = await newSignedInAccount();
    const { data: made, response } = await session.api.POST('/me/tokens', { body: { name: 'contract', scopes: ['projects:read', 'comments:read'] } });
    expect(response.status).toBe(200);
    expect(made!.secret).toMatch(/^as_/);
    const { data: listed } = await session.api.GET('/me/tokens');
    if (!onMock) expect(listed!.map((token) => token.id)).toContain(made!.id);
    expect((await session.fetch(`/me/tokens/${made!.id}`, { method: 'DELETE' })).status).toBe(200);
    if (!onMock) expect((await session.fetch(`/me/tokens/${made!.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await session.fetch('/me/tokens', { method: 'POST', headers: json, body: JSON.stringify({ name: 'bad', scopes: ['everything'] }) })).status).toBe(400);
  });

  it('with a session: deleteCurrentUser deletes the account with its password, and refuses an empty one (400); on a real server a wrong one (403)', async () => {
    const session = await newSignedInAccount();
    if (!onMock) expect((await session.fetch('/me', { method: 'DELETE', headers: json, body: JSON.stringify({ password: 'not the password at all' }) })).status).toBe(403);
    expect((await session.fetch('/me', { method: 'DELETE', headers: json, body: JSON.stringify({ password: '' }) })).status).toBe(400);
    expect((await session.fetch('/me', { method: 'DELETE', headers: json, body: JSON.stringify({ password: PASSWORD }) })).status).toBe(200);
    if (!onMock) expect((await session.fetch('/me')).status).toBe(401);
  });
});
