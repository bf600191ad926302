/**
 * The account pages (issue 20's front door) in headless Chromium against a
 * real server: each page as someone signed out sees it, at 1280 and 360 px,
 * with no horizontal scroll, nothing serious for axe-core, no CSP
 * violation, no console error and no request to any other origin
 * (screenshots in /tmp/shots-pages/). A signed-out visit to / or /settings
 * goes to /signin. Every wait ends on a condition with a deadline.
 */
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
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
    await page.screenshot({ path: `${SHOTS}/${name}-${width}.png`, fullPage: true });
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
        expect(await page.evaluate(() => document.activeElement?.id)).toBe('email');
        await page.setViewportSize({ width: 360, height: 800 });
        await page.screenshot({ path: `${SHOTS}/signin-invalid-360.png`, fullPage: true });
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it('answers each page with the strict CSP, and carries an invitation into the page only URL-encoded', async () => {
    for (const path of ['/signin', '/signup', '/setup', '/reset-password', '/verify-email', '/settings', '/']) {
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
    'sends a signed-out visit to / or /settings to /signin',
    async () => {
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
