/**
 * What is done by mail, in headless Chromium against a real server on each
 * store, its mail going to a real SMTP server on loopback
 * (server/testing/smtp-sink.ts) and the links read out of what it got
 * (the accounts rules: "password reset through mail"). A person who forgot their
 * password asks for a link at /reset-password, opens it from the mail, sets
 * a new one (every session of the account ends, the one in another browser
 * too) and signs in with it; a person signed in verifies their address from
 * the settings' link. No CSP violation, console error or request elsewhere.
 * Every wait ends on a condition with a deadline.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import type { Page } from 'playwright-core';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { linkTo, startSmtpSink, type SmtpSink } from '../server/testing/smtp-sink.ts';
import { hashPassword } from '../server/auth/passwords.ts';
import { watchedPage, type WatchedPage } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;
const PASSWORD = 'the first long passphrase';
const NEW_PASSWORD = 'a second quite different passphrase';

describe.each(backends)('mail flows in Chromium on %s', (backend) => {
  const env: Record<string, string> = { MAIL_FROM: 'Audio Share <audio@example.org>', JOB_POLL_MS: '20' };
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await sink.close();
  });
  const chromium = useBrowser();
  const at = (path: string) => `${t.server.address}${path}`;
  const ready = (page: Page) => page.locator('main#account[data-state="ready"]').waitFor();

  /** Problems that are not the expected refusals (as web/account-pages.test.ts: a page that asks the API what it may show takes a 401 or 404 in its stride). */
  const unexpectedProblems = async (watched: WatchedPage) => (await watched.problems()).filter((problem) => !/status of 40[14]\b.*\/api\/v1\//.test(problem));

  async function account(email: string) {
    return (await t.server.ctx.store.users.create({ email, name: 'Ada', passwordHash: await hashPassword(PASSWORD), emailVerified: false, isAdmin: false }, Date.now()))!;
  }
  async function signIn(page: Page, email: string, password: string) {
    await page.goto(at('/signin'));
    await ready(page);
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill(email);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(at('/'));
  }

  it(
    'Forgot your password: the mailed link sets a new one, ends every session, and the new one signs in',
    async () => {
      const email = `forgot-${backend}@example.com`;
      await account(email);
      // Signed in elsewhere: that session ends with the reset.
      const elsewhere = await watchedPage(chromium.browser);
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        await signIn(elsewhere.page, email, PASSWORD);

        await page.goto(at('/signin'));
        await ready(page);
        await page.getByRole('link', { name: 'Forgot your password?', exact: true }).click();
        await page.waitForURL(at('/reset-password'));
        await ready(page);
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill(email);
        await page.getByRole('button', { name: 'Send reset link', exact: true }).click();
        await page.getByRole('heading', { name: 'Check your email', exact: true }).waitFor();

        const mail = await sink.nextTo(email);
        expect(mail.subject).toBe('Reset your Audio Share password');
        const link = linkTo(mail, '/reset-password');
        expect(link.origin).toBe(new URL(t.server.address).origin);
        await page.goto(link.toString());
        await ready(page);
        await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
        await page.getByRole('button', { name: 'Set password', exact: true }).click();
        await page.getByRole('heading', { name: 'Your password is set', exact: true }).waitFor();

        // The other browser's session has ended: its settings send it to sign in.
        await elsewhere.page.goto(at('/settings'));
        await elsewhere.page.waitForURL(at('/signin'));

        await signIn(page, email, NEW_PASSWORD);
        // The studio draws its bar once GET /me has answered.
        await page.locator('#studio[data-state="ready"]').waitFor();
        expect(await page.getByRole('button', { name: 'Sign out', exact: true }).count()).toBe(1);
        expect(await unexpectedProblems(watched)).toEqual([]);
      } finally {
        await watched.close();
        await elsewhere.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'Send a verification link, in the settings: the mailed link verifies the address',
    async () => {
      const email = `verify-${backend}@example.com`;
      const user = await account(email);
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        await signIn(page, email, PASSWORD);
        await page.goto(at('/settings'));
        // The settings are the studio's (its frame's ready marker); the address is on the first tab, Profile.
        await page.locator('#studio[data-state="ready"]').waitFor();
        await page.getByRole('button', { name: 'Send a verification link', exact: true }).click();
        await expect.poll(() => page.locator('#email-verify-done').textContent()).toContain('on its way');

        const mail = await sink.nextTo(email);
        expect(mail.subject).toBe('Confirm your email address for Audio Share');
        await page.goto(linkTo(mail, '/verify-email').toString());
        await expect.poll(() => page.locator('#verify-status').textContent()).toBe('Your email address is verified.');
        expect((await t.server.ctx.store.users.get(user.id))?.emailVerified).toBe(true);
        expect(await unexpectedProblems(watched)).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
