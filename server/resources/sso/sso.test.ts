/**
 * Single sign-on over real HTTP on each store, against a real OpenID
 * provider on loopback (server/testing/oidc-provider.ts): the browser's part
 * is played with fetch, the round trip's cookie and the session cookie
 * carried by hand.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useServerWithOidc } from '../../testing/oidc-provider.ts';
import { startTestServer } from '../../testing/test-server.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { ROUND_TRIP_MS } from './oidc-routes.ts';
import { SSO_ERROR_CODES, ssoErrorMessage } from '../../../shared/sso-errors.ts';

const cookieNamed = (response: Response, name: string) => response.headers.getSetCookie().find((line) => line.startsWith(`${name}=`) && !/Max-Age=0/i.test(line))?.split(';')[0];

describe.each(backends)('single sign-on on %s', (backend) => {
  const t = useServerWithOidc(backend, { REGISTRATION: 'open' });
  const api = (path: string, init?: RequestInit) => fetch(t.server.apiUrl + path, init);
  const store = () => t.server.ctx.store;

  /** A browser's trip from the start route to the provider, signed in there as `subject`, and back: answers the callback's request and answer. */
  async function roundTrip(subject: string | 'cancel', options: { invite?: string; cookie?: string; next?: string } = {}) {
    const query = new URLSearchParams({ ...(options.invite ? { invite: options.invite } : {}), ...(options.next !== undefined ? { next: options.next } : {}) });
    const start = await fetch(`${t.server.address}/auth/oidc/start${query.size ? `?${query}` : ''}`, { redirect: 'manual', headers: options.cookie ? { cookie: options.cookie } : {} });
    expect(start.status).toBe(302);
    const tripCookie = cookieNamed(start, 'as_oidc')!;
    const back = subject === 'cancel' ? await t.provider.cancel(start.headers.get('location')!) : await t.provider.signIn(start.headers.get('location')!, subject);
    const cookie = [tripCookie, options.cookie].filter(Boolean).join('; ');
    return { back, tripCookie, cookie, ...(await callback(back, cookie)) };
  }
  async function callback(url: URL, cookie?: string) {
    const response = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    expect(response.status, await response.clone().text()).toBe(302);
    const location = new URL(response.headers.get('location')!, t.server.address);
    return { response, location, session: cookieNamed(response, 'as_session'), error: location.pathname === '/signin' ? location.searchParams.get('error') : null };
  }
  const me = async (session: string | undefined) => (await api('/me', { headers: { cookie: session ?? '' } })).json();
  const eventsOf = async (userId: string) => (await store().securityEvents.listOf(userId)).map((event) => `${event.kind}${event.detail ? `: ${event.detail}` : ''}`);
  let n = 0;
  /** A new person at the provider, with an address of their own. */
  const person = (claims: { emailVerified?: boolean; name?: string; email?: string } = {}) => {
    n += 1;
    const subject = `person-${n}`;
    const email = claims.email ?? `person${n}@example.org`;
    t.provider.addPerson(subject, { email, emailVerified: claims.emailVerified ?? true, name: claims.name });
    return { subject, email };
  };
  async function accountWithPassword(email: string, emailVerified: boolean) {
    return (await store().users.create({ email, name: 'Has a password', passwordHash: await hashPassword('a long and unusual passphrase'), emailVerified, isAdmin: false }, Date.now()))!;
  }

  it('says so in the auth config, for the sign-in page’s button', async () => {
    expect(await (await api('/auth/config')).json()).toMatchObject({ sso: { name: 'Test SSO' } });
  });

  it('lets a new person in with open registration, and the same identity back into the same account', async () => {
    t.server.ctx.config.registration = 'open';
    const ada = person({ name: 'Ada Lovelace' });
    const first = await roundTrip(ada.subject);
    expect(first.location.href).toBe(`${t.server.address}/`);
    expect(first.response.headers.get('cache-control')).toBe('no-store');
    const account = await me(first.session);
    expect(account).toMatchObject({ email: ada.email, name: 'Ada Lovelace', emailVerified: true, admin: false });
    expect(await api('/me/sessions', { headers: { cookie: first.session! } }).then((r) => r.json())).toMatchObject([{ method: 'oidc', current: true }]);
    // Recorded within the same millisecond, perhaps: compared as a set.
    expect((await eventsOf(account.id)).sort()).toEqual(['account-created: single sign-on (Test SSO), open registration', `identity-linked: Test SSO (${t.provider.issuer})`, 'signin: oidc']);

    // The provider changes the person's email: the identity, not the email, finds the account.
    t.provider.addPerson(ada.subject, { email: 'ada@new.example.org', emailVerified: true });
    const again = await roundTrip(ada.subject);
    expect((await me(again.session)).id).toBe(account.id);
    expect(await store().users.findByEmail('ada@new.example.org')).toBeUndefined();
  });

  it('takes only an email the API can answer with, and a name as the API bounds it', async () => {
    for (const email of ['not an email', `${'x'.repeat(250)}@example.org`, 'nul\u0000@example.org']) {
      const odd = person({ email });
      expect((await roundTrip(odd.subject)).error, email).toBe('sso-no-email');
    }
    const long = person({ name: `  ${'Ω'.repeat(150)}\u0007 ` });
    expect((await me((await roundTrip(long.subject)).session)).name).toBe('Ω'.repeat(100));
  });

  it('links an existing account by an email the provider says is verified', async () => {
    const email = `linked${n}@example.org`;
    const existing = await accountWithPassword(email, true);
    const bea = person({ email: email.toUpperCase() });
    const { session } = await roundTrip(bea.subject);
    expect((await me(session)).id).toBe(existing.id);
    expect(await store().sso.identitiesOf(existing.id)).toEqual([{ issuer: t.provider.issuer, subject: bea.subject, timeCreated: expect.any(Number) }]);
    expect(await eventsOf(existing.id)).toContain(`identity-linked: Test SSO (${t.provider.issuer})`);
  });

  it('does not link an existing account by an email the provider has not verified, nor to an account whose own email is unverified', async () => {
    for (const emailVerified of [false, undefined]) {
      const email = `squatted${n}-${emailVerified}@example.org`;
      const existing = await accountWithPassword(email, true);
      const mallory = person({ email });
      t.provider.addPerson(mallory.subject, { email, emailVerified });
      const trip = await roundTrip(mallory.subject);
      expect(trip.error).toBe('sso-email-unverified');
      expect(trip.session).toBeUndefined();
      expect(await store().sso.accountOf(t.provider.issuer, mallory.subject)).toBeUndefined();
      expect(await eventsOf(existing.id)).toContain('signin-failed: single sign-on (Test SSO): the provider has not verified the email');
    }
    // Someone made an account with an address they need not own; its owner signing in with the provider does not get it.
    const email = `prehijacked${n}@example.org`;
    const squatter = await accountWithPassword(email, false);
    const owner = person({ email });
    const trip = await roundTrip(owner.subject);
    expect(trip.error).toBe('sso-account-unverified');
    expect(await store().sso.identitiesOf(squatter.id)).toEqual([]);
  });

  it('lets new people in as REGISTRATION says: open, by invitation, or not at all', async () => {
    try {
      t.server.ctx.config.registration = 'invite';
      const cy = person();
      expect((await roundTrip(cy.subject)).error).toBe('sso-no-account');
      t.server.ctx.config.registration = 'closed';
      expect((await roundTrip(cy.subject)).error).toBe('sso-registration-closed');
      expect(await store().users.findByEmail(cy.email)).toBeUndefined();

      // An administrator's invitation, for this address, begun from /signup?invite=…: used once.
      t.server.ctx.config.registration = 'invite';
      const invitation = await store().oneTimeLinks.create('invitation', { email: cy.email, data: { admin: true }, ttlMs: 60_000 }, Date.now());
      const invited = await roundTrip(cy.subject, { invite: invitation.secret });
      expect(await me(invited.session)).toMatchObject({ email: cy.email, admin: true, emailVerified: true });
      const dee = person();
      expect((await roundTrip(dee.subject, { invite: invitation.secret })).error).toBe('sso-invite-invalid');
      // An invitation for another address lets nobody else in.
      const other = await store().oneTimeLinks.create('invitation', { email: 'someone-else@example.org', ttlMs: 60_000 }, Date.now());
      expect((await roundTrip(dee.subject, { invite: other.secret })).error).toBe('sso-invite-invalid');
      expect(await store().oneTimeLinks.peek('invitation', other.secret, Date.now())).toBeDefined();
      expect(await store().users.findByEmail(dee.email)).toBeUndefined();
    } finally {
      t.server.ctx.config.registration = 'open';
    }
  });

  it('refuses a tampered state, a callback opened in another browser, and a replayed one', async () => {
    const eve = person();
    // Tampered: the state is not the one this browser began with.
    const start = await fetch(`${t.server.address}/auth/oidc/start`, { redirect: 'manual' });
    const tripCookie = cookieNamed(start, 'as_oidc')!;
    const back = await t.provider.signIn(start.headers.get('location')!, eve.subject);
    const tampered = new URL(back);
    tampered.searchParams.set('state', `${back.searchParams.get('state')}x`);
    expect((await callback(tampered, tripCookie)).error).toBe('sso-expired');
    // Login CSRF: the callback with an attacker's own code, opened by a victim's browser, which began no round trip.
    expect(await callback(back)).toMatchObject({ error: 'sso-expired', session: undefined });
    expect(await callback(back, 'as_oidc=a-state-of-another-round-trip')).toMatchObject({ error: 'sso-expired', session: undefined });
    // The real one still works (nothing above used it up), once.
    const real = await callback(back, tripCookie);
    expect(real.location.pathname).toBe('/');
    expect(real.session).toBeDefined();
    expect(await callback(back, tripCookie)).toMatchObject({ error: 'sso-expired', session: undefined });
    expect(await store().sso.takeChallenge('anything', Date.now())).toBeUndefined();
  });

  it('refuses a round trip that took too long', async () => {
    const fay = person();
    const start = await fetch(`${t.server.address}/auth/oidc/start`, { redirect: 'manual' });
    const back = await t.provider.signIn(start.headers.get('location')!, fay.subject);
    t.server.clock.advance(ROUND_TRIP_MS);
    try {
      expect((await callback(back, cookieNamed(start, 'as_oidc'))).error).toBe('sso-expired');
    } finally {
      t.server.clock.advance(-ROUND_TRIP_MS);
    }
  });

  it('sends the browser back to /signin with a message when the person cancels at the provider, or their account is disabled', async () => {
    const cancelled = await roundTrip('cancel');
    expect(cancelled.back.searchParams.get('error')).toBe('access_denied');
    expect(cancelled.error).toBe('sso-cancelled');
    expect(cancelled.session).toBeUndefined();

    const gus = person();
    const { session } = await roundTrip(gus.subject);
    const account = await me(session);
    await store().db.execute('UPDATE users SET disabled = 1 WHERE id = $1', [account.id]);
    expect((await roundTrip(gus.subject)).error).toBe('account-disabled');
    for (const code of SSO_ERROR_CODES) expect(ssoErrorMessage(code, 'Test SSO')).toMatch(/\.$/);
    expect(ssoErrorMessage('constructor', 'Test SSO')).toBeUndefined();
  });

  it('returns to the consent page it was begun from (`next`), and to / for any other `next`', async () => {
    const ivy = person();
    const consent = '/oauth/interaction/Zk3_q-9x';
    const trip = await roundTrip(ivy.subject, { next: consent });
    expect(trip.location.href).toBe(`${t.server.address}${consent}`);
    expect(trip.session).toBeDefined();
    // Only a consent page's path on this server, as the password sign-in allows (web/account/next-path.ts): never elsewhere.
    for (const next of ['https://evil.example/oauth/interaction/x', '//evil.example/oauth/interaction/x', '/\\evil.example', '/oauth/interaction/../../settings', '/settings', '/oauth/interaction/x?y=1', `/oauth/interaction/${'a'.repeat(600)}`]) {
      const elsewhere = await roundTrip(ivy.subject, { next });
      expect(elsewhere.location.href, next).toBe(`${t.server.address}/`);
      expect(elsewhere.session).toBeDefined();
    }
    // A round trip that ends in a refusal keeps `next` on /signin, so that another way of signing in still returns there.
    const cancelled = await roundTrip('cancel', { next: consent });
    expect(cancelled.error).toBe('sso-cancelled');
    expect(cancelled.location.searchParams.get('next')).toBe(consent);
  });

  it('replaces the session the browser carried', async () => {
    const hal = person();
    const first = await roundTrip(hal.subject);
    const second = await roundTrip(hal.subject, { cookie: first.session });
    expect(second.session).not.toBe(first.session);
    expect((await api('/me', { headers: { cookie: first.session! } })).status).toBe(401);
    expect((await me(second.session)).email).toBe(hal.email);
  });
});

describe.each(backends)('single sign-on with its provider down, on %s', (backend) => {
  it('starts the server all the same, and sends the sign-in back to /signin saying so', async () => {
    // Port 9 (discard) on loopback: nothing answers there.
    const server = await startTestServer(backend, { OIDC_ISSUER: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'audio-share', OIDC_CLIENT_SECRET: 'secret', OIDC_NAME: 'Down' });
    try {
      const start = await fetch(`${server.address}/auth/oidc/start`, { redirect: 'manual' });
      expect(start.status).toBe(302);
      expect(start.headers.get('location')).toBe('/signin?error=sso-unavailable');
      expect(start.headers.getSetCookie().filter((line) => line.startsWith('as_oidc='))).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('has no single sign-on routes, and says none, when it is not configured', async () => {
    const server = await startTestServer(backend);
    try {
      expect((await fetch(`${server.address}/auth/oidc/start`, { redirect: 'manual' })).status).toBe(404);
      expect(await (await fetch(`${server.apiUrl}/auth/config`)).json()).not.toHaveProperty('sso');
    } finally {
      await server.stop();
    }
  });
});
