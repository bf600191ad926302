import { describe, expect, it } from 'vitest';
import { json, useTestServer } from '../testing/harness.ts';

describe('HTTP behaviour', () => {
  const t = useTestServer('sqlite');

  it('answers a missing, malformed, unknown or revoked token with 401 and WWW-Authenticate', async () => {
    const { token } = await t.as('auth@example.com');
    const missing = await t.fetch('/players');
    expect(missing.status).toBe(401);
    // RFC 9728 §5.1: the challenge names the API's protected resource metadata, which is served there.
    const metadataUrl = `${t.server.address}/.well-known/oauth-protected-resource/api/v1`;
    expect(missing.headers.get('www-authenticate')).toBe(`Bearer realm="api", resource_metadata="${metadataUrl}"`);
    expect(((await (await fetch(metadataUrl)).json()) as { resource: string }).resource).toBe(`${t.server.address}/api/v1`);
    for (const authorization of ['Basic abc', 'Bearer', 'Bearer as_unknown']) {
      const response = await t.fetch('/players', { headers: { Authorization: authorization } });
      expect(response.status, authorization).toBe(401);
      expect(response.headers.get('www-authenticate'), authorization).toBe(`Bearer realm="api", error="invalid_token", resource_metadata="${metadataUrl}"`);
    }
    const [row] = await t.server.ctx.store.tokens.list('auth@example.com');
    await t.server.ctx.store.tokens.revoke(row.id, Date.now());
    expect((await t.fetch('/players', { token })).status).toBe(401);
  });

  it('answers unknown routes, malformed JSON, oversize bodies and wrong content types with problems', async () => {
    const { token } = await t.as('errors@example.com');
    const cases: Array<[string, RequestInit, number, string]> = [
      ['/nothing-here', {}, 404, '/problems/not-found'],
      ['/players', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name": "x",}' }, 400, '/problems/malformed-json'],
      ['/players', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }) }, 413, '/problems/payload-too-large'],
      ['/players', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"x"}' }, 415, '/problems/unsupported-media-type'],
      ['/players', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[]' }, 400, '/problems/validation-error'],
      ['/players?unknown=1', {}, 400, '/problems/validation-error'],
    ];
    for (const [path, init, status, type] of cases) {
      const response = await t.fetch(path, { ...init, token });
      expect(response.status, path).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const problem = await response.json();
      expect(problem).toMatchObject({ type, status, title: expect.any(String), detail: expect.any(String), instance: response.headers.get('x-request-id') });
    }
    // RFC 9110 §15.5.6: a 405 lists the methods the resource has.
    const patched = await t.fetch('/players', { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: '{}', token });
    expect(patched.status).toBe(405);
    expect(patched.headers.get('allow')).toBe('GET, POST, HEAD');
    expect((await patched.json()).type).toBe('/problems/method-not-allowed');
    // A 415 says what the operation takes: JSON for the API, an image for an artwork PUT.
    const asText = await t.fetch('/players', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}', token });
    expect((await asText.json()).detail).toBe('This operation does not take Content-Type text/plain. Send the body as application/json, with a matching Content-Type header.');
    const artworkPut = await t.fetch(`/upload/artwork/upl_x?expires=1&signature=${'0'.repeat(64)}`, { method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'x' });
    expect(artworkPut.status).toBe(415);
    expect((await artworkPut.json()).detail).toMatch(/Send the body as image\/\*/);
    const outside = await fetch(`${t.server.address}/nowhere`);
    expect(outside.status).toBe(404);
    expect((await outside.json()).type).toBe('/problems/not-found');
  });

  it('never answers bad input with a 500', async () => {
    const { token, api } = await t.as('fuzz@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Fuzz' } });
    const bodies = [null, 0, 'text', [], {}, { name: null }, { name: {} }, { name: 'x', options: [] }, { name: 'x', boxids: 'box' }, { name: 'x', collaborators: [{ email: 'not-an-email', role: 'viewer' }] }];
    const paths = ['/players', `/projects/${project!.id}/files`, `/projects/${project!.id}/folders`, `/projects/${project!.id}/stacks`, `/projects/${project!.id}/files/box_nothing`, '/players/ply_%00', '/me/preferences'];
    for (const path of paths) {
      for (const body of bodies) {
        const response = await t.fetch(path, { ...json(body), token });
        expect(response.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500);
      }
    }
    const weirdIds = await t.fetch(`/projects/${'x'.repeat(300)}/all`, { token });
    expect(weirdIds.status).toBe(400);
  });

  it('answers CORS preflights that name the upload headers, and sends CORS headers on responses', async () => {
    const preflight = await fetch(`${t.server.apiUrl}/upload/files/upl_x?expires=1&signature=${'a'.repeat(64)}`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example.org', 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'content-type,x-storage-meta-boxpath,x-storage-meta-writeback' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/x-storage-meta-boxpath.*x-storage-meta-writeback/);
    const actual = await t.fetch('/players', { headers: { Origin: 'https://app.example.org' } });
    expect(actual.headers.get('access-control-allow-origin')).toBe('*');
    expect(actual.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });

  it('reports health, and gives each request an id', async () => {
    const health = await fetch(`${t.server.address}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok', store: 'sqlite' });
    expect(health.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{16,}$/);
    const kept = await fetch(`${t.server.address}/healthz`, { headers: { 'X-Request-Id': 'trace-123' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-123');
  });

  it('sends problem type URIs to the table of problem types in the docs', async () => {
    const response = await fetch(`${t.server.address}/problems/validation-error`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/docs#/section/errors');
  });

  it('serves the docs site and the bundled spec', async () => {
    const spec = await fetch(`${t.server.address}/openapi.json`);
    expect((await spec.json()).openapi).toBe('3.1.0');
    // The docs are built by `npm run docs`, which npm start and npm test run first.
    const docs = await fetch(`${t.server.address}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain('<title>Audio Share API</title>');
    // Built with the Redoc bundle inlined, so the docs work without a network.
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
  });
});

describe('rate limit', () => {
  const t = useTestServer('sqlite', { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' });

  it('answers 429 with Retry-After once the burst is spent', async () => {
    const { token } = await t.as('eager@example.com');
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await t.fetch('/me', { token })).status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses[4]).toBe(429);
    const limited = await t.fetch('/me', { token });
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await limited.json()).type).toBe('/problems/rate-limited');
  });
});
