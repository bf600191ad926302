/**
 * Passkeys in Chromium, with its virtual authenticator over the DevTools
 * protocol (WebAuthn.addVirtualAuthenticator: CTAP2, internal, resident
 * keys, user verification), on each store: web/account/passkeys.ts adds a
 * passkey, then signs in with it, asked for no email address, and a removed
 * passkey signs nobody in.
 *
 * The functions run in a small page of the test's own at the server's
 * origin (page.route answers its URL; the API calls go to the real server):
 * WebAuthn needs the relying party's origin, and a secure context, which
 * http://localhost is. The server's PUBLIC_URL is http://localhost:<port>,
 * not 127.0.0.1: an IP address is no valid relying party id. Then the same
 * through the server's own pages, as a person does it: /settings, tab
 * Security, "Add a passkey"; "Sign out"; /signin, "Sign in with a passkey".
 */
import { build } from 'esbuild';
import { resolve } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { freePort } from '../server/testing/ports.ts';
import { watchedPage } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;
const root = resolve(import.meta.dirname, '..');

/** The page's script: the two functions, and a client, on window for page.evaluate. */
async function bundle(): Promise<string> {
  const result = await build({
    stdin: {
      contents: `
        import { createApiClient } from './generated/client.ts';
        import { addPasskey, signInWithPasskey, PasskeyError } from './web/account/passkeys.ts';
        // No token: the session travels as its HttpOnly cookie, as on the server's own pages.
        const client = () => createApiClient({ baseUrl: location.origin + '/api/v1' });
        const failure = (error) => error instanceof PasskeyError ? { message: error.message, status: error.status, cancelled: error.cancelled } : { message: String(error) };
        window.passkeys = {
          add: (name) => addPasskey(client(), name).then(() => 'added', failure),
          me: () => fetch('/api/v1/me').then((response) => response.json()),
          sessions: () => fetch('/api/v1/me/sessions').then((response) => response.json()),
          signIn: () => signInWithPasskey(client()).then(() => 'signed in', failure),
        };
      `,
      resolveDir: root,
      sourcefile: 'passkeys-test-page.ts',
      loader: 'ts',
    },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: ['chrome100'],
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

describe.each(backends)('passkeys in Chromium on %s', { timeout: BROWSER_TEST_MS }, (backend) => {
  let port = 0;
  const env: Record<string, string> = {};
  let script = '';
  // Before the server starts (hooks run in order): its port, known in advance so that PUBLIC_URL can name localhost.
  beforeAll(async () => {
    port = await freePort();
    Object.assign(env, { PORT: String(port), PUBLIC_URL: `http://localhost:${port}` });
    script = await bundle();
  });
  const t = useTestServer(backend, env);
  const chromium = useBrowser();

  /**
   * A signed-in page at the server's origin with the functions loaded, and a
   * virtual authenticator of its own. The session is made through the store
   * (password sign-in has its own tests) and given to the browser as its cookie.
   */
  async function openPage(email: string): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string; session: string }> {
    const origin = `http://localhost:${port}`;
    const user = await t.server.ctx.store.users.findOrCreate(email, Date.now());
    const { secret } = await t.server.ctx.store.sessions.create(user.id, 'password', { userAgent: null, address: null }, Date.now());
    const context = await chromium.browser.newContext();
    await context.addCookies([{ name: 'as_session', value: secret, url: origin, httpOnly: true, sameSite: 'Lax' }]);
    const page = await context.newPage();
    await page.route(`${origin}/passkeys-test`, (route) =>
      route.fulfill({ contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>Passkeys</title><script type="module" src="/passkeys-test.js"></script>' }),
    );
    await page.route(`${origin}/passkeys-test.js`, (route) => route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: script }));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(`${origin}/passkeys-test`);
    await page.waitForFunction(() => 'passkeys' in window);
    expect(await page.evaluate(() => window.isSecureContext)).toBe(true);
    return { page, cdp, authenticatorId, session: `as_session=${secret}` };
  }

  /** What the test page puts on window (its script above). */
  type PageApi = { add(name: string): Promise<unknown>; signIn(): Promise<unknown>; me(): Promise<{ email?: string }>; sessions(): Promise<Array<{ current: boolean; method: string }>> };
  type PageWindow = { passkeys: PageApi };
  const add = (page: Page, name: string) => page.evaluate((name) => (window as unknown as PageWindow).passkeys.add(name), name);
  const signIn = (page: Page) => page.evaluate(() => (window as unknown as PageWindow).passkeys.signIn());
  const me = (page: Page) => page.evaluate(() => (window as unknown as PageWindow).passkeys.me());
  const sessions = (page: Page) => page.evaluate(() => (window as unknown as PageWindow).passkeys.sessions());
  /** The session's cookie, as the browser holds it. */
  const sessionCookieOf = async (page: Page) => (await page.context().cookies()).find((cookie) => cookie.name === 'as_session')?.value;
  /** The API's answers to the session's owner, with the page's first session (sent by the test, as from the server's own page). */
  const withSession = (session: string, path: string, method = 'GET') =>
    t.fetch(path, { method, headers: { Cookie: session, Origin: `http://localhost:${port}`, 'Sec-Fetch-Site': 'same-origin' } });

  it('adds a passkey, then, signed out, signs in with it, asked for no email address', async () => {
    const email = 'browser-passkey@example.com';
    const { page, cdp, authenticatorId, session } = await openPage(email);
    try {
      expect(await add(page, 'Chromium')).toBe('added');
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      // A discoverable credential, for PUBLIC_URL's host name.
      expect(credentials).toEqual([expect.objectContaining({ isResidentCredential: true, rpId: 'localhost' })]);
      const listed = await (await withSession(session, '/me/passkeys')).json();
      expect(listed).toEqual([expect.objectContaining({ name: 'Chromium', timeLastUsed: null })]);

      // Signed out: the browser holds no session any more.
      await page.context().clearCookies();
      expect(await me(page)).toMatchObject({ type: '/problems/unauthorized' });
      const signInBodies: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/v1/auth/passkeys/')) signInBodies.push(request.postData() ?? '');
      });
      expect(await signIn(page)).toBe('signed in');
      expect(signInBodies).toHaveLength(2);
      expect(signInBodies.join(' ')).not.toContain(email);
      // The server set a new session cookie, and the page is signed in with it, by passkey.
      expect(await sessionCookieOf(page)).toBeDefined();
      expect(await me(page)).toMatchObject({ email });
      expect((await sessions(page)).find((listed) => listed.current)).toMatchObject({ method: 'passkey' });
      const [used] = await (await withSession(session, '/me/passkeys')).json();
      expect(used.timeLastUsed).toEqual(expect.any(Number));
    } finally {
      await page.context().close();
    }
  });

  it('a passkey removed from the account signs nobody in', async () => {
    const { page, session } = await openPage('browser-removed@example.com');
    try {
      expect(await add(page, 'To remove')).toBe('added');
      const [passkey] = await (await withSession(session, '/me/passkeys')).json();
      expect((await withSession(session, `/me/passkeys/${passkey.id}`, 'DELETE')).status).toBe(200);
      await page.context().clearCookies();
      // The authenticator still holds it and offers it; the server no longer knows it.
      expect(await signIn(page)).toEqual({ message: expect.stringMatching(/did not sign you in/), status: 401, cancelled: false });
      expect(await sessionCookieOf(page)).toBeUndefined();
    } finally {
      await page.context().close();
    }
  });

  it('a second passkey on the same authenticator is refused by the browser, as the server asked', async () => {
    const { page, session } = await openPage('browser-twice@example.com');
    try {
      expect(await add(page, 'First')).toBe('added');
      expect(await add(page, 'Second')).toEqual({ message: expect.stringMatching(/already/), status: undefined, cancelled: false });
      expect(await (await withSession(session, '/me/passkeys')).json()).toHaveLength(1);
    } finally {
      await page.context().close();
    }
  });

  it('through the pages: Add a passkey in /settings, Sign out, then Sign in with a passkey at /signin lands on / signed in', async () => {
    const origin = `http://localhost:${port}`;
    const email = 'browser-pages@example.com';
    const user = await t.server.ctx.store.users.findOrCreate(email, Date.now());
    const { secret } = await t.server.ctx.store.sessions.create(user.id, 'password', { userAgent: null, address: null }, Date.now());
    const watched = await watchedPage(chromium.browser);
    const { page, context } = watched;
    try {
      await context.addCookies([{ name: 'as_session', value: secret, url: origin, httpOnly: true, sameSite: 'Lax' }]);
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
      });
      await page.goto(`${origin}/settings`);
      // The settings are the studio's: its frame's ready marker, then the tab.
      await page.locator('#studio[data-state="ready"]').waitFor();
      await page.getByRole('tab', { name: 'Security', exact: true }).click();
      expect(await page.getByRole('tab', { name: 'Security', exact: true }).getAttribute('aria-selected')).toBe('true');
      await page.getByLabel('Passkey name', { exact: true }).fill('This laptop');
      await page.getByRole('button', { name: 'Add a passkey', exact: true }).click();
      await page.locator('#passkey-list').getByText('This laptop').waitFor();
      expect(await page.locator('#passkey-form-error').textContent()).toBe('');
      expect(await (await withSession(`as_session=${secret}`, '/me/passkeys')).json()).toEqual([expect.objectContaining({ name: 'This laptop' })]);

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(`${origin}/signin`);
      await page.locator('main#account[data-state="ready"]').waitFor();
      await page.getByRole('button', { name: 'Sign in with a passkey', exact: true }).click();
      await page.waitForURL(`${origin}/`);
      // The page's own session now, as its code would ask.
      const [meNow, sessionsNow] = await page.evaluate(() => Promise.all(['/api/v1/me', '/api/v1/me/sessions'].map((path) => fetch(path).then((response) => response.json()))));
      expect(meNow).toMatchObject({ email });
      expect((sessionsNow as Array<{ current: boolean; method: string }>).find((listed) => listed.current)).toMatchObject({ method: 'passkey' });
      // Signed-out pages ask GET /me, knowing it answers 401: that refusal is the one failed load allowed.
      expect((await watched.problems()).filter((line) => !/status of 401\b/.test(line))).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
