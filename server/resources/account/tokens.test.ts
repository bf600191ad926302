/**
 * The account's own tokens and security events, through the API, on each
 * store: a token made with scopes and an expiry is listed without its
 * secret, works, and stops working when revoked; legacy tokens list with
 * every scope; nobody reaches another account's tokens; only a signed-in
 * session manages tokens, never a token.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { newId } from '../../lib/ids.ts';
import { ALL_SCOPES } from './token-service.ts';
import { signIn } from '../../testing/sessions.ts';
import { until } from '../../testing/until.ts';

describe.each(backends)('tokens of one\'s own on %s', (backend) => {
  const t = useTestServer(backend);

  it('makes a token with a name, scopes and an expiry, shows its secret once, lists it without, and revokes it', async () => {
    const { api, fetch } = await signIn(t.server, 'maker@example.com');
    const expiresAt = t.server.clock.now() + 30 * 24 * 3_600_000;
    const { data: made, error } = await api.POST('/me/tokens', { body: { name: '  Mastering queue ', scopes: ['comments:read', 'projects:read'], expiresAt } });
    expect(error).toBeUndefined();
    expect(made).toMatchObject({ object: 'token', name: 'Mastering queue', scopes: ['projects:read', 'comments:read'], expiresAt });
    expect(made!.secret).toMatch(/^as_[A-Za-z0-9_-]{43}$/);
    expect(made).not.toHaveProperty('lastUsedAt');

    // The new token authenticates, within its scopes.
    expect((await t.fetch('/projects', { token: made!.secret })).status).toBe(200);
    expect(await (await t.fetch('/me', { token: made!.secret })).json()).toMatchObject({ type: '/problems/insufficient-scope', scope: 'account:read' });

    // Used above: lastUsedAt says when, once the authentication's bookkeeping (not awaited by the request) has written it.
    const listed = await until(async () => {
      const { data } = await api.GET('/me/tokens');
      return data!.find((item) => item.id === made!.id)?.lastUsedAt !== undefined && data;
    }, 'the token\'s last use recorded');
    const mine = listed.find((item) => item.id === made!.id);
    expect(mine).toEqual({ id: made!.id, object: 'token', name: 'Mastering queue', scopes: ['projects:read', 'comments:read'], expiresAt, lastUsedAt: expect.any(Number), timeCreated: made!.timeCreated });
    expect(mine!.lastUsedAt).toBeGreaterThanOrEqual(made!.timeCreated);
    expect(JSON.stringify(listed)).not.toContain(made!.secret);

    const revoked = await fetch(`/me/tokens/${made!.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    expect((await t.fetch('/projects', { token: made!.secret })).status).toBe(401);
    expect((await api.GET('/me/tokens')).data!.map((item) => item.id)).not.toContain(made!.id);
    // Revoking it again: there is no such token any more.
    const again = await fetch(`/me/tokens/${made!.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
  });

  it('lists a token made before scopes (scopes NULL) with every scope, and one without a name under a name', async () => {
    const { api } = await signIn(t.server, 'legacy@example.com');
    const user = (await t.server.ctx.store.users.findByEmail('legacy@example.com'))!;
    const legacy = await t.server.ctx.store.tokens.create(user.id, null, Date.now());
    const { data } = await api.GET('/me/tokens');
    expect(data!.find((item) => item.id === legacy.id)).toMatchObject({ name: 'Unnamed token', scopes: [...ALL_SCOPES] });
  });

  it('refuses an expiry in the past, no scope, an unknown scope, and a name of spaces, and makes nothing', async () => {
    const { api, fetch } = await signIn(t.server, 'refused@example.com');
    const before = (await api.GET('/me/tokens')).data!.length;
    const past = await fetch('/me/tokens', json({ name: 'old', scopes: ['projects:read'], expiresAt: t.server.clock.now() - 1000 }));
    expect(past.status).toBe(400);
    expect(await past.json()).toMatchObject({ type: '/problems/validation-error', errors: [{ pointer: '#/expiresAt' }] });
    for (const body of [
      { name: 'none', scopes: [] },
      { name: 'unknown', scopes: ['admin:everything'] },
      { name: '   ', scopes: ['projects:read'] },
      { name: 'twice', scopes: ['projects:read', 'projects:read'] },
      { name: 'extra', scopes: ['projects:read'], owner: 'someone' },
    ]) {
      const response = await fetch('/me/tokens', json(body));
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    expect((await api.GET('/me/tokens')).data!.length).toBe(before);
  });

  it("does not show, nor revoke, another account's token: 404, as for one that does not exist", async () => {
    const { api: owner } = await signIn(t.server, 'owner-of-token@example.com');
    const { data: made } = await owner.POST('/me/tokens', { body: { name: 'mine', scopes: ['projects:read'] } });
    const other = await signIn(t.server, 'other-account@example.com');
    expect((await other.api.GET('/me/tokens')).data!.map((item) => item.id)).not.toContain(made!.id);
    const refused = await other.fetch(`/me/tokens/${made!.id}`, { method: 'DELETE' });
    expect(refused.status).toBe(404);
    const unknown = await other.fetch(`/me/tokens/${newId('tok')}`, { method: 'DELETE' });
    expect(unknown.status).toBe(404);
    expect((await t.fetch('/projects', { token: made!.secret })).status).toBe(200);
  });

  it('takes only a signed-in session: a bearer token (even one with every scope) is refused with 403 and mints nothing; no credential is 401', async () => {
    const { token } = await t.as('token-holder@example.com');
    const user = (await t.server.ctx.store.users.findByEmail('token-holder@example.com'))!;
    const before = await t.server.ctx.store.tokens.listActiveOf(user.id);
    for (const [path, init] of [
      ['/me/tokens', {}],
      ['/me/tokens', json({ name: 'more', scopes: ['projects:read'] })],
      [`/me/tokens/${before[0].id}`, { method: 'DELETE' }],
    ] as const) {
      const response = await t.fetch(path, { ...init, token });
      expect(response.status, `${init.method ?? 'GET'} ${path}`).toBe(403);
      expect(await response.json()).toMatchObject({ type: '/problems/forbidden', detail: expect.stringContaining('needs a signed-in session, not a token') });
      expect((await t.fetch(path, init)).status).toBe(401);
    }
    expect(await t.server.ctx.store.tokens.listActiveOf(user.id)).toEqual(before);
    expect((await t.fetch('/me', { token })).status).toBe(200);
  });

  it('refuses a token made with the session from another origin (403), as every change a session makes', async () => {
    const { cookie } = await signIn(t.server, 'cross-site@example.com');
    const response = await t.fetch('/me/tokens', { ...json({ name: 'planted', scopes: ['projects:read'] }), headers: { 'Content-Type': 'application/json', Cookie: cookie, Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' } });
    expect(response.status).toBe(403);
    const user = (await t.server.ctx.store.users.findByEmail('cross-site@example.com'))!;
    expect(await t.server.ctx.store.tokens.listActiveOf(user.id)).toEqual([]);
  });

  it('pages the tokens newest first', async () => {
    const { api } = await signIn(t.server, 'pages@example.com');
    for (const name of ['one', 'two', 'three']) {
      await api.POST('/me/tokens', { body: { name, scopes: ['projects:read'] } });
      t.server.clock.advance(1);
    }
    const first = await api.GET('/me/tokens', { params: { query: { limit: 2 } } });
    expect(first.data!.map((item) => item.name)).toEqual(['three', 'two']);
    const next = first.response.headers.get('link');
    expect(next).toMatch(/rel="next"/);
  });
});

describe.each(backends)('security events on %s', (backend) => {
  const t = useTestServer(backend);

  it('records the sign-in, and a token made and revoked, with the address and browser, and lists them newest first to a token too', async () => {
    const session = await signIn(t.server, 'recorded@example.com');
    t.server.clock.advance(1);
    const { data: made } = await session.api.POST('/me/tokens', { body: { name: 'recorded', scopes: ['account:read'] } });
    t.server.clock.advance(1);
    expect((await session.fetch(`/me/tokens/${made!.id}`, { method: 'DELETE' })).status).toBe(200);
    const { token } = await t.as('recorded@example.com');
    const response = await t.fetch('/me/security-events', { token, headers: { 'User-Agent': 'events-test' } });
    expect(response.status).toBe(200);
    const events = await response.json();
    expect(events.map((event: { kind: string }) => event.kind)).toEqual(['token-revoked', 'token-created', 'signin']);
    expect(events[0]).toMatchObject({ object: 'security_event', address: expect.stringMatching(/127\.0\.0\.1/), userAgent: expect.any(String) });
  });

  it("lists the account's own events, newest first, with time, address and user agent, and not another account's", async () => {
    const { api } = await t.as('events@example.com');
    await t.as('someone-else@example.com');
    const store = t.server.ctx.store;
    const user = (await store.users.findByEmail('events@example.com'))!;
    const other = (await store.users.findByEmail('someone-else@example.com'))!;
    const insert = (id: string, userId: string, kind: string, time: number, address: string | null, userAgent: string | null) =>
      store.db.execute('INSERT INTO security_events (id, user_id, kind, address, user_agent, time_created) VALUES ($1, $2, $3, $4, $5, $6)', [
        id,
        userId,
        kind,
        address,
        userAgent,
        time,
      ]);
    await insert('sev_1', user.id, 'signin', 1000, '203.0.113.7', 'Firefox');
    await insert('sev_2', user.id, 'token-created', 2000, null, null);
    await insert('sev_3', other.id, 'signin', 3000, '198.51.100.1', 'Chrome');
    // A kind this version does not know is left out, so that the answer keeps to the spec.
    await insert('sev_4', user.id, 'something-new', 4000, null, null);

    const { data, error } = await api.GET('/me/security-events');
    expect(error).toBeUndefined();
    expect(data).toEqual([
      { id: 'sev_2', object: 'security_event', kind: 'token-created', timeCreated: 2000, address: null, userAgent: null },
      { id: 'sev_1', object: 'security_event', kind: 'signin', timeCreated: 1000, address: '203.0.113.7', userAgent: 'Firefox' },
    ]);
    const page = await api.GET('/me/security-events', { params: { query: { limit: 1 } } });
    expect(page.data!.map((event) => event.id)).toEqual(['sev_2']);
    expect(page.response.headers.get('link')).toMatch(/rel="next"/);
  });
});
