/**
 * Refusals are not cached (issue 29: "a browser that once saw 'This link has
 * expired' keeps seeing it after the owner clears the expiry (the 410 carries
 * no Cache-Control)"). RFC 9110 §15.5.11: "A 410 response is heuristically
 * cacheable", as a 404 is (§15.5.5); every problem the API answers says
 * `Cache-Control: no-store` (RFC 9111 §5.2.2.5), so the next request asks
 * the server again. On both stores.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { json, useTestServer } from '../testing/harness.ts';

describe.each(backends)('refusals are not cached, on %s', (backend) => {
  const t = useTestServer(backend);

  it('answers an expired link 410 with no-store, and the same link 200 once the owner clears the expiry', async () => {
    const { api, token } = await t.as(`expiry-cache-${backend}@example.com`);
    const { data: player } = await api.POST('/players', { body: { name: 'Renewed link', expires: t.server.clock.now() + 60_000 } });
    t.server.clock.advance(120_000);
    const view = `/players/${player!.id}/view`;
    const expired = await t.fetch(view);
    expect(expired.status).toBe(410);
    expect(expired.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(expired.headers.get('cache-control')).toBe('no-store');
    expect((await t.fetch(`/players/${player!.id}`, { ...json({ expires: null }), token })).status).toBe(200);
    const renewed = await t.fetch(view);
    expect(renewed.status).toBe(200);
  });

  it('answers every problem with no-store: a 404, a 401, a 400', async () => {
    for (const [path, init] of [
      ['/players/ply_doesnotexist', { token: (await t.as(`expiry-cache-404-${backend}@example.com`)).token }],
      ['/projects', {}],
      ['/projects?limit=0', { token: (await t.as(`expiry-cache-400-${backend}@example.com`)).token }],
    ] as const) {
      const response = await t.fetch(path, init);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.headers.get('cache-control'), path).toBe('no-store');
    }
  });
});
