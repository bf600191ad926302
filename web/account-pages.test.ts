/**
 * The account pages (the front door) in headless Chromium against a
 * real server. Signed out: each page at 1280 and 360 px, with no horizontal
 * scroll, nothing serious for axe-core, no CSP violation, no console error
 * and no request to any other origin (screenshots in /tmp/shots-pages/); a
 * signed-out visit to / or /settings goes to /signin. On each store, the
 * flows: the setup link makes the first account and lands on / signed in;
 * sign-out; a wrong password says so; sign-in; a signed-in visit to
 * /signin goes to /; the settings' Security tab (the studio's /settings)
 * lists this session and another, and ends the other; the password changed
 * there; sign-up by invitation. Every wait ends on a condition with a deadline.
 */
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { screenshot, useBrowser } from '../server/testing/browser.ts';
import { createSetupLink } from '../server/resources/account/setup-link.ts';
import { operations } from '../generated/client.ts';
import { seriousAxeViolations, watchedPage, type WatchedPage } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;
const SHOTS = '/tmp/shots-pages';
mkdirSync(SHOTS, { recursive: true });

/** Requests the page makes to any origin but the server's own. */
function watchOrigins(page: Page, origin: string): string[] {
  const foreign: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== origin) foreign.push(request.url());
  });
  return foreign;
}

/** The page fits the viewport's width: nothing to scroll sideways. */
const horizontalOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Problems that are not the expected refusals (the app asks GET /me knowing a signed-out visitor gets 401). */
async function unexpectedProblems(watched: WatchedPage): Promise<string[]> {
  return (await watched.problems()).filter((problem) => !/status of 40[14]\b.*\/api\/v1\//.test(problem));
}

/** At both widths: no sideways scroll, axe clean, and a screenshot to look at. */
async function checkLayout(page: Page, name: string): Promise<void> {
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 800 });
    expect(await horizontalOverflow(page), `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0);
    await screenshot(page, { path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  expect(await seriousAxeViolations(page), name).toEqual([]);
}

describe('the account pages, signed out', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();
  const ready = (page: Page) => page.locator('main#account[data-state="ready"]').waitFor();

  it(
    'draws /signin, /signup, /setup, /reset-password and /verify-email with their fields and buttons, fitting 360 px, axe clean, no CSP violation, nothing from elsewhere',
    async () => {
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      const origin = new URL(t.server.address).origin;
      const foreign = watchOrigins(page, origin);
      try {
        await page.goto(`${t.server.address}/signin`);
        await ready(page);
        await page.getByRole('textbox', { name: 'Email', exact: true }).waitFor();
        await page.getByLabel('Password', { exact: true }).waitFor();
        await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
        await page.getByRole('button', { name: 'Sign in with a passkey', exact: true }).waitFor();
        await page.getByRole('link', { name: 'Forgot your password?', exact: true }).waitFor();
        expect(await page.getByLabel('Password', { exact: true }).getAttribute('autocomplete')).toBe('current-password');
        expect(await page.getByRole('textbox', { name: 'Email', exact: true }).getAttribute('autocomplete')).toBe('email');
        await checkLayout(page, 'signin');

        await page.goto(`${t.server.address}/signup?invite=inv_${'x'.repeat(20)}`);
        await ready(page);
        for (const name of ['Name', 'Email']) await page.getByRole('textbox', { name, exact: true }).waitFor();
        expect(await page.getByLabel('Password', { exact: true }).getAttribute('autocomplete')).toBe('new-password');
        await page.getByRole('button', { name: 'Create account', exact: true }).waitFor();
        // Someone invited who has an account signs in from here, the invitation carried along.
        expect(await page.getByRole('link', { name: 'Sign in', exact: true }).getAttribute('href')).toBe(`/signin?invite=inv_${'x'.repeat(20)}`);
        await checkLayout(page, 'signup-invited');

        await page.goto(`${t.server.address}/setup?token=not-a-real-one`);
        await ready(page);
        await checkLayout(page, 'setup');

        await page.goto(`${t.server.address}/reset-password`);
        await ready(page);
        await page.getByRole('textbox', { name: 'Email', exact: true }).waitFor();
        await page.getByRole('button', { name: 'Send reset link', exact: true }).waitFor();
        await checkLayout(page, 'reset-password');

        await page.goto(`${t.server.address}/reset-password?token=abc`);
        await ready(page);
        await page.getByLabel('New password', { exact: true }).waitFor();
        await page.getByRole('button', { name: 'Set password', exact: true }).waitFor();
        await checkLayout(page, 'reset-password-token');

        await page.goto(`${t.server.address}/verify-email`);
        await ready(page);
        await checkLayout(page, 'verify-email-no-token');

        expect(await unexpectedProblems(watched)).toEqual([]);
        expect(foreign).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'checks a form before sending it: the alert says what is missing, and the field is marked and focused',
    async () => {
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        await page.goto(`${t.server.address}/signin`);
        await ready(page);
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('not an address');
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await expect.poll(() => page.getByRole('alert').first().textContent()).toBe('That email address does not look right.');
        expect(await page.getByRole('textbox', { name: 'Email', exact: true }).getAttribute('aria-invalid')).toBe('true');
        // The focus moves in an effect after the refusal is drawn: waited for, not read at once (a CI run read it first).
        await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('email');
        await page.setViewportSize({ width: 360, height: 800 });
        await screenshot(page, { path: `${SHOTS}/signin-invalid-360.png`, fullPage: true });
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it('answers each page with the strict CSP, and carries an invitation into the page only URL-encoded', async () => {
    for (const path of ['/signin', '/signup', '/setup', '/reset-password', '/verify-email']) {
      const response = await fetch(`${t.server.address}${path}`, { redirect: 'manual' });
      expect(response.status, path).toBe(200);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
    }
    const hostile = '"><script>alert(1)</script>';
    const html = await (await fetch(`${t.server.address}/signup?invite=${encodeURIComponent(hostile)}`)).text();
    expect(html).not.toContain('<script>alert');
    expect(html).toContain(`href="/signin?invite=${encodeURIComponent(hostile)}"`);
  });

  it(
    'sends a signed-out visit to the studio (/, /projects/…, /links, /inbox, /admin) or /settings to /signin, from the server before any page is drawn',
    async () => {
      for (const path of ['/', '/settings', '/projects/prj_7h2kq9xw4m', '/links', '/links/ply_7h2kq9xw4m', '/inbox', '/admin']) {
        const response = await fetch(`${t.server.address}${path}`, { redirect: 'manual', headers: { Cookie: 'as_session=not-a-session' } });
        expect(response.status, path).toBe(303);
        expect(response.headers.get('location'), path).toBe('/signin');
      }
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        for (const path of ['/', '/settings']) {
          await page.goto(`${t.server.address}${path}`);
          await page.waitForURL(`${t.server.address}/signin`);
        }
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});

describe('the account pages with open registration', () => {
  const t = useTestServer('sqlite', { REGISTRATION: 'open' });
  const chromium = useBrowser();

  it(
    '/signin links to "Create an account", and /signup takes anyone without an invitation',
    async () => {
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        await page.goto(`${t.server.address}/signin`);
        await page.getByRole('link', { name: 'Create an account', exact: true }).click();
        await page.waitForURL(`${t.server.address}/signup`);
        await page.locator('main#account[data-state="ready"]').waitFor();
        expect(await page.locator('.notice').count()).toBe(0);
        await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Cy Open');
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('cy@example.com');
        await page.getByLabel('Password', { exact: true }).fill('violet harbour lantern at dusk');
        await page.getByRole('button', { name: 'Create account', exact: true }).click();
        await page.waitForURL(`${t.server.address}/`);
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Cy Open');
        expect(await watched.problems()).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});

const PASSWORD = 'violet harbour lantern at dusk';

describe.each(backends)('the front door in Chromium on %s', (backend) => {
  const t = useTestServer(backend);
  const chromium = useBrowser();
  const ready = (page: Page) => page.locator('main#account[data-state="ready"]').waitFor();
  /** The settings are the studio's: its frame's marker says when it is drawn. */
  const studioReady = (page: Page) => page.locator('#studio[data-state="ready"]').waitFor();
  const at = (path: string) => `${t.server.address}${path}`;

  async function signInThroughThePage(browser: Browser, email: string, password = PASSWORD): Promise<WatchedPage> {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(at('/signin'));
    await ready(page);
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(at('/'));
    return watched;
  }

  it(
    'the setup link makes the first account and lands on / signed in; Sign out; a wrong password says so; Sign in; /signin then goes to /',
    async () => {
      // Each file's server starts on an empty database, and this test runs first in its describe.
      const link = (await createSetupLink(t.server.ctx))!;
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      const foreign = watchOrigins(page, new URL(t.server.address).origin);
      try {
        await page.goto(link);
        await ready(page);
        await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Ada Lovelace');
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('ada@example.com');
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Create account', exact: true }).click();
        await page.waitForURL(at('/'));
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Ada Lovelace');
        await page.getByRole('link', { name: 'Settings', exact: true }).waitFor();
        if (backend === 'sqlite') await checkLayout(page, 'studio-library-empty');

        await page.getByRole('button', { name: 'Sign out', exact: true }).click();
        await page.waitForURL(at('/signin'));
        await page.goto(at('/'));
        await page.waitForURL(at('/signin'));
        await ready(page);

        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('ada@example.com');
        await page.getByLabel('Password', { exact: true }).fill('not the right passphrase');
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        const alert = page.locator('#form-error');
        await expect.poll(() => alert.textContent()).not.toBe('');
        expect(await alert.getAttribute('role')).toBe('alert');
        // What was typed stays, but the password.
        expect(await page.getByRole('textbox', { name: 'Email', exact: true }).inputValue()).toBe('ada@example.com');
        expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
        if (backend === 'sqlite') await checkLayout(page, 'signin-wrong-password');

        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(at('/'));
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Ada Lovelace');
        await page.goto(at('/signin'));
        await page.waitForURL(at('/'));
        // The refused sign-in is the one failed load the page may log.
        expect((await watched.problems()).filter((line) => !/status of 401\b.*\/api\/v1\/auth\/signin/.test(line))).toEqual([]);
        expect(foreign).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'settings, tab Security: lists this session and another, ends the other, and changes the password',
    async () => {
      const here = await signInThroughThePage(chromium.browser, 'ada@example.com');
      const there = await signInThroughThePage(chromium.browser, 'ada@example.com');
      const { page } = here;
      try {
        await page.getByRole('link', { name: 'Settings', exact: true }).click();
        await page.waitForURL(at('/settings'));
        await studioReady(page);
        await page.getByRole('tab', { name: 'Security', exact: true }).click();
        await page.waitForURL(at('/settings?tab=security'));
        expect(await page.getByRole('tab', { name: 'Security', exact: true }).getAttribute('aria-selected')).toBe('true');
        const sessions = page.getByRole('list', { name: 'Sessions' }).getByRole('listitem');
        // This browser's, the other's, and the one the first test left signed in.
        await expect.poll(() => sessions.count()).toBe(3);
        await sessions.filter({ hasText: 'This device' }).waitFor();
        if (backend === 'sqlite') await checkLayout(page, 'settings-real');

        await sessions.filter({ hasNotText: 'This device' }).first().getByRole('button', { name: 'End session' }).click();
        // Each end is a call and a list read again: a deadline for a busy machine's database.
        await expect.poll(() => sessions.count(), { timeout: 10_000 }).toBe(2);
        await page.getByRole('button', { name: 'Sign out everywhere else', exact: true }).click();
        await expect.poll(() => sessions.count(), { timeout: 10_000 }).toBe(1);
        expect(await sessions.textContent()).toContain('This device');
        // The other browser is signed out: its next visit goes to /signin. This one is not.
        await there.page.goto(at('/settings'));
        await there.page.waitForURL(at('/signin'));
        // The tab is in the address: a reload opens it again.
        await page.reload();
        await studioReady(page);
        expect(page.url()).toBe(at('/settings?tab=security'));
        expect(await page.getByRole('tab', { name: 'Security', exact: true }).getAttribute('aria-selected')).toBe('true');

        const NEW_PASSWORD = 'a fresh and quite long passphrase';
        await page.getByLabel('Current password', { exact: true }).fill('not my password at all');
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Change password', exact: true }).click();
        await expect.poll(() => page.locator('#password-form-error').textContent()).not.toBe('');
        await page.getByLabel('Current password', { exact: true }).fill(PASSWORD);
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Change password', exact: true }).click();
        await expect.poll(() => page.locator('#password-form-done').textContent()).toBe('Your password is changed. Signed out everywhere else.');
        expect(await page.locator('#password-form-error').textContent()).toBe('');
        const signedIn = await t.fetch('/auth/signin', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Origin: new URL(t.server.address).origin },
          body: JSON.stringify({ email: 'ada@example.com', password: NEW_PASSWORD }),
        });
        expect(signedIn.status).toBe(200);
        // Put it back for the tests after this one.
        await page.getByLabel('Current password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByLabel('New password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Change password', exact: true }).click();
        await expect.poll(() => page.locator('#password-form-error').textContent()).toBe('');
        await expect.poll(() => page.locator('#password-form-done').textContent()).not.toBe('');
      } finally {
        await here.close();
        await there.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it.runIf('createToken' in operations)(
    'a token created in the settings shows its secret once, and is listed',
    async () => {
      const watched = await signInThroughThePage(chromium.browser, 'ada@example.com');
      const { page } = watched;
      try {
        await page.goto(at('/settings'));
        await studioReady(page);
        await page.getByRole('tab', { name: 'Access tokens', exact: true }).click();
        await page.getByRole('textbox', { name: 'Token name', exact: true }).fill('Backup job');
        await page.getByRole('checkbox', { name: /projects:read/ }).check();
        await page.getByRole('button', { name: 'Create token', exact: true }).click();
        const secret = page.getByRole('textbox', { name: 'New token', exact: true });
        await expect.poll(() => secret.inputValue()).not.toBe('');
        const value = await secret.inputValue();
        // It works within its scope, projects:read.
        const projects = await fetch(`${t.server.apiUrl}/projects`, { headers: { Authorization: `Bearer ${value}` } });
        expect(projects.status).toBe(200);
        await page.getByRole('list', { name: 'API tokens' }).getByText('Backup job').waitFor();
        await page.reload();
        await studioReady(page);
        await page.getByRole('list', { name: 'API tokens' }).getByText('Backup job').waitFor();
        expect(await page.content()).not.toContain(value);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'sign-up by invitation makes the account and lands on / signed in; without one, the page says sign-up is by invitation',
    async () => {
      const { secret } = await t.server.ctx.store.oneTimeLinks.create('invitation', { email: 'bo@example.com', ttlMs: 3_600_000 }, Date.now());
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        await page.goto(at('/signup'));
        await ready(page);
        await expect.poll(() => page.locator('.notice').textContent()).toContain('by invitation');
        expect(await page.getByRole('button', { name: 'Create account' }).isVisible()).toBe(false);

        await page.goto(at(`/signup?invite=${encodeURIComponent(secret)}`));
        await ready(page);
        expect(await page.getByRole('link', { name: 'Sign in', exact: true }).getAttribute('href')).toBe(`/signin?invite=${encodeURIComponent(secret)}`);
        await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Bo Diaz');
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('bo@example.com');
        // Too short: said before anything is sent.
        await page.getByLabel('Password', { exact: true }).fill('short');
        await page.getByRole('button', { name: 'Create account', exact: true }).click();
        await expect.poll(() => page.locator('#form-error').textContent()).toBe('Password needs at least 12 characters (it has 5).');
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Create account', exact: true }).click();
        await page.waitForURL(at('/'));
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Bo Diaz');
        expect(await watched.problems()).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
