/**
 * The shell the server sends for /p/{id} and /embed/{id}, over HTTP (the
 * page itself runs in Chromium in player-app.test.ts): its status, its link
 * preview tags and what they keep private, and its security headers.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../generated/client.ts';
import { useTestServer } from '../testing/harness.ts';
import { onePixelPng } from '../testing/fixtures.ts';
import { EMBED_CSP, PAGE_CSP } from './page-security.ts';
import { BUNDLE_DIR } from './page-assets.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const OWNER = 'shell.owner.private@example.com';

describe('the player page shell', () => {
  const t = useTestServer('sqlite');
  let projectid: string;
  const page = (path: string, init?: RequestInit) => fetch(`${t.server.ctx.config.publicUrl}${path}`, init);
  const makePlayer = async (body: Partial<Schemas['CreatePlayerRequest']>) => {
    const { api } = await t.as(OWNER);
    const { data, error } = await api.POST('/players', { body: { name: 'Night <Drive> & "Friends"', projectid, ...body } });
    expect(error).toBeUndefined();
    return data!;
  };
  /** The content of each <meta property|name=…> in the page, by key. */
  const metaOf = (html: string) =>
    Object.fromEntries([...html.matchAll(/<meta (?:property|name)="([^"]+)" content="([^"]*)">/g)].map((match) => [match[1], match[2]]));

  beforeAll(async () => {
    const { api } = await t.as(OWNER);
    const { data } = await api.POST('/projects', { body: { name: 'Spring EP' } });
    projectid = data!.id;
    const artwork = await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng);
    expect(artwork.error).toBeUndefined();
  });

  it("previews a public player by its name, project and artwork, escaped, under the page's CSP", async () => {
    const player = await makePlayer({});
    const response = await page(`/p/${player.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(PAGE_CSP);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    const html = await response.text();
    const meta = metaOf(html);
    expect(meta['og:title']).toBe('Night &lt;Drive&gt; &amp; &quot;Friends&quot;');
    expect(meta['og:description']).toContain('Spring EP');
    expect(meta['og:url']).toBe(`${t.server.ctx.config.publicUrl}/p/${player.id}`);
    expect(meta['twitter:card']).toBe('summary_large_image');
    // The artwork URL is a signed one that the server serves.
    const image = await fetch(meta['og:image'].replaceAll('&amp;', '&'));
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(html).not.toContain('<Drive>');
    expect(html).not.toMatch(/<script>|<style>| style=/);
    expect(html).toContain(`data-player-id="${player.id}"`);
  });

  it('tells a preview nothing of a private or password player, 410 past expiry, 404 for none, and never an email', async () => {
    const cases: Array<[Partial<Schemas['CreatePlayerRequest']>, number]> = [
      [{ public: false }, 200],
      [{ password: 'shell-password' }, 200],
      [{ expires: t.server.clock.now() + 60_000 }, 410],
    ];
    for (const [body, status] of cases) {
      const player = await makePlayer(body);
      if (body.expires) t.server.clock.advance(120_000);
      const response = await page(`/p/${player.id}`);
      const html = await response.text();
      expect(response.status, JSON.stringify(body)).toBe(status);
      expect(html).not.toContain('Night');
      expect(html).not.toContain('Spring EP');
      expect(metaOf(html)['og:image']).toBeUndefined();
    }
    const none = await page('/p/ply_doesnotexist');
    expect(none.status).toBe(404);
    expect(await none.text()).toContain('Player not found');
    expect((await page(`/p/${'x'.repeat(65)}`)).status).toBe(404);
    const open = await (await page(`/p/${(await makePlayer({})).id}`)).text();
    expect(open).not.toContain('shell.owner');
  });

  it('serves /embed without X-Frame-Options and with a CSP that lets any site frame it', async () => {
    const player = await makePlayer({});
    const response = await page(`/embed/${player.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-frame-options')).toBeNull();
    expect(response.headers.get('content-security-policy')).toBe(EMBED_CSP);
    expect(EMBED_CSP).toContain('frame-ancestors *');
    expect(await response.text()).toContain('data-embed="true"');
  });

  it('serves the bundle under /assets gzipped when accepted, revalidated by ETag, immutable for the linked version, and nothing else from its folders', async () => {
    const html = await (await page(`/p/${(await makePlayer({})).id}`)).text();
    const script = /<script type="module" src="([^"]+)">/.exec(html)![1];
    const response = await page(script);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Number(response.headers.get('content-length'))).toBeLessThan(150_000);
    expect(response.headers.get('content-encoding')).toBe('gzip');
    expect(response.headers.get('vary')).toMatch(/Accept-Encoding/);
    // fetch undid the gzip: what arrives is the bundle itself.
    expect(await response.text()).toBe(readFileSync(join(BUNDLE_DIR, 'player.js'), 'utf8'));
    const again = await page(script, { headers: { 'If-None-Match': response.headers.get('etag')! } });
    expect(again.status).toBe(304);
    const plain = await page(script, { headers: { 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(Number(plain.headers.get('content-length'))).toBe(readFileSync(join(BUNDLE_DIR, 'player.js')).length);
    expect((await page('/assets/LICENSES.txt')).status).toBe(200);
    for (const path of ['/assets/favicon.ico', '/assets/../package.json', '/assets/player.js.map', '/assets/']) {
      expect((await page(path)).status, path).toBe(404);
    }
  });
});
