/**
 * The player pages over HTTP: sign-in sessions (login CSRF, what the cookie
 * holds and who it opens the page to), the pages' security headers, and
 * what the page signs for which file.
 */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../server/testing/harness.ts';
import { backends } from '../server/testing/databases.ts';
import { createApiClient } from '../generated/client.ts';
import { PAGE_CSP } from './page-security.ts';
import { SESSION_COOKIE, SESSION_TTL_MS } from '../server/auth/player-session.ts';

const form = (token: string) => new URLSearchParams({ token }).toString();
/** The project's name, shown on the player page and never on the sign-in page. */
const PROJECT_SHOWN = '<div class="project">Unreleased</div>';
const FORM_TYPE = { 'Content-Type': 'application/x-www-form-urlencoded' };

/** The value of one cookie in a response's Set-Cookie headers, with its attributes. */
function setCookie(response: Response, name: string): { value: string; attributes: string[] } | undefined {
  for (const header of response.headers.getSetCookie()) {
    const [pair, ...attributes] = header.split(';').map((part) => part.trim());
    const [cookieName, ...value] = pair.split('=');
    if (cookieName === name) return { value: decodeURIComponent(value.join('=')), attributes };
  }
  return undefined;
}

describe.each(backends)('player page sessions on %s', (backend) => {
  const t = useTestServer(backend);
  const origin = () => new URL(t.server.address).origin;

  /** A collaborators-only player with one invited viewer, and the tokens of its owner, the viewer and a stranger. */
  async function privatePlayer() {
    const owner = await t.as('owner@example.com');
    const invited = await t.as('invited@example.com');
    const stranger = await t.as('stranger@example.com');
    const { data: project } = await owner.api.POST('/projects', { body: { name: 'Unreleased' } });
    const make = async (name: string) => {
      const { data } = await owner.api.POST('/players', {
        body: { name, projectid: project!.id, public: false, collaborators: [{ email: 'invited@example.com', role: 'viewer' }] },
      });
      return data!;
    };
    return { player: await make('For the label'), other: await make('Also for the label'), owner, invited, stranger };
  }

  const page = (playerId: string, cookie?: string) => fetch(`${t.server.address}/p/${playerId}`, { headers: cookie ? { Cookie: cookie } : {} });
  const signIn = (playerId: string, token: string, headers: Record<string, string> = { Origin: origin() }) =>
    fetch(`${t.server.address}/p/${playerId}/session`, { method: 'POST', redirect: 'manual', headers: { ...FORM_TYPE, ...headers }, body: form(token) });

  it('refuses a sign-in posted from another site, or from nowhere it names, before reading the token (login CSRF)', async () => {
    const { player, invited } = await privatePlayer();
    for (const headers of [
      { Origin: 'https://attacker.example' },
      { Origin: 'null' },
      { 'Sec-Fetch-Site': 'cross-site', Origin: origin() },
      { 'Sec-Fetch-Site': 'same-site' },
      {},
    ] as Array<Record<string, string>>) {
      const response = await signIn(player.id, invited.token, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await response.json()).detail).toMatch(/Sign in from the player's own page/);
      expect(response.headers.getSetCookie(), JSON.stringify(headers)).toEqual([]);
    }
  });

  it('opens a session cookie that holds no token, is HttpOnly, SameSite=Lax, scoped to the player, and not Secure on http', async () => {
    const { player, invited } = await privatePlayer();
    for (const headers of [{ Origin: origin() }, { 'Sec-Fetch-Site': 'same-origin' }] as Array<Record<string, string>>) {
      const response = await signIn(player.id, invited.token, headers);
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe(`/p/${player.id}`);
      const cookie = setCookie(response, SESSION_COOKIE)!;
      expect(cookie.value).not.toContain(invited.token);
      expect(cookie.value).not.toContain(invited.token.slice(3, 20));
      expect(cookie.attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', `Path=/p/${player.id}`, `Max-Age=${SESSION_TTL_MS / 1000}`]));
      expect(cookie.attributes).not.toContain('Secure');
      expect(setCookie(response, 'as_token')).toBeUndefined();
      const opened = await page(player.id, `${SESSION_COOKIE}=${cookie.value}`);
      expect(opened.status).toBe(200);
      expect(await opened.text()).toContain(PROJECT_SHOWN);
    }
  });

  it('opens no session for a stranger, a revoked token or a token of nobody, and shows the sign-in page again', async () => {
    const { player, stranger } = await privatePlayer();
    const revokedUser = await t.server.ctx.store.users.findByEmail('invited@example.com');
    const revoked = await t.server.ctx.store.tokens.create(revokedUser!.id, 'to revoke', Date.now());
    expect(await t.server.ctx.store.tokens.revoke(revoked.id, Date.now())).toBe(true);
    for (const token of [stranger.token, revoked.secret, 'as_not-a-token', '']) {
      const response = await signIn(player.id, token);
      expect(response.status).toBe(401);
      expect(response.headers.getSetCookie()).toEqual([]);
      const html = await response.text();
      expect(html).toContain('That token does not give access to this player.');
      expect(html).not.toContain(PROJECT_SHOWN);
    }
  });

  it('answers a forged, expired, or other player\'s session cookie with the sign-in page, and deletes it', async () => {
    const { player, other, invited } = await privatePlayer();
    const value = setCookie(await signIn(player.id, invited.token), SESSION_COOKIE)!.value;
    const [userId, expires, signature] = value.split('.');
    const ownerId = (await t.server.ctx.store.users.findByEmail('owner@example.com'))!.id;

    const refusedWith = async (playerId: string, cookieValue: string) => {
      const response = await page(playerId, `${SESSION_COOKIE}=${cookieValue}`);
      const html = await response.text();
      expect(response.status).toBe(401);
      expect(html).toContain('Your session on this player has ended.');
      expect(html).not.toContain(PROJECT_SHOWN);
      const deletion = setCookie(response, SESSION_COOKIE)!;
      expect(deletion.value).toBe('');
      expect(deletion.attributes).toContain('Max-Age=0');
    };
    // The invited user has a role on the other player too, but this cookie was signed for the first.
    await refusedWith(other.id, value);
    await refusedWith(player.id, `${ownerId}.${expires}.${signature}`);
    await refusedWith(player.id, `${userId}.${Number(expires) + SESSION_TTL_MS}.${signature}`);
    await refusedWith(player.id, `${userId}.${expires}.${'A'.repeat(signature.length)}`);
    await refusedWith(player.id, 'garbage');
    expect((await page(player.id, `${SESSION_COOKIE}=${value}`)).status).toBe(200);
    t.server.clock.advance(SESSION_TTL_MS);
    try {
      await refusedWith(player.id, value);
    } finally {
      t.server.clock.advance(-SESSION_TTL_MS);
    }
  });

  it('takes no API token as a cookie any more, and deletes the one the old sign-in left', async () => {
    const { player, invited } = await privatePlayer();
    const response = await page(player.id, `as_token=${encodeURIComponent(invited.token)}`);
    expect(response.status).toBe(401);
    expect(await response.text()).not.toContain(PROJECT_SHOWN);
    const deletion = setCookie(response, 'as_token')!;
    expect(deletion.value).toBe('');
    expect(deletion.attributes).toEqual(expect.arrayContaining(['Path=/p/', 'Max-Age=0']));
  });

  it('asks the policy about a paywall: allow-access locks the page for listeners, allow-download only its downloads', async () => {
    const { api, token } = await t.as('seller@example.com');
    await api.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_Seller000001' } });
    const { data: project } = await api.POST('/projects', { body: { name: 'Unreleased' } });
    const { box } = (await api.uploadFile(project!.id, { name: 'stems.txt', mimeType: 'text/plain' }, new TextEncoder().encode('stems'))).data!;
    const paywalled = async (fulfillment: 'allow-access' | 'allow-download') =>
      (await api.POST('/players', { body: { name: fulfillment, projectid: project!.id, payment: { price: 500, fulfillment, recipient: 'customer' } } })).data!;

    const locked = await paywalled('allow-access');
    const lockedPage = await page(locked.id);
    expect(lockedPage.status).toBe(402);
    expect(await lockedPage.text()).not.toContain(PROJECT_SHOWN);
    // The owner, signed in, is a member: no paywall.
    const value = setCookie(await signIn(locked.id, token), SESSION_COOKIE)!.value;
    expect(await (await page(locked.id, `${SESSION_COOKIE}=${value}`)).text()).toContain(`/download/${box.id}?`);

    const downloadsLocked = await page((await paywalled('allow-download')).id);
    expect(downloadsLocked.status).toBe(200);
    const html = await downloadsLocked.text();
    expect(html).toContain(PROJECT_SHOWN);
    expect(html).not.toContain(`/download/${box.id}`);
  });

  it('sends every page with its CSP, no referrer and no framing, and the assets as static files', async () => {
    const { player } = await privatePlayer();
    for (const response of [await page(player.id), await page('ply_missing'), await signIn(player.id, 'as_wrong')]) {
      expect(response.headers.get('content-security-policy')).toBe(PAGE_CSP);
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('cache-control')).toBe('private, no-store');
      const html = await response.text();
      expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=/i);
      for (const [, href] of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) {
        const asset = await fetch(`${t.server.address}${href.replaceAll('&amp;', '&')}`);
        expect(asset.status, href).toBe(200);
        expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
        expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      }
    }
    const unversioned = await fetch(`${t.server.address}/assets/player.js`);
    expect(unversioned.headers.get('content-type')).toMatch(/^text\/javascript|^application\/javascript/);
    expect(unversioned.headers.get('cache-control')).toBe('no-cache');
    expect((await fetch(`${t.server.address}/assets/..%2fplayer-page-routes.ts`)).status).toBe(404);
  });

  it('gives a session no access to the API', async () => {
    const { player, invited } = await privatePlayer();
    const value = setCookie(await signIn(player.id, invited.token), SESSION_COOKIE)!.value;
    const response = await t.fetch(`/players/${player.id}`, { headers: { Cookie: `${SESSION_COOKIE}=${value}` } });
    expect(response.status).toBe(401);
  });
});

describe('player page sessions behind https', () => {
  const t = useTestServer('sqlite', { PUBLIC_URL: 'https://audio.example.test/share' });

  it('marks the session cookie Secure, scopes it below the public path, and wants the public origin', async () => {
    // The published address does not resolve here: talk to the server where it listens.
    const owner = { token: await t.server.token('owner@example.com') };
    const api = createApiClient({ baseUrl: `${t.server.address}/api/v1`, token: owner.token });
    const { data: player } = await api.POST('/players', { body: { name: 'Private', public: false } });
    const post = (headers: Record<string, string>) =>
      fetch(`${t.server.address}/p/${player!.id}/session`, { method: 'POST', redirect: 'manual', headers: { ...FORM_TYPE, ...headers }, body: form(owner.token) });
    // The origin the server is reached at directly is not the one it is published at.
    expect((await post({ Origin: new URL(t.server.address).origin })).status).toBe(403);
    const response = await post({ Origin: 'https://audio.example.test' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/share/p/${player!.id}`);
    expect(setCookie(response, SESSION_COOKIE)!.attributes).toEqual(expect.arrayContaining(['Secure', 'HttpOnly', 'SameSite=Lax', `Path=/share/p/${player!.id}`]));
  });
});
