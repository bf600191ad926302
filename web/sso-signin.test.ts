/**
 * Single sign-on in headless Chromium, the whole round trip: from /signin's
 * button "Sign in with <OIDC_NAME>" to a real OpenID provider on loopback,
 * through its own login and consent pages, and back to /auth/oidc/callback,
 * which lands on / signed in; a person an app's consent page sent to
 * /signin comes back to that consent page (its `next`) the same way; and a
 * person who cancels at the provider is back on /signin, which says so.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import { backends } from '../server/testing/databases.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { useServerWithOidc } from '../server/testing/oidc-provider.ts';
import { seriousAxeViolations, watchedPage } from './testing/player-browser.ts';
import { signIn } from '../server/testing/sessions.ts';

const BROWSER_TEST_MS = 90_000;

const onlyLoopback = (context: BrowserContext) =>
  context.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => route.abort(),
  );

describe.each(backends)('single sign-on in Chromium on %s', (backend) => {
  const t = useServerWithOidc(backend, { REGISTRATION: 'open' });
  const chromium = useBrowser();

  /** A browser of its own, that reaches nothing but loopback (the provider's development pages link to a web font). */
  async function browser(): Promise<BrowserContext> {
    const context = await chromium.browser.newContext();
    await onlyLoopback(context);
    return context;
  }

  it(
    'goes to the provider, signs in on its pages, and comes back signed in to a new account',
    async () => {
      t.provider.addPerson('chromium-ada', { email: `ada-${backend}@example.org`, emailVerified: true, name: 'Ada Lovelace' });
      const context = await browser();
      try {
        const page = await context.newPage();
        await page.goto(`${t.server.address}/signin`);
        await page.getByRole('button', { name: 'Sign in with Test SSO', exact: true }).click();
        // The provider's login page.
        await page.getByPlaceholder('Enter any login').waitFor();
        expect(new URL(page.url()).origin).toBe(t.provider.issuer);
        await page.getByPlaceholder('Enter any login').fill('chromium-ada');
        await page.getByPlaceholder('and password').fill('any password');
        await page.getByRole('button', { name: 'Sign-in' }).click();
        // Its consent page, then back to the server.
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.waitForURL(`${t.server.address}/`);
        // The studio, signed in: its bar names the account.
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Ada Lovelace');

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
    'comes back to the app’s consent page it was sent from, signed in, and the app gets its code',
    async () => {
      t.provider.addPerson('chromium-grace', { email: `grace-${backend}@example.org`, emailVerified: true, name: 'Grace Hopper' });
      // A partner's public app, registered by its developer, signed in (apps are managed by a signed-in session).
      const developer = await signIn(t.server, `developer-${backend}@example.org`);
      const registered = await developer.fetch('/apps', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Mix Notes', type: 'public', redirectUris: ['http://127.0.0.1/callback'] }),
      });
      expect(registered.status).toBe(200);
      const app = (await registered.json()) as { id: string };
      // RFC 7636 §4.2: code_challenge = BASE64URL(SHA256(code_verifier)).
      const verifier = randomBytes(32).toString('base64url');
      const authorize = new URL('/oauth/authorize', t.server.address);
      authorize.search = new URLSearchParams({
        client_id: app.id,
        redirect_uri: 'http://127.0.0.1:9/callback',
        response_type: 'code',
        scope: 'projects:read',
        state: 'from-sso',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
      }).toString();
      const context = await browser();
      try {
        const page = await context.newPage();
        await page.goto(authorize.href);
        // Not signed in: the sign-in page, carrying the consent page as `next`; single sign-on instead of a password.
        await page.waitForURL((url) => url.pathname === '/signin');
        const next = new URL(page.url()).searchParams.get('next');
        expect(next).toMatch(/^\/oauth\/interaction\//);
        await page.getByRole('button', { name: 'Sign in with Test SSO', exact: true }).click();
        await page.getByPlaceholder('Enter any login').fill('chromium-grace');
        await page.getByPlaceholder('and password').fill('any password');
        await page.getByRole('button', { name: 'Sign-in' }).click();
        await page.getByRole('button', { name: 'Continue' }).click();
        // Back on the consent page it left, signed in as the provider's person.
        await page.getByRole('heading', { name: 'Allow Mix Notes to:' }).waitFor();
        expect(new URL(page.url()).pathname).toBe(next);
        expect(await page.locator('main').textContent()).toContain(`grace-${backend}@example.org`);
        const landed = page.waitForRequest((request) => request.url().startsWith('http://127.0.0.1:9/callback'));
        await page.getByRole('button', { name: 'Allow', exact: true }).click();
        const back = new URL((await landed).url());
        expect(back.searchParams.get('state')).toBe('from-sso');
        expect(back.searchParams.get('code')).toEqual(expect.any(String));
      } finally {
        await context.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'comes back to /signin saying so when the person cancels at the provider',
    async () => {
      const watched = await watchedPage(chromium.browser);
      await onlyLoopback(watched.context);
      const { page, context } = watched;
      try {
        await page.goto(`${t.server.address}/signin`);
        await page.getByRole('button', { name: 'Sign in with Test SSO', exact: true }).click();
        await page.getByRole('link', { name: '[ Cancel ]' }).click();
        await page.waitForURL(`${t.server.address}/signin?error=sso-cancelled`);
        await expect.poll(() => page.locator('#alternatives-error').textContent()).toBe('Signing in with Test SSO was cancelled.');
        expect(await page.locator('#alternatives-error').getAttribute('role')).toBe('alert');
        expect((await context.cookies(t.server.address)).map((cookie) => cookie.name)).not.toContain('as_session');
        expect(await seriousAxeViolations(page)).toEqual([]);
        // The provider's development pages are not ours: what they logged (their web font, which this browser may not fetch) is left out.
        expect((await watched.problems()).filter((line) => !line.includes(t.provider.issuer) && !line.includes('https://fonts.googleapis.com/'))).toEqual([]);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
