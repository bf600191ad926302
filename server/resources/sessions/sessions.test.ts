/**
 * The front door, over real HTTP on each store: the setup link, sign-in,
 * the session cookie on the API, sign-out, cross-origin refusals, failed
 * attempts, password changes and token expiry.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { createSetupLink } from '../account/setup-link.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { FAILURES_PER_ACCOUNT } from '../../auth/attempt-limits.ts';

const PASSWORD = 'a long and unusual passphrase';

describe.each(backends)('accounts and sessions on %s', (backend) => {
  const t = useTestServer(backend);
  const origin = () => new URL(t.server.apiUrl).origin;

  /** A request from the server's own page: the browser sends its origin. */
  const ownPage = (method: string, body?: unknown, cookie?: string): RequestInit => ({
    method,
    headers: { Origin: origin(), 'Sec-Fetch-Site': 'same-origin', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...(cookie ? { Cookie: cookie } : {}) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const cookieOf = (response: Response) => {
    const set = response.headers.getSetCookie().find((line) => line.startsWith('as_session='));
    return set?.split(';')[0];
  };

  /** An account with a password, made through the store (sign-up has its own tests). */
  async function account(email: string, password = PASSWORD) {
    const user = (await t.server.ctx.store.users.findOrCreate(email, Date.now()))!;
    await t.server.ctx.store.users.setPasswordHash(user.id, await hashPassword(password));
    return user;
  }
  async function signIn(email: string, password = PASSWORD) {
    const response = await t.fetch('/auth/signin', ownPage('POST', { email, password }));
    return { response, cookie: cookieOf(response) };
  }

  it('the setup link makes the first account, an administrator, signed in; it works once', async () => {
    // Only on a database without accounts; each file's server starts with an empty one, and this test runs first.
    const link = await createSetupLink(t.server.ctx);
    expect(link).toMatch(/\/setup\?token=/);
    const token = new URL(link!).searchParams.get('token')!;
    const config = await (await t.fetch('/auth/config')).json();
    expect(config).toMatchObject({ setupRequired: true, registration: 'invite' });

    const body = { token, name: 'Sam Rivera', email: 'first@example.com', password: PASSWORD };
    const made = await t.fetch('/auth/setup', ownPage('POST', body));
    expect(made.status).toBe(200);
    expect(await made.json()).toMatchObject({ email: 'first@example.com', admin: true, name: 'Sam Rivera' });
    const cookie = cookieOf(made)!;
    expect(made.headers.getSetCookie()[0]).toMatch(/HttpOnly/i);
    expect(made.headers.getSetCookie()[0]).toMatch(/SameSite=Lax/i);

    const me = await t.fetch('/me', { headers: { Cookie: cookie } });
    expect(await me.json()).toMatchObject({ email: 'first@example.com' });
    const again = await t.fetch('/auth/setup', ownPage('POST', { ...body, email: 'second@example.com' }));
    expect(again.status).toBe(403);
    expect(await createSetupLink(t.server.ctx)).toBeUndefined();
    expect((await (await t.fetch('/auth/config')).json()).setupRequired).toBe(false);
  });

  it('signs in with the password; an unknown email and a wrong password get the same answer', async () => {
    await account('signin@example.com');
    const wrong = await signIn('signin@example.com', 'not the password at all');
    const unknown = await signIn('nobody@example.com', 'not the password at all');
    expect(wrong.response.status).toBe(401);
    expect(unknown.response.status).toBe(401);
    const [a, b] = [await wrong.response.json(), await unknown.response.json()];
    expect(a.detail).toBe(b.detail);
    expect(wrong.cookie).toBeUndefined();

    const { response, cookie } = await signIn('SignIn@Example.com');
    expect(response.status).toBe(200);
    expect(cookie).toBeDefined();
    const projects = await t.fetch('/projects', { headers: { Cookie: cookie! } });
    expect(projects.status).toBe(200);
    // A change with the session, from the server's own page.
    const created = await t.fetch('/projects', ownPage('POST', { name: 'By session' }, cookie));
    expect(created.status).toBe(200);
  });

  it('refuses a change carrying the session from another origin, and changes nothing', async () => {
    await account('csrf@example.com');
    const { cookie } = await signIn('csrf@example.com');
    const before = await (await t.fetch('/projects', { headers: { Cookie: cookie! } })).json();
    const attempts: Array<Record<string, string>> = [{ 'Sec-Fetch-Site': 'cross-site', Origin: 'https://evil.example' }, { Origin: 'https://evil.example' }, {}];
    for (const headers of attempts) {
      const response = await t.fetch('/projects', { method: 'POST', headers: { ...headers, Cookie: cookie!, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Forged' }) });
      expect(response.status).toBe(403);
      expect((await response.json()).type).toBe('/problems/forbidden');
    }
    const after = await (await t.fetch('/projects', { headers: { Cookie: cookie! } })).json();
    expect(after).toEqual(before);
    // Signing in from another site is refused too (login CSRF).
    const crossSignIn = await t.fetch('/auth/signin', { ...ownPage('POST', { email: 'csrf@example.com', password: PASSWORD }), headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSignIn.status).toBe(403);
  });

  it('signs out: the session ends on the server, not only in the browser', async () => {
    await account('signout@example.com');
    const { cookie } = await signIn('signout@example.com');
    const out = await t.fetch('/auth/signout', ownPage('POST', undefined, cookie));
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().join()).toMatch(/as_session=;.*Max-Age=0/);
    const me = await t.fetch('/me', { headers: { Cookie: cookie! } });
    expect(me.status).toBe(401);
  });

  it('lists sessions and ends one, or every other; a token cannot', async () => {
    await account('many@example.com');
    const first = await signIn('many@example.com');
    const second = await signIn('many@example.com');
    const third = await signIn('many@example.com');
    const listed = await (await t.fetch('/me/sessions', { headers: { Cookie: first.cookie! } })).json();
    expect(listed).toHaveLength(3);
    expect(listed.filter((session: { current: boolean }) => session.current)).toHaveLength(1);
    const secondId = (await (await t.fetch('/me/sessions', { headers: { Cookie: second.cookie! } })).json()).find((session: { current: boolean }) => session.current).id;
    expect((await t.fetch(`/me/sessions/${secondId}`, ownPage('DELETE', undefined, first.cookie))).status).toBe(200);
    expect((await t.fetch('/me', { headers: { Cookie: second.cookie! } })).status).toBe(401);
    const others = await t.fetch('/me/sessions', ownPage('DELETE', undefined, first.cookie));
    expect(await others.json()).toEqual({ ended: 1 });
    expect((await t.fetch('/me', { headers: { Cookie: third.cookie! } })).status).toBe(401);
    expect((await t.fetch('/me', { headers: { Cookie: first.cookie! } })).status).toBe(200);

    const { token } = await t.as('many@example.com');
    const withToken = await t.fetch('/me/sessions', { token });
    expect(withToken.status).toBe(403);
  });

  it('changing the password needs the current one and ends every other session', async () => {
    await account('change@example.com');
    const kept = await signIn('change@example.com');
    const other = await signIn('change@example.com');
    const wrong = await t.fetch('/me/password', ownPage('POST', { currentPassword: 'wrong password here', newPassword: 'another long passphrase' }, kept.cookie));
    expect(wrong.status).toBe(400);
    const common = await t.fetch('/me/password', ownPage('POST', { currentPassword: PASSWORD, newPassword: '1qaz2wsx3edc' }, kept.cookie));
    expect(common.status).toBe(400);
    expect((await common.json()).detail).toMatch(/common|sequence|predictable/);
    const changed = await t.fetch('/me/password', ownPage('POST', { currentPassword: PASSWORD, newPassword: 'another long passphrase' }, kept.cookie));
    expect(await changed.json()).toEqual({ ended: 1, tokens: 0, passkeys: 0, apps: 0 });
    expect((await t.fetch('/me', { headers: { Cookie: other.cookie! } })).status).toBe(401);
    expect((await t.fetch('/me', { headers: { Cookie: kept.cookie! } })).status).toBe(200);
    expect((await signIn('change@example.com')).response.status).toBe(401);
    expect((await signIn('change@example.com', 'another long passphrase')).response.status).toBe(200);
  });

  it('a disabled account answers a right password as a wrong one, byte for byte, and counts it as a failure', async () => {
    // The spec's signIn: "A disabled account gets this same answer whether or not the password is right, and it counts
    // as a failed attempt": the answer is no oracle of a password guess.
    const user = await account('disabled@example.com');
    await t.server.ctx.store.db.execute('UPDATE users SET disabled = 1 WHERE id = $1', [user.id]);
    const wrong = await signIn('disabled@example.com', 'not the password at all');
    const right = await signIn('disabled@example.com');
    for (const { response, cookie } of [wrong, right]) {
      expect(response.status).toBe(401);
      expect(cookie).toBeUndefined();
    }
    // Everything but the request's own id: the problem body, its type and the headers a client could tell them by.
    const [wrongText, rightText] = [await wrong.response.text(), await right.response.text()];
    const instanceOf = (text: string) => (JSON.parse(text) as { instance: string }).instance;
    expect(rightText.replace(instanceOf(rightText), 'req')).toBe(wrongText.replace(instanceOf(wrongText), 'req'));
    expect(JSON.parse(wrongText).detail).toBe('The email or the password is wrong. Try again, or reset your password.');
    const telling = (response: Response) => ['content-type', 'www-authenticate', 'retry-after', 'cache-control'].map((name) => response.headers.get(name));
    expect(telling(right.response)).toEqual(telling(wrong.response));
    // Only the account's own record says which it was.
    const events = (await t.server.ctx.store.securityEvents.listOf(user.id)).filter((event) => event.kind === 'signin-failed').map((event) => event.detail);
    expect(events.sort()).toEqual(['password', 'password (right, but the account is disabled)']);
    // Both counted: after the limit's worth of right passwords too, the account is locked as it is by wrong ones.
    for (let attempt = 2; attempt < FAILURES_PER_ACCOUNT; attempt++) expect((await signIn('disabled@example.com')).response.status).toBe(401);
    expect((await signIn('disabled@example.com')).response.status).toBe(429);
    // Enabled again, it stays locked for the window: those right passwords were counted as the failures they were answered as.
    await t.server.ctx.store.db.execute('UPDATE users SET disabled = 0 WHERE id = $1', [user.id]);
    expect((await signIn('disabled@example.com')).response.status).toBe(429);
  });

  it(`refuses sign-in after ${FAILURES_PER_ACCOUNT} failures for one account, even with the right password`, async () => {
    await account('guessed@example.com');
    for (let attempt = 0; attempt < FAILURES_PER_ACCOUNT; attempt++) expect((await signIn('guessed@example.com', `wrong guess number ${attempt}`)).response.status).toBe(401);
    const locked = await signIn('guessed@example.com');
    expect(locked.response.status).toBe(429);
    expect(locked.response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(locked.cookie).toBeUndefined();
  });

  it('an expired token is refused; one with a future expiry works', async () => {
    const user = await account('expiry@example.com');
    const now = t.server.clock.now();
    const expired = await t.server.ctx.store.tokens.create(user.id, 'old', now, { expires: now - 1 });
    const valid = await t.server.ctx.store.tokens.create(user.id, 'new', now, { expires: now + 60_000 });
    const refused = await t.fetch('/me', { token: expired.secret });
    expect(refused.status).toBe(401);
    expect((await refused.json()).detail).toMatch(/expired/);
    expect((await t.fetch('/me', { token: valid.secret })).status).toBe(200);
  });

  it('a member signed in opens their own locked player with the account session, and needs no player session', async () => {
    await account('member@example.com');
    const { api } = await t.as('member@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Locked' } });
    const { data: player } = await api.POST('/players', { body: { name: 'Locked', projectid: project!.id, password: 'a player password' } });
    const stranger = await t.fetch(`/players/${player!.id}/view`);
    expect(stranger.status).toBe(401);
    expect((await stranger.json()).type).toBe('/problems/player-locked');
    const { cookie } = await signIn('member@example.com');
    const member = await t.fetch(`/players/${player!.id}/view`, { headers: { Cookie: cookie! } });
    expect(member.status).toBe(200);
  });

  it('an account that signs in with a collaborator invitation sent to another address gets its access, once', async () => {
    await account('owner-join@example.com');
    const { api } = await t.as('owner-join@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Shared by invitation' } });
    const { data: player } = await api.POST('/players', { body: { name: 'Review', projectid: project!.id, collaborators: [{ email: 'old-address@label.example', role: 'editor' }] } });
    const { data: invites } = await api.GET('/players/{playerid}/collaborators', { params: { path: { playerid: player!.id } } });
    const token = new URL(invites![0].inviteUrl).searchParams.get('invite')!;
    const invite = `${player!.id}.${token}`;

    await account('joiner@example.com');
    const before = await signIn('joiner@example.com');
    expect(((await (await t.fetch('/projects', { headers: { Cookie: before.cookie! } })).json()) as Array<{ id: string }>).map((p) => p.id)).not.toContain(project!.id);

    const joined = await t.fetch('/auth/signin', ownPage('POST', { email: 'joiner@example.com', password: PASSWORD, invite }));
    expect(joined.status).toBe(200);
    const projects = (await (await t.fetch('/projects', { headers: { Cookie: cookieOf(joined)! } })).json()) as Array<{ id: string; role: string }>;
    expect(projects.find((p) => p.id === project!.id)?.role).toBe('editor');

    const again = await t.fetch('/auth/signin', ownPage('POST', { email: 'joiner@example.com', password: PASSWORD, invite }));
    expect(again.status).toBe(403);
    expect(cookieOf(again)).toBeUndefined();
  });
});
