/**
 * The studio's Developer apps and Connected apps tabs in headless Chromium
 * against a real server, on SQLite and PostgreSQL: an app registered
 * through the tab is what GET /apps answers; a confidential app's secret is
 * shown once (and works at the token endpoint); a partner app on
 * openid-client gets a real grant through the consent page's Allow button,
 * which the Connected apps tab then lists with its scopes in words and its
 * last use; Revoke there and the app's access token is refused by the API
 * at once; Delete (after a confirmation) removes the app. Screenshots at
 * 1280 and 360 px in /tmp/shots-studio/, axe-core clean, no CSP violation,
 * no console error, nothing from another origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';

const BROWSER_TEST_MS = 120_000;

describe.each(backends)('the studio’s Developer apps and Connected apps (%s)', (backend) => {
  const t = useTestServer(backend);
  const chromium = useBrowser();
  const shots = backend === 'sqlite';
  // The partner app's redirect URI: a loopback server that answers whatever it is sent.
  let callback: Server;
  let redirectUri: string;
  beforeAll(async () => {
    callback = createServer((_request, response) => response.end('The app got its answer.'));
    await new Promise<void>((listening) => callback.listen(0, '127.0.0.1', listening));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  });
  afterAll(async () => {
    await new Promise((closed) => callback?.close(closed));
  });

  it(
    'registers apps through the tab (a confidential one’s secret shown once), connects one through the consent page, revokes it, and deletes it',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, `apps-${backend}@example.com`);
      const { page } = studio;
      const api = studio.signedIn.api;
      const tab = (name: string) => page.getByRole('tab', { name, exact: true });
      try {
        await studio.open('/settings?tab=developer-apps');
        expect(await tab('Developer apps').getAttribute('aria-selected')).toBe('true');
        const apps = page.getByRole('list', { name: 'Developer apps' });
        await apps.getByText('No app yet.').waitFor();
        if (shots) await checkLayout(page, 'settings-developer-apps-empty');

        // No redirect URI: said, nothing registered.
        await page.getByRole('textbox', { name: 'App name', exact: true }).fill('Release Desk');
        await page.getByRole('button', { name: 'Register app', exact: true }).click();
        await page.getByText('Type at least one redirect URI').waitFor();
        expect((await api.GET('/apps')).data).toEqual([]);

        // A confidential app, two redirect URIs one per line (a blank line and spaces left out).
        await page.getByRole('textbox', { name: 'Redirect URIs', exact: true }).fill(`  ${redirectUri}\n\nhttps://desk.example.com/oauth/callback \n`);
        await page.getByRole('radio', { name: 'Confidential', exact: true }).check();
        await page.getByRole('button', { name: 'Register app', exact: true }).click();
        const secretField = page.getByRole('textbox', { name: 'App secret', exact: true });
        await expect.poll(() => secretField.inputValue()).toMatch(/^[A-Za-z0-9_-]{43}$/);
        const secret = await secretField.inputValue();
        expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('The secret of Release Desk');
        await page.getByText('it is shown this once, and never again').waitFor();
        const [app] = (await api.GET('/apps')).data!;
        expect(app).toEqual({
          id: expect.stringMatching(/^app_/),
          object: 'app',
          name: 'Release Desk',
          type: 'confidential',
          redirectUris: [redirectUri, 'https://desk.example.com/oauth/callback'],
          timeCreated: expect.any(Number),
        });
        const row = apps.getByRole('listitem').filter({ hasText: 'Release Desk' }).first();
        await row.getByText(app.id).waitFor();
        expect(await row.textContent()).toContain('Confidential (with a secret)');
        expect(await page.getByRole('list', { name: 'Redirect URIs of Release Desk' }).getByRole('listitem').allTextContents()).toEqual([redirectUri, 'https://desk.example.com/oauth/callback']);
        if (shots) await checkLayout(page, 'settings-developer-apps-secret');

        // Once: back on the tab, the secret is nowhere on the page.
        await studio.open('/settings?tab=developer-apps');
        await apps.getByText(app.id).waitFor();
        expect(await page.getByRole('textbox', { name: 'App secret' }).count()).toBe(0);
        expect(await page.content()).not.toContain(secret);

        // A public app: no secret, its client id said.
        await page.getByRole('textbox', { name: 'App name', exact: true }).fill('Mix Notes');
        await page.getByRole('textbox', { name: 'Redirect URIs', exact: true }).fill('http://127.0.0.1/callback');
        await page.getByRole('button', { name: 'Register app', exact: true }).click();
        await page.getByRole('heading', { name: 'Mix Notes is registered' }).waitFor();
        expect(await page.getByRole('textbox', { name: 'App secret' }).count()).toBe(0);
        expect((await api.GET('/apps')).data?.map((one) => [one.name, one.type])).toEqual([
          ['Mix Notes', 'public'],
          ['Release Desk', 'confidential'],
        ]);

        // A real grant: the partner's server (openid-client, with the secret) sends the person to the consent page, in this browser.
        await page.getByRole('tab', { name: 'Connected apps', exact: true }).click();
        const connected = page.getByRole('list', { name: 'Connected apps' });
        await connected.getByText('No app is connected.').waitFor();
        const config = await client.discovery(new URL(t.server.address), app.id, undefined, client.ClientSecretBasic(secret), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
        const verifier = client.randomPKCECodeVerifier();
        const state = client.randomState();
        const authorize = client.buildAuthorizationUrl(config, {
          redirect_uri: redirectUri,
          scope: 'projects:read comments:read',
          code_challenge: await client.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
        });
        const consent = await studio.context.newPage();
        await consent.goto(authorize.href);
        await consent.getByRole('heading', { name: 'Allow Release Desk to:' }).waitFor();
        const landed = consent.waitForRequest((request) => request.url().startsWith(redirectUri));
        await consent.getByRole('button', { name: 'Allow', exact: true }).click();
        const back = new URL((await landed).url());
        await consent.close();
        const tokens = await client.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: state });
        const bearer = { Authorization: `Bearer ${tokens.access_token}` };
        expect((await fetch(`${t.server.apiUrl}/projects`, { headers: bearer })).status).toBe(200);

        // Listed, with what it may do in words and its last use.
        await page.reload();
        await page.locator('#studio[data-state="ready"]').waitFor();
        const item = connected.getByRole('listitem').filter({ hasText: 'Release Desk' }).first();
        await item.waitFor();
        expect(await page.getByRole('list', { name: 'What Release Desk may do' }).getByRole('listitem').allTextContents()).toEqual(['Read projects and files', 'Read comments']);
        expect(await item.textContent()).toMatch(/last used /);
        if (shots) await checkLayout(page, 'settings-connected-apps');

        // Revoked: gone from the list, and its access token refused at once (and its refresh token with it).
        await item.getByRole('button', { name: 'Revoke', exact: true }).click();
        await connected.getByText('No app is connected.').waitFor();
        expect((await api.GET('/me/connected-apps')).data).toEqual([]);
        const refused = await fetch(`${t.server.apiUrl}/projects`, { headers: bearer });
        expect(refused.status).toBe(401);
        expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
        if (shots) await checkLayout(page, 'settings-connected-apps-empty');

        // Deleted, after a confirmation: Cancel keeps it, Delete removes it.
        await tab('Developer apps').click();
        const desk = apps.getByRole('listitem').filter({ hasText: 'Release Desk' }).first();
        await desk.getByRole('button', { name: 'Delete', exact: true }).click();
        const dialog = page.getByRole('dialog', { name: 'Delete app' });
        await dialog.getByText('Everyone who let it in loses it at once').waitFor();
        if (shots) await checkLayout(page, 'settings-developer-apps-delete');
        await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
        await dialog.waitFor({ state: 'hidden' });
        expect((await api.GET('/apps')).data).toHaveLength(2);
        await desk.getByRole('button', { name: 'Delete', exact: true }).click();
        await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
        await dialog.waitFor({ state: 'hidden' });
        await desk.waitFor({ state: 'detached' });
        expect((await api.GET('/apps')).data?.map((one) => one.name)).toEqual(['Mix Notes']);

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
