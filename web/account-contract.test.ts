/**
 * The account pages against the answers of the accounts contract, in headless
 * Chromium: the server serves the pages, and the API calls they make are
 * answered by `page.route` with the contract's shapes, so that what the
 * page does with each answer (a refusal's detail beside the form, a token's
 * secret shown once, a session ended, the single sign-on button, sign-out)
 * is held here whatever the state of the server's side of it. The flows
 * against the real API are web/account-pages.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Page, Request, Route } from 'playwright-core';
import { useTestServer } from '../server/testing/harness.ts';
import { screenshot, useBrowser } from '../server/testing/browser.ts';
import { seriousAxeViolations, watchedPage } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;
const SHOTS = '/tmp/shots-pages';
const NOW = Date.UTC(2026, 10, 25, 12);
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36';
const SAFARI_IOS = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

const problem = (status: number, slug: string, detail: string) => ({ type: `/problems/${slug}`, title: slug, status, detail });

/** A fake of the account API's state, answering the page's calls as the contract says. */
class FakeAccount {
  signedIn = true;
  sessions = [
    { id: 'ses_here', current: true, method: 'password', userAgent: CHROME_LINUX, address: '127.0.0.1', timeCreated: NOW - 3_600_000, timeLastSeen: NOW },
    { id: 'ses_phone', current: false, method: 'passkey', userAgent: SAFARI_IOS, address: '203.0.113.9', timeCreated: NOW - 3 * 86_400_000, timeLastSeen: NOW - 86_400_000 },
  ];
  tokens: Array<Record<string, unknown>> = [{ id: 'tok_ci', object: 'token', name: 'Deploy script', scopes: ['projects:read', 'players:write'], expiresAt: NOW + 30 * 86_400_000, timeCreated: NOW - 86_400_000 }];
  passkeys = [{ id: 'pk_mac', object: 'passkey', name: 'MacBook', backedUp: true, transports: ['internal'], timeCreated: NOW - 10 * 86_400_000, timeLastUsed: NOW - 3_600_000 }];
  config = { registration: 'invite', setupRequired: false, mail: true } as Record<string, unknown>;
  /** A real session's secret, which the fake sign-in sets as the cookie, so that the server serves / to the browser. */
  sessionSecret = '';
  calls: string[] = [];
  bodies: Record<string, unknown> = {};

  async answer(route: Route, request: Request): Promise<void> {
    const path = new URL(request.url()).pathname.replace(/^\/api\/v1/, '');
    const call = `${request.method()} ${path}`;
    this.calls.push(call);
    const body = request.postData() ? (request.postDataJSON() as Record<string, unknown>) : undefined;
    if (body) this.bodies[call] = body;
    const json = (data: unknown, status = 200) => route.fulfill({ status, contentType: status < 400 ? 'application/json' : 'application/problem+json', body: JSON.stringify(data) });
    const empty = () => route.fulfill({ status: 204 });
    if (call === 'GET /auth/config') return json(this.config);
    // The mail part's operations: the same answer whether or not the address is known (202), and 204 for a used link.
    if (call === 'POST /auth/password-reset') return route.fulfill({ status: 202 });
    // A reset answers what it ended (EndedAccess), which the page says in words.
    if (call === 'POST /auth/password-reset/complete') return json({ ended: 2, tokens: 2, passkeys: 1, apps: 1 });
    if (call === 'POST /auth/email-verification') return empty();
    if (call === 'POST /auth/signin') {
      if (body?.password !== 'correct horse battery staple') return json(problem(401, 'invalid-credentials', 'The email or the password is not right.'), 401);
      this.signedIn = true;
      return route.fulfill({
        status: 200,
        contentType: 'application/json',
        headers: { 'Set-Cookie': `as_session=${this.sessionSecret}; Path=/; HttpOnly; SameSite=Lax` },
        body: JSON.stringify({ id: 'usr_ada', object: 'user', email: body.email, name: 'Ada Lovelace', timeCreated: NOW }),
      });
    }
    if (!this.signedIn) return json(problem(401, 'unauthorized', 'Sign in first.'), 401);
    switch (call) {
      case 'GET /me':
        return json({ id: 'usr_ada', object: 'user', email: 'ada@example.com', name: 'Ada Lovelace', emailVerified: false, admin: false, timeCreated: NOW });
      case 'POST /me/email-verification':
        return route.fulfill({ status: 202 });
      case 'POST /auth/signout':
        this.signedIn = false;
        return route.fulfill({ status: 200, contentType: 'application/json', headers: { 'Set-Cookie': 'as_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax' }, body: '{}' });
      case 'GET /me/sessions':
        return json(this.sessions);
      case 'DELETE /me/sessions': {
        const ended = this.sessions.filter((session) => !session.current).length;
        this.sessions = this.sessions.filter((session) => session.current);
        return json({ ended });
      }
      case 'GET /me/passkeys':
        return json(this.passkeys);
      case 'GET /me/inbox':
        // The studio's bar counts the open comments of the inbox: none here.
        return json({ openComments: 0, heldFiles: 0 });
      case 'GET /me/security-events':
        return json([{ id: 'sev_signin', object: 'security_event', kind: 'signin', timeCreated: NOW - 3_600_000, address: '127.0.0.1', userAgent: CHROME_LINUX }]);
      case 'GET /me/tokens':
        return json(this.tokens);
      case 'GET /projects':
        // The studio's library, where a sign-in lands: an account with no project yet.
        return json([]);
      case 'POST /me/tokens': {
        // As createToken answers: 200, the token with its secret; no expiresAt for one that does not expire, no lastUsedAt before its first use.
        const token = { id: 'tok_new', object: 'token', name: body!.name, scopes: body!.scopes, ...(body!.expiresAt ? { expiresAt: body!.expiresAt } : {}), timeCreated: NOW };
        this.tokens.push(token);
        return json({ ...token, secret: 'as_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH' });
      }
      case 'POST /me/password':
        return json(problem(403, 'wrong-password', 'The current password is not right.'), 403);
    }
    const session = /^DELETE \/me\/sessions\/(.+)$/.exec(call);
    if (session) {
      this.sessions = this.sessions.filter((candidate) => candidate.id !== session[1]);
      return json({});
    }
    const passkey = /^POST \/me\/passkeys\/(.+)$/.exec(call);
    if (passkey) {
      const found = this.passkeys.find((candidate) => candidate.id === passkey[1])!;
      found.name = body!.name as string;
      return json(found);
    }
    const token = /^DELETE \/me\/tokens\/(.+)$/.exec(call);
    if (token) {
      this.tokens = this.tokens.filter((candidate) => candidate.id !== token[1]);
      return json({});
    }
    return json(problem(404, 'not-found', `Not in this fake: ${call}`), 404);
  }
}

async function fakePage(browser: Parameters<typeof watchedPage>[0], fake: FakeAccount, session?: { address: string; secret: string }) {
  const watched = await watchedPage(browser);
  // The server itself sends a visit without a session away from the signed-in pages: a real session's cookie, then.
  if (session) await watched.context.addCookies([{ name: 'as_session', value: session.secret, url: session.address }]);
  await watched.page.route('**/api/v1/**', (route, request) => fake.answer(route, request));
  return watched;
}

const ready = (page: Page) => page.locator('main#account[data-state="ready"]').waitFor();
/** The settings are the studio's: its frame's marker says when it is drawn. */
const studioReady = (page: Page) => page.locator('#studio[data-state="ready"]').waitFor();
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
/** The refusals the fake gives on purpose, which Chromium logs as failed loads. */
const unexpected = (problems: string[]) => problems.filter((line) => !/status of (401|403)\b/.test(line));

describe('the account pages against the contract', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();
  /** The secret of a real session of a real account: the pages' server looks at the cookie, the fake answers the API. */
  async function realSession(): Promise<string> {
    const user = (await t.server.ctx.store.users.findOrCreate('ada@example.com', Date.now()))!;
    return (await t.server.ctx.store.sessions.create(user.id, 'password', { userAgent: null, address: null }, Date.now())).secret;
  }

  it(
    'signs in: a refusal shows its detail beside the form, keeps the email and empties the password; then lands on the studio (/) with the name in its bar',
    async () => {
      const fake = new FakeAccount();
      fake.signedIn = false;
      fake.config = { registration: 'open', setupRequired: false, mail: true, sso: { name: 'Authentik' } };
      fake.sessionSecret = await realSession();
      const watched = await fakePage(chromium.browser, fake);
      const { page } = watched;
      try {
        await page.goto(`${t.server.address}/signin`);
        await ready(page);
        // Single sign-on, offered (open registration's link is the server's: web/account-pages.test.ts).
        const sso = page.getByRole('button', { name: 'Sign in with Authentik', exact: true });
        await sso.waitFor();
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('ada@example.com');
        await page.getByLabel('Password', { exact: true }).fill('not the password');
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await expect.poll(() => page.locator('#form-error').textContent()).toBe('The email or the password is not right.');
        expect(await page.locator('#form-error').getAttribute('role')).toBe('alert');
        expect(await page.getByRole('textbox', { name: 'Email', exact: true }).inputValue()).toBe('ada@example.com');
        expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
        // The focus moves in an effect after the refusal is drawn: waited for, not read at once (a CI run read it first).
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('password');
        for (const width of [1280, 360]) {
          await page.setViewportSize({ width, height: 800 });
          expect(await overflow(page)).toBeLessThanOrEqual(0);
          await screenshot(page, { path: `${SHOTS}/signin-refused-sso-${width}.png`, fullPage: true });
        }
        expect(await seriousAxeViolations(page)).toEqual([]);

        await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(`${t.server.address}/`);
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Ada Lovelace');
        expect(fake.bodies['POST /auth/signin']).toEqual({ email: 'ada@example.com', password: 'correct horse battery staple' });
        expect(unexpected(await watched.problems())).toEqual([]);

        // Single sign-on is a navigation to the server's start route, which sends the browser to the provider.
        fake.signedIn = false;
        await watched.context.clearCookies();
        await page.goto(`${t.server.address}/signin`);
        await ready(page);
        const [start] = await Promise.all([page.waitForRequest((request) => new URL(request.url()).pathname === '/auth/oidc/start'), sso.click()]);
        expect(start.isNavigationRequest()).toBe(true);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'password reset: the link is asked for and the page says where it goes; the link sets the new password; an email verification link verifies',
    async () => {
      const fake = new FakeAccount();
      fake.signedIn = false;
      const watched = await fakePage(chromium.browser, fake);
      const { page } = watched;
      try {
        await page.goto(`${t.server.address}/reset-password`);
        await ready(page);
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('ada@example.com');
        await page.getByRole('button', { name: 'Send reset link', exact: true }).click();
        await page.getByRole('heading', { name: 'Check your email' }).waitFor();
        expect(fake.bodies['POST /auth/password-reset']).toEqual({ email: 'ada@example.com' });
        await page.setViewportSize({ width: 360, height: 800 });
        await screenshot(page, { path: `${SHOTS}/reset-password-sent-360.png`, fullPage: true });

        await page.goto(`${t.server.address}/reset-password?token=rst_secret`);
        await ready(page);
        await page.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
        await page.getByRole('button', { name: 'Set password', exact: true }).click();
        await page.getByRole('heading', { name: 'Your password is set' }).waitFor();
        expect(await page.locator('#ended').textContent()).toBe('Signed out everywhere; 2 tokens, 1 passkey and 1 connected app were ended.');
        expect(fake.bodies['POST /auth/password-reset/complete']).toEqual({ token: 'rst_secret', password: 'a brand new passphrase' });
        await screenshot(page, { path: `${SHOTS}/reset-password-set-360.png`, fullPage: true });

        await page.goto(`${t.server.address}/verify-email?token=vfy_secret`);
        await expect.poll(() => page.getByRole('status').textContent()).toBe('Your email address is verified.');
        expect(fake.bodies['POST /auth/email-verification']).toEqual({ token: 'vfy_secret' });
        expect(await seriousAxeViolations(page)).toEqual([]);
        await screenshot(page, { path: `${SHOTS}/verify-email-done-360.png`, fullPage: true });
        expect(unexpected(await watched.problems())).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows no "Create an account" and no single sign-on where the server offers neither (REGISTRATION=invite), and says sign-up is by invitation',
    async () => {
      const fake = new FakeAccount();
      fake.signedIn = false;
      const watched = await fakePage(chromium.browser, fake);
      const { page } = watched;
      try {
        await page.goto(`${t.server.address}/signin`);
        await ready(page);
        expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
        expect(await page.getByRole('button', { name: /^Sign in with (?!a passkey)/ }).count()).toBe(0);
        await page.goto(`${t.server.address}/signup`);
        await ready(page);
        await expect.poll(() => page.locator('.notice').textContent()).toContain('by invitation');
        expect(await page.getByRole('button', { name: 'Create account' }).isVisible()).toBe(false);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'settings, tabs Profile, Security and Access tokens: sends a verification link; lists sessions, passkeys and tokens; ends another session; a wrong current password says so; shows a new token\'s secret once; Sign out',
    async () => {
      const fake = new FakeAccount();
      const watched = await fakePage(chromium.browser, fake, { address: t.server.address, secret: await realSession() });
      const { page } = watched;
      try {
        await page.goto(`${t.server.address}/settings`);
        await studioReady(page);
        // The first tab, Profile: the address is not verified yet, and a link is sent for it.
        expect(await page.getByRole('tab', { name: 'Profile', exact: true }).getAttribute('aria-selected')).toBe('true');
        await expect.poll(() => page.locator('#email-state').textContent()).toContain('not verified yet');
        await page.getByRole('button', { name: 'Send a verification link', exact: true }).click();
        await expect.poll(() => page.locator('#email-verify-done').textContent()).toBe('A link is on its way to ada@example.com. Open it to verify the address.');
        expect(fake.calls).toContain('POST /me/email-verification');

        await page.getByRole('tab', { name: 'Security', exact: true }).click();
        expect(await page.getByRole('tab', { name: 'Security', exact: true }).getAttribute('aria-selected')).toBe('true');
        const sessions = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
        await expect.poll(() => sessions.count()).toBe(2);
        expect(await sessions.filter({ hasText: 'This device' }).textContent()).toContain('Chrome on Linux');
        await page.getByRole('list', { name: 'Passkeys' }).getByText('MacBook').waitFor();
        expect(await page.getByRole('list', { name: 'Passkeys' }).getByRole('listitem').textContent()).toMatch(/added .+ · last used /);
        await page.getByRole('button', { name: 'Add a passkey', exact: true }).waitFor();
        for (const width of [1280, 360]) {
          await page.setViewportSize({ width, height: 800 });
          expect(await overflow(page)).toBeLessThanOrEqual(0);
          await screenshot(page, { path: `${SHOTS}/settings-${width}.png`, fullPage: true });
        }
        expect(await seriousAxeViolations(page)).toEqual([]);

        // A passkey renamed in place, from the keyboard.
        const passkeys = page.getByRole('list', { name: 'Passkeys' });
        await passkeys.getByRole('button', { name: 'Rename' }).click();
        const newName = page.getByRole('textbox', { name: 'New name for the passkey MacBook' });
        await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('New name for the passkey MacBook');
        await newName.fill('Work laptop');
        await newName.press('Enter');
        await passkeys.getByText('Work laptop').waitFor();
        expect(fake.bodies['POST /me/passkeys/pk_mac']).toEqual({ name: 'Work laptop' });

        // The other session ends; this one stays, and has nothing left to end elsewhere.
        await sessions.filter({ hasNotText: 'This device' }).getByRole('button', { name: 'End session' }).click();
        await expect.poll(() => sessions.count()).toBe(1);
        expect(fake.calls).toContain('DELETE /me/sessions/ses_phone');
        await expect.poll(() => page.getByRole('button', { name: 'Sign out everywhere else' }).isDisabled()).toBe(true);

        await page.getByLabel('Current password', { exact: true }).fill('not my password');
        await page.getByLabel('New password', { exact: true }).fill('a much better passphrase');
        await page.getByRole('button', { name: 'Change password', exact: true }).click();
        await expect.poll(() => page.locator('#password-form-error').textContent()).toBe('The current password is not right.');
        expect(await page.getByLabel('New password', { exact: true }).inputValue()).toBe('');

        // A token: name, scopes, expiry; its secret shown once, in a field to copy.
        await page.getByRole('tab', { name: 'Access tokens', exact: true }).click();
        await page.getByRole('list', { name: 'API tokens' }).getByText('Deploy script').waitFor();
        await page.getByRole('textbox', { name: 'Token name', exact: true }).fill('Backup job');
        await page.getByRole('button', { name: 'Create token', exact: true }).click();
        await expect.poll(() => page.locator('#token-form-error').textContent()).toBe('Choose at least one scope: what the token may do.');
        await page.getByRole('checkbox', { name: /projects:read/ }).check();
        await page.getByRole('checkbox', { name: /comments:write/ }).check();
        await page.getByLabel('Expires on (optional)').fill('2099-01-31');
        await page.getByRole('button', { name: 'Create token', exact: true }).click();
        const secret = page.getByRole('textbox', { name: 'New token', exact: true });
        await expect.poll(() => secret.inputValue()).toBe('as_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH');
        const sent = fake.bodies['POST /me/tokens'] as { name: string; scopes: string[]; expiresAt: number };
        expect(sent.name).toBe('Backup job');
        expect(sent.scopes).toEqual(['projects:read', 'comments:write']);
        expect(new Date(sent.expiresAt).getFullYear()).toBe(2099);
        await page.getByRole('list', { name: 'API tokens' }).getByText('Backup job').waitFor();
        for (const width of [1280, 360]) {
          await page.setViewportSize({ width, height: 800 });
          await screenshot(page, { path: `${SHOTS}/settings-token-secret-${width}.png`, fullPage: true });
        }
        expect(await seriousAxeViolations(page)).toEqual([]);
        // The tab is in the address: a reload opens it again, without the secret.
        await page.reload();
        await studioReady(page);
        await page.getByRole('list', { name: 'API tokens' }).getByText('Backup job').waitFor();
        expect(await page.getByRole('textbox', { name: 'New token' }).isVisible()).toBe(false);
        expect(await page.content()).not.toContain('as_0123456789');

        await page.getByRole('button', { name: 'Sign out', exact: true }).click();
        await page.waitForURL(`${t.server.address}/signin`);
        expect(fake.calls).toContain('POST /auth/signout');
        expect(unexpected(await watched.problems())).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
