/**
 * `account:write` is not server administration (issue 28, "One door"): the
 * finding was that an app consented as "Change the account, its preferences
 * and payment provider" could make administrators, invite one (the sign-up
 * link came back to the app), and register, delete or revoke apps.
 *
 * On both stores, with a real app let in through the consent page by the
 * server's administrator:
 * - an app granted every scope it may have (account:write among them) gets
 *   403 on every /admin/* operation, and on registering, deleting and
 *   revoking apps; and changes nothing;
 * - with OAUTH_ALLOW_ADMIN_SCOPE unset, an authorization asking for `admin`
 *   is refused with invalid_scope before the consent page, so it cannot be
 *   consented;
 * - with OAUTH_ALLOW_ADMIN_SCOPE=true, the consent page warns in words, and
 *   the app granted `admin` may administer (with the administrator's rights).
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../generated/operations.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { signIn } from '../../testing/sessions.ts';
import { connectApp, consentPageOf, startCallback } from '../../testing/oauth-partner.ts';
import { appScopes } from './oauth-scopes.ts';

const ADMIN = 'admin-scope-owner@example.com';

/** The operations of the server's administration and of app management: what no app may call without `admin`. */
const ADMINISTRATION = OPERATIONS.filter((operation) => operation.path.startsWith('/admin/') || ['createApp', 'deleteApp', 'revokeConnectedApp'].includes(operation.id));

describe.each(backends)('an app and the server\'s administration, on %s', (backend) => {
  let callback: Awaited<ReturnType<typeof startCallback>>;
  beforeAll(async () => {
    callback = await startCallback();
  });
  afterAll(() => callback?.stop());

  describe('with OAUTH_ALLOW_ADMIN_SCOPE unset', () => {
    const t = useTestServer(backend);

    async function administrator() {
      const session = await signIn(t.server, ADMIN);
      await t.server.ctx.store.db.execute('UPDATE users SET is_admin = 1 WHERE email = $1', [ADMIN]);
      return session;
    }

    it('gives an app with account:write (every scope it may have) 403 on every /admin/* operation and on app management, changing nothing', async () => {
      const session = await administrator();
      const app = await connectApp(t.server, session, { name: 'Helpful Assistant', scope: appScopes(false).join(' '), redirectUri: callback.redirectUri });
      const usersBefore = await t.server.ctx.store.db.query('SELECT id, is_admin FROM users ORDER BY id');
      const linksBefore = await t.server.ctx.store.db.query('SELECT COUNT(*) AS n FROM one_time_links');
      const appsBefore = await t.server.ctx.store.db.query('SELECT COUNT(*) AS n FROM oauth_apps');
      expect(ADMINISTRATION.map((operation) => operation.id).sort()).toEqual(['createApp', 'createInvitation', 'deleteApp', 'listUsers', 'revokeConnectedApp', 'updateUser']);
      const bodies: Record<string, unknown> = {
        updateUser: { admin: true },
        createInvitation: { email: 'accomplice@example.com', admin: true },
        createApp: { name: 'Second app', type: 'public', redirectUris: ['http://127.0.0.1/callback'] },
      };
      const ids: Record<string, string> = { userid: (usersBefore[0] as { id: string }).id, appid: app.appId };
      for (const operation of ADMINISTRATION) {
        const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name]);
        const body = bodies[operation.id];
        const response = await t.fetch(path, { method: operation.method, token: app.accessToken, ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
        const problem = (await response.json()) as { type: string; detail: string };
        expect(response.status, `${operation.id}: ${JSON.stringify(problem)}`).toBe(403);
        // The administration lacks its scope; app management needs the signed-in session.
        expect(problem.type, operation.id).toBe(operation.path.startsWith('/admin/') ? '/problems/insufficient-scope' : '/problems/forbidden');
      }
      expect(await t.server.ctx.store.db.query('SELECT id, is_admin FROM users ORDER BY id')).toEqual(usersBefore);
      expect(await t.server.ctx.store.db.query('SELECT COUNT(*) AS n FROM one_time_links')).toEqual(linksBefore);
      expect(await t.server.ctx.store.db.query('SELECT COUNT(*) AS n FROM oauth_apps')).toEqual(appsBefore);
      // The app still works for what it was granted: its own account.
      expect((await t.fetch('/me', { token: app.accessToken })).status).toBe(200);
    });

    it('refuses an authorization asking for admin with invalid_scope, back to the app, before the consent page', async () => {
      const session = await administrator();
      const created = await session.fetch('/apps', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Would-be admin', type: 'public', redirectUris: [callback.redirectUri] }) });
      expect(created.status).toBe(200);
      const { id } = (await created.json()) as { id: string };
      const config = await client.discovery(new URL(t.server.address), id, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
      expect(config.serverMetadata().scopes_supported).not.toContain('admin');
      const state = client.randomState();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: callback.redirectUri,
        scope: 'projects:read admin',
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state,
      });
      const answer = await fetch(url, { headers: { cookie: session.cookie }, redirect: 'manual' });
      expect(answer.status).toBe(303);
      const back = new URL(answer.headers.get('location')!);
      // RFC 6749 §4.1.2.1: invalid_scope, "The requested scope is invalid, unknown, or malformed", with the request's state.
      expect(back.origin + back.pathname).toBe(callback.redirectUri);
      expect(back.searchParams.get('error')).toBe('invalid_scope');
      expect(back.searchParams.get('state')).toBe(state);
      expect(back.searchParams.get('error_description')).toContain('OAUTH_ALLOW_ADMIN_SCOPE');
    });
  });

  describe('with OAUTH_ALLOW_ADMIN_SCOPE=true', () => {
    const t = useTestServer(backend, { OAUTH_ALLOW_ADMIN_SCOPE: 'true' });

    it('warns of admin on the consent page in words, and lets the app granted it administer', async () => {
      const session = await signIn(t.server, ADMIN);
      await t.server.ctx.store.db.execute('UPDATE users SET is_admin = 1 WHERE email = $1', [ADMIN]);
      const created = await session.fetch('/apps', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Ops console', type: 'public', redirectUris: [callback.redirectUri] }) });
      const { id } = (await created.json()) as { id: string };
      const config = await client.discovery(new URL(t.server.address), id, undefined, client.None(), { execute: [client.allowInsecureRequests], algorithm: 'oauth2' });
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: callback.redirectUri,
        scope: 'admin',
        code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
        state: client.randomState(),
      });
      const page = await consentPageOf(url, session.cookie);
      expect(page).toContain('Allow Ops console to:');
      expect(page).toContain('role="note"><strong>Warning:</strong> This lets the app act as an administrator of this server');

      const app = await connectApp(t.server, session, { name: 'Ops console 2', scope: 'admin account:read', redirectUri: callback.redirectUri });
      const listed = await t.fetch('/admin/users', { token: app.accessToken });
      expect(listed.status, await listed.clone().text()).toBe(200);
      expect(((await listed.json()) as Array<{ email: string }>).map((user) => user.email)).toContain(ADMIN);
    });
  });
});
