/**
 * The docs page and the spec a server serves name that server: its
 * PUBLIC_URL first among the servers, and in every request sample, where
 * the built files say http://localhost:8080. The page's CSP still allows
 * exactly its inline scripts as served.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { docsPath, specPath } from '../app.ts';
import { useTestServer } from '../testing/harness.ts';
import { BUILT_SERVER_URL } from './served-docs.ts';

const PUBLIC_URL = 'https://audio.example.org';

describe('the docs a server serves', () => {
  const t = useTestServer('sqlite', { PUBLIC_URL });

  it('name that server first and in every sample, where the built page names the default address', async () => {
    // The built page does name the default address, in its servers and its samples.
    const built = readFileSync(docsPath, 'utf8');
    expect(built).toContain(`${BUILT_SERVER_URL}/api/v1`);
    expect(built).toMatch(/curl[^"]*localhost:8080/);

    const answer = await fetch(`${t.server.address}/docs`);
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(html).not.toContain('localhost:8080');
    expect(html).toContain(`"servers":[{"url":"${PUBLIC_URL}/api/v1","description":"This server`);
    expect(html).toMatch(/curl[^"]*https:\/\/audio\.example\.org\/api\/v1\//);

    // Every inline script of the page as served, and nothing else, is allowed by its hash.
    const hashes = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map(([, body]) => `'sha256-${createHash('sha256').update(body).digest('base64')}'`);
    expect(hashes.length).toBeGreaterThan(0);
    const scriptSrc = /script-src ([^;]*)/.exec(answer.headers.get('content-security-policy') ?? '')?.[1].split(' ');
    expect(new Set(scriptSrc)).toEqual(new Set(hashes));
  });

  it('serve a spec whose first server is this one', async () => {
    const built = JSON.parse(readFileSync(specPath, 'utf8')) as { servers: { url: string }[] };
    expect(built.servers[0].url).toBe(`${BUILT_SERVER_URL}/api/v1`);
    const served = (await (await fetch(`${t.server.address}/openapi.json`)).json()) as { servers: { url: string; description: string }[] };
    expect(served.servers[0]).toEqual({ url: `${PUBLIC_URL}/api/v1`, description: expect.stringContaining('This server') });
    expect(served.servers.slice(1)).toEqual(built.servers.slice(1));
  });
});
