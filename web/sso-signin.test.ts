/**
 * Single sign-on in headless Chromium, the whole round trip: from the
 * server's /auth/oidc/start to a real OpenID provider on loopback, through
 * its own login and consent pages, and back to /auth/oidc/callback, which
 * lands on / signed in; and a person who cancels at the provider lands on
 * /signin?error=sso-cancelled. The /signin page's button "Sign in with
 * <OIDC_NAME>" (the pages' work) navigates to /auth/oidc/start; this test
 * begins at that navigation.
 */
import { describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { backends } from '../server/testing/databases.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { useServerWithOidc } from '../server/testing/oidc-provider.ts';

const BROWSER_TEST_MS = 90_000;

describe.each(backends)('single sign-on in Chromium on %s', (backend) => {
  const t = useServerWithOidc(backend, { REGISTRATION: 'open' });
  const chromium = useBrowser();

  /** A browser of its own, that reaches nothing but loopback (the provider's development pages link to a web font). */
  async function browser(): Promise<BrowserContext> {
    const context = await chromium.browser.newContext();
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => route.abort(),
    );
    return context;
  }

  it(
    'goes to the provider, signs in on its pages, and comes back signed in to a new account',
    async () => {
      t.provider.addPerson('chromium-ada', { email: `ada-${backend}@example.org`, emailVerified: true, name: 'Ada Lovelace' });
      const context = await browser();
      try {
        const page = await context.newPage();
        await page.goto(`${t.server.address}/auth/oidc/start`);
        // The provider's login page.
        expect(new URL(page.url()).origin).toBe(t.provider.issuer);
        await page.getByPlaceholder('Enter any login').fill('chromium-ada');
        await page.getByPlaceholder('and password').fill('any password');
        await page.getByRole('button', { name: 'Sign-in' }).click();
        // Its consent page, then back to the server.
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.waitForURL(`${t.server.address}/`);

        const cookies = await context.cookies(t.server.address);
        expect(cookies.find((cookie) => cookie.name === 'as_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
        // The round trip's own cookie is spent.
        expect(cookies.find((cookie) => cookie.name === 'as_oidc')).toBeUndefined();
        const me = await context.request.get(`${t.server.apiUrl}/me`);
        expect(await me.json()).toMatchObject({ email: `ada-${backend}@example.org`, name: 'Ada Lovelace', emailVerified: true });
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'comes back to /signin saying so when the person cancels at the provider',
    async () => {
      const context = await browser();
      try {
        const page = await context.newPage();
        await page.goto(`${t.server.address}/auth/oidc/start`);
        await page.getByRole('link', { name: '[ Cancel ]' }).click();
        await page.waitForURL(`${t.server.address}/signin?error=sso-cancelled`);
        expect((await context.cookies(t.server.address)).map((cookie) => cookie.name)).not.toContain('as_session');
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
