import { createServer, type Server } from 'node:http';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../testing/harness.ts';
import { useBrowser } from '../testing/browser.ts';
import { securityHeaders } from './security-headers.ts';

const apiPolicy = "default-src 'none'; frame-ancestors 'none'";

function expectApiHeaders(response: Response, label: string) {
  expect(response.headers.get('content-security-policy'), label).toBe(apiPolicy);
  expect(response.headers.get('x-content-type-options'), label).toBe('nosniff');
  expect(response.headers.get('referrer-policy'), label).toBe('no-referrer');
  expect(response.headers.get('cross-origin-resource-policy'), label).toBe('same-origin');
  expect(response.headers.get('x-frame-options'), label).toBe('DENY');
}

describe('security headers', () => {
  const t = useTestServer('sqlite');

  it('sends a locked-down CSP, nosniff, no-referrer and same-origin CORP on API answers, problems and the bundled spec, and no HSTS over http', async () => {
    const { token } = await t.as('headers@example.com');
    const answers: Array<[string, Response]> = [
      ['a JSON answer', await t.fetch('/me', { token })],
      ['a 401 problem', await t.fetch('/me')],
      ['a 404 problem', await fetch(`${t.server.address}/nowhere`)],
      ['a 400 problem', await t.fetch('/players?unknown=1', { token })],
      ['the spec', await fetch(`${t.server.address}/openapi.json`)],
      ['health', await fetch(`${t.server.address}/healthz`)],
    ];
    for (const [label, response] of answers) {
      expectApiHeaders(response, label);
      expect(response.headers.get('strict-transport-security'), label).toBeNull();
    }
  });

  it("gives the signed downloads' own CSP and CORP to their answers made before the handler (a refused signature)", async () => {
    const refused = await t.fetch(`/download/box_x?expires=1&signature=${'a'.repeat(64)}`);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
    expect(refused.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('gives the docs page a CSP that runs only its own inline scripts, by hash, and loads nothing from elsewhere', async () => {
    const docs = await fetch(`${t.server.address}/docs`);
    expect(docs.status).toBe(200);
    const policy = docs.headers.get('content-security-policy')!;
    const directives = Object.fromEntries(policy.split(/;\s*/).map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]));
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    expect(directives['script-src'].length).toBeGreaterThan(0);
    for (const source of directives['script-src']) expect(source).toMatch(/^'sha256-[A-Za-z0-9+/]+=*'$/);
    expect(policy).not.toMatch(/https?:|\*|unsafe-eval/);
    expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('security headers: HSTS', () => {
  const t = useTestServer('sqlite', { PUBLIC_URL: 'https://audio.example.org' });

  it('pins https for a year, this host only, when PUBLIC_URL is https', async () => {
    const response = await fetch(`${t.server.address}/healthz`);
    expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });
});

describe('security headers: a route that sets its own', () => {
  it("keeps the route's own CSP and CORP (the player page's, the downloads')", async () => {
    const app = express();
    app.use(securityHeaders({ publicUrl: 'http://localhost' }));
    app.get('/own', (_req, res) => {
      res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
      res.end('x');
    });
    const server = await new Promise<Server>((ready) => {
      const listening = createServer(app).listen(0, '127.0.0.1', () => ready(listening));
    });
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/own`);
      expect(response.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
      expect(response.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});

describe('security headers in Chromium', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();

  it('renders the Redoc docs under their CSP: no script blocked but the search worker probe, nothing fetched from a third party', async () => {
    const page = await chromium.browser.newPage();
    try {
      await page.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { cspViolations: string[] }).cspViolations = seen;
        document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.effectiveDirective} ${event.blockedURI}`));
      });
      const finished: string[] = [];
      page.on('requestfinished', (request) => finished.push(request.url()));
      await page.goto(`${t.server.address}/docs`);
      await page.getByRole('heading', { name: /Audio Share API/ }).first().waitFor();
      await page.getByText('Players', { exact: true }).first().waitFor();
      // The search indexes on the page when its worker is refused: it must still find operations.
      await page.getByText(/^Search/).first().click();
      await page.keyboard.type('artwork');
      await page.locator('[data-component-name="Search/SearchItem"]').filter({ hasText: 'Request an artwork upload URL' }).first().waitFor();

      const violations = await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
      // Expected, and why each is right to refuse:
      //  - `script-src eval`: the search index probes Function() for a worker; refused, it indexes on the page (above).
      //  - `img-src https://cdn.redoc.ly/…`: Redoc's "API docs by Redocly" logo, a third-party request; it hides itself.
      const unexpected = violations.filter((violation) => !/^script-src eval$/.test(violation.trim()) && !/^img-src https:\/\/cdn\.redoc\.ly\//.test(violation));
      expect(unexpected).toEqual([]);
      expect(violations.filter((violation) => violation.startsWith('script-src-elem') || violation.startsWith('style-src'))).toEqual([]);
      const origin = new URL(t.server.address).origin;
      expect(finished.filter((url) => !url.startsWith(origin) && !url.startsWith('data:'))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('lets a page on another origin call the API with CORS, while CORP keeps it from embedding answers as no-cors subresources', async () => {
    const { token } = await t.as('cross-origin@example.com');
    // Another origin: a page served from a second port.
    const other = await new Promise<Server>((ready) => {
      const listening = createServer((_req, res) => res.end('<!doctype html><title>partner</title>')).listen(0, '127.0.0.1', () => ready(listening));
    });
    const page = await chromium.browser.newPage();
    try {
      await page.goto(`http://127.0.0.1:${(other.address() as { port: number }).port}/`);
      const called = await page.evaluate(
        async ({ apiUrl, token }) => {
          const response = await fetch(`${apiUrl}/me`, { headers: { Authorization: `Bearer ${token}` } });
          return { status: response.status, email: (await response.json()).email };
        },
        { apiUrl: t.server.apiUrl, token },
      );
      expect(called).toEqual({ status: 200, email: 'cross-origin@example.com' });
      // A no-cors fetch is what <script>, <img> and <audio> make; CORP same-origin refuses it the answer.
      const embedded = await page.evaluate(
        (url) =>
          fetch(url, { mode: 'no-cors' }).then(
            () => 'given',
            () => 'refused',
          ),
        `${t.server.address}/openapi.json`,
      );
      expect(embedded).toBe('refused');
    } finally {
      await page.close();
      await new Promise((done) => other.close(done));
    }
  });
});
