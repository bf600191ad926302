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
 * not 127.0.0.1: an IP address is no valid relying party id.
 */
import { build } from 'esbuild';
import { resolve } from 'node:path';
import type { CDPSession, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { freePort } from '../server/testing/ports.ts';

const BROWSER_TEST_MS = 90_000;
const root = resolve(import.meta.dirname, '..');

/** The page's script: the two functions, and a client, on window for page.evaluate. */
async function bundle(): Promise<string> {
  const result = await build({
    stdin: {
      contents: `
        import { createApiClient } from './generated/client.ts';
        import { addPasskey, signInWithPasskey, PasskeyError } from './web/account/passkeys.ts';
        const client = (token) => createApiClient({ baseUrl: location.origin + '/api/v1', token });
        const failure = (error) => error instanceof PasskeyError ? { message: error.message, status: error.status, cancelled: error.cancelled } : { message: String(error) };
        window.passkeys = {
          add: (token, name) => addPasskey(client(token), name).then(() => 'added', failure),
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

  /** A page at the server's origin with the functions loaded, and a virtual authenticator of its own. */
  async function openPage(): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
    const page = await chromium.browser.newPage();
    const origin = `http://localhost:${port}`;
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
    return { page, cdp, authenticatorId };
  }

  type PageApi = { add(token: string, name: string): Promise<unknown>; signIn(): Promise<unknown> };
  const add = (page: Page, token: string, name: string) => page.evaluate(([token, name]) => (window as unknown as { passkeys: PageApi }).passkeys.add(token, name), [token, name] as const);
  const signIn = (page: Page) => page.evaluate(() => (window as unknown as { passkeys: PageApi }).passkeys.signIn());

  it('adds a passkey, then signs in with it, asked for no email address', async () => {
    const { token } = await t.as('browser-passkey@example.com');
    const { page, cdp, authenticatorId } = await openPage();
    try {
      expect(await add(page, token, 'Chromium')).toBe('added');
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      // A discoverable credential, for PUBLIC_URL's host name.
      expect(credentials).toEqual([expect.objectContaining({ isResidentCredential: true, rpId: 'localhost' })]);
      const listed = await (await t.fetch('/me/passkeys', { token })).json();
      expect(listed).toEqual([expect.objectContaining({ name: 'Chromium', timeLastUsed: null })]);

      const signInCalls: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/api/v1/auth/passkeys/')) signInCalls.push(request.postData() ?? '');
      });
      expect(await signIn(page)).toBe('signed in');
      expect(signInCalls.join(' ')).not.toContain('browser-passkey@example.com');
      const [used] = await (await t.fetch('/me/passkeys', { token })).json();
      expect(used.timeLastUsed).toEqual(expect.any(Number));
    } finally {
      await page.close();
    }
  });

  it('a passkey removed from the account signs nobody in', async () => {
    const { token } = await t.as('browser-removed@example.com');
    const { page } = await openPage();
    try {
      expect(await add(page, token, 'To remove')).toBe('added');
      const [passkey] = await (await t.fetch('/me/passkeys', { token })).json();
      expect((await t.fetch(`/me/passkeys/${passkey.id}`, { method: 'DELETE', token })).status).toBe(200);
      // The authenticator still holds it and offers it; the server no longer knows it.
      expect(await signIn(page)).toEqual({ message: expect.stringMatching(/did not sign you in/), status: 401, cancelled: false });
    } finally {
      await page.close();
    }
  });

  it('a second passkey on the same authenticator is refused by the browser, as the server asked', async () => {
    const { token } = await t.as('browser-twice@example.com');
    const { page } = await openPage();
    try {
      expect(await add(page, token, 'First')).toBe('added');
      expect(await add(page, token, 'Second')).toEqual({ message: expect.stringMatching(/already/), status: undefined, cancelled: false });
      expect(await (await t.fetch('/me/passkeys', { token })).json()).toHaveLength(1);
    } finally {
      await page.close();
    }
  });
});
