/**
 * The consent page when an app asks for the `admin` scope (issue 28: "The
 * consent page says each scope in words, and warns in words for `admin`"),
 * in headless Chromium against a real server whose operator allows it
 * (OAUTH_ALLOW_ADMIN_SCOPE=true): the scope in words, and a warning that
 * says what the app could do, which assistive technology reads as a note.
 * Screenshots at 1280 and 360 px in /tmp/shots-studio/, axe-core clean,
 * nothing from another origin.
 */
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';

describe('the consent page of an app asking for admin (sqlite)', () => {
  const t = useTestServer('sqlite', { OAUTH_ALLOW_ADMIN_SCOPE: 'true' });
  const chromium = useBrowser();

  it('says each scope in words and warns of admin in words', async () => {
    const studio = await studioPage(chromium.browser, t.server, 'consent-admin@example.com');
    try {
      await t.server.ctx.store.db.execute('UPDATE users SET is_admin = 1 WHERE email = $1', ['consent-admin@example.com']);
      const redirectUri = 'http://127.0.0.1/callback';
      const { data: app } = await studio.signedIn.api.POST('/apps', { body: { name: 'Ops Console', type: 'public', redirectUris: [redirectUri] } });
      const config = await client.discovery(new URL(t.server.address), app!.id, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
      const authorize = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'projects:read admin',
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: client.randomState(),
      });
      const { page } = studio;
      await page.goto(authorize.href);
      await page.getByRole('heading', { name: 'Allow Ops Console to:' }).waitFor();
      const scopes = page.locator('ul.scopes > li');
      expect(await scopes.count()).toBe(2);
      await scopes.filter({ hasText: 'projects:read' }).getByText('Read projects, their files, folders and stacks, and download them.').waitFor();
      const admin = scopes.filter({ hasText: 'admin' });
      await admin.getByText('Administer this server', { exact: false }).first().waitFor();
      const warning = admin.getByRole('note');
      expect(await warning.textContent()).toBe(
        "Warning: This lets the app act as an administrator of this server: change anyone's account, make administrators, and invite people. Allow it only for a tool you run yourself.",
      );
      // The plain scope carries no warning.
      expect(await scopes.filter({ hasText: 'projects:read' }).getByRole('note').count()).toBe(0);
      await checkLayout(page, 'consent-admin-warning');
      expect(studio.foreign).toEqual([]);
    } finally {
      await studio.context.close();
    }
  }, 120_000);
});
