/**
 * The changelog page, /docs/changelog, as the server serves it
 * (generated/changelog.html): a strict CSP that allows no script and only
 * its own stylesheet, by hash; in headless Chromium at 1280 and 360 px, no
 * sideways scroll, no axe-core violation of any impact, no CSP violation or
 * console error, and no request to another origin (screenshots in
 * /tmp/shots-changelog/).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { changelogPath, specPath } from '../app.ts';
import { screenshot, useBrowser } from '../testing/browser.ts';
import { useTestServer } from '../testing/harness.ts';
import { watchedPage } from '../../web/testing/player-browser.ts';
import { renderChangelog } from '../../scripts/breaking/changelog.ts';
import { releases, specOf } from '../../scripts/breaking/releases.ts';
import { servedChangelog } from './served-docs.ts';

const SHOTS = '/tmp/shots-changelog';
mkdirSync(SHOTS, { recursive: true });
const AXE_SOURCE = readFileSync(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');

/** At 1280 and 360 px: no sideways scroll, screenshots; then every axe violation, CSP violations and console errors, and requests elsewhere. */
async function checkPage(browser: Browser, url: string, name: string, scrollTo: string) {
  const origin = new URL(url).origin;
  const watched = await watchedPage(browser);
  const { page } = watched;
  const foreign: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).origin !== origin) foreign.push(request.url());
  });
  try {
    const answer = await page.goto(url, { waitUntil: 'load' });
    expect(answer?.status()).toBe(200);
    await expect(page.getByRole('heading', { level: 1, name: 'Changelog' }).isVisible()).resolves.toBe(true);
    // The stylesheet applied (its hash allowed it): the page's font is not the browser's default serif.
    expect(await page.evaluate(() => getComputedStyle(document.body).fontFamily)).toMatch(/system-ui/);
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), `sideways scroll at ${width} px`).toBeLessThanOrEqual(0);
      await screenshot(page, { path: `${SHOTS}/${name}-${width}.png` });
      await page.locator(scrollTo).scrollIntoViewIfNeeded();
      await screenshot(page, { path: `${SHOTS}/${name}-${width}-${scrollTo.replace(/[^a-z0-9]/gi, '')}.png` });
      await page.evaluate(() => window.scrollTo(0, 0));
    }
    // Every violation, whatever its impact. axe is evaluated through the CDP: the page allows no script of its own.
    await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(context: Document): Promise<{ violations: Array<{ id: string; impact?: string; nodes: unknown[] }> }> } }).axe;
      return (await axe.run(document)).violations.map((violation) => `${violation.id} (${violation.impact}) ×${violation.nodes.length}`);
    });
    expect(violations).toEqual([]);
    expect(await watched.problems()).toEqual([]);
    expect(foreign).toEqual([]);
  } finally {
    await watched.close();
  }
}

describe('the changelog page', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();
  const url = () => `${new URL(t.server.ctx.config.publicUrl).origin}/docs/changelog`;

  it('is served as the built page, under a CSP that allows no script and only its own stylesheet', async () => {
    const response = await fetch(url());
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    expect(html).toBe(readFileSync(changelogPath, 'utf8'));
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    expect(response.headers.get('content-security-policy')).toBe(
      `default-src 'none'; script-src 'none'; style-src 'sha256-${createHash('sha256').update(style).digest('base64')}'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    // What this branch of the API brought since 1.0.0 is there, among the rest.
    expect(html).toContain('New optional header parameter <code>Idempotency-Key</code>');
    expect(html).toContain('<h2 id="v1.0.0-title">1.0.0 <span class="date">released 2026-11-23</span></h2>');
  });

  it('reads at 1280 and 360 px without sideways scroll, axe clean, with nothing blocked and nothing from elsewhere', { timeout: 90_000 }, async () => {
    await checkPage(chromium.browser, url(), 'changelog', '#v1\\.0\\.0');
  });

  it('shows what is deprecated in a table that fits 360 px, as the day something is deprecated will show it', { timeout: 90_000 }, async () => {
    // The bundled spec with an operation, a parameter and a field deprecated, served as the server serves its own.
    const spec = JSON.parse(readFileSync(specPath, 'utf8'));
    Object.assign(spec.paths['/projects/{projectid}/folders'].post, { deprecated: true, 'x-deprecated-since': '2026-12-01', 'x-sunset': '2027-07-01' });
    Object.assign(spec.components.parameters.Limit, { deprecated: true, 'x-deprecated-since': '2026-12-15', 'x-sunset': '2027-03-01' });
    Object.assign(spec.components.schemas.PlayerOptionsInput.properties.stacks, { deprecated: true, 'x-deprecated-since': '2026-11-01' });
    const released = releases().map((release) => ({ ...release, spec: specOf(release) }));
    const dir = mkdtempSync(join(tmpdir(), 'changelog-'));
    const file = join(dir, 'changelog.html');
    writeFileSync(file, renderChangelog(released, spec));
    const app = express();
    const server = createServer(app);
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    app.get('/docs/changelog', servedChangelog(file, { publicUrl: origin }));
    // As the server does, for the page's icon.
    app.get('/favicon.ico', (_req, res) => res.sendFile(new URL('../../web/assets/favicon.ico', import.meta.url).pathname));
    try {
      const html = await (await fetch(`${origin}/docs/changelog`)).text();
      expect(html).toMatch(/<td data-label="What"><code>POST \/projects\/\{projectid\}\/folders<\/code><\/td><td data-label="In"><code>createFolder<\/code><\/td><td data-label="Deprecated since">2026-12-01<\/td><td data-label="Stops working on">2027-07-01<\/td>/);
      expect(html).toContain('<code>createFolder</code>');
      await checkPage(chromium.browser, `${origin}/docs/changelog`, 'changelog-deprecations', '#deprecations');
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
