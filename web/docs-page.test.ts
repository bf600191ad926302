/**
 * The docs page (generated/docs.html, served at /docs) in headless Chromium.
 *
 * It must make no request outside its own origin: a reader's browser reports
 * nothing to Redocly and loads nothing from a CDN. That is checked twice,
 * after reading every part of the page (every section and operation, schemas
 * expanded, a search, the colour mode switched, then the page hidden, which
 * is when a page sends what it has batched):
 *
 * - served by a real server at /docs, under the page's CSP. The CSP would
 *   block a third-party request, and a blocked request never reaches the
 *   network, so the test also records every URL the page's scripts ask for
 *   (fetch, sendBeacon, XMLHttpRequest, WebSocket, EventSource) and every
 *   CSP violation;
 * - the file itself, with no CSP at all, on an origin of its own: the file is
 *   clean, not just held in check by the server's CSP.
 *
 * Also what a reader sees: the Errors list readable at 1280 px, absolute
 * server URLs, the icon. Every wait is for an element or an event.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { docsPath } from '../server/app.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { workflowFiles } from '../scripts/workflows-docs.ts';

/** Reading every part of the page takes about 15 s; more on a busy 2-core machine. */
const READ_ALL_TIMEOUT_MS = 120_000;

/** Where the page's scripts are watched from: set up by watchTraffic before any script of the page runs. */
interface PageTraffic {
  /** URLs the page's scripts asked for, whether or not the CSP let them through. */
  asked: string[];
  /** `<directive> <blocked URI>` of every CSP violation. */
  violations: string[];
}

/**
 * Records every request the page makes (Chromium's own view of the network)
 * and, from inside the page, every URL its scripts ask for and every CSP
 * violation. `seen()` gives all three.
 */
async function watchTraffic(page: Page) {
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.addInitScript(() => {
    const traffic: PageTraffic = { asked: [], violations: [] };
    (window as unknown as { docsTraffic: PageTraffic }).docsTraffic = traffic;
    const ask = (url: unknown) => {
      const text = url instanceof Request ? url.url : String(url);
      try {
        traffic.asked.push(new URL(text, location.href).href);
      } catch {
        traffic.asked.push(text);
      }
    };
    const originalFetch = window.fetch;
    window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      ask(input);
      return originalFetch(input, init);
    };
    const originalBeacon = navigator.sendBeacon.bind(navigator);
    navigator.sendBeacon = (url: string | URL, data?: BodyInit | null) => {
      ask(url);
      return originalBeacon(url, data);
    };
    const originalOpen = XMLHttpRequest.prototype.open;
    XMLHttpRequest.prototype.open = function (this: XMLHttpRequest, method: string, url: string | URL, ...rest: unknown[]) {
      ask(url);
      return (originalOpen as (...args: unknown[]) => void).call(this, method, url, ...rest);
    } as typeof XMLHttpRequest.prototype.open;
    const OriginalWebSocket = window.WebSocket;
    window.WebSocket = class extends OriginalWebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        ask(url);
        super(url, protocols);
      }
    };
    const OriginalEventSource = window.EventSource;
    window.EventSource = class extends OriginalEventSource {
      constructor(url: string | URL, init?: EventSourceInit) {
        ask(url);
        super(url, init);
      }
    };
    document.addEventListener('securitypolicyviolation', (event) => traffic.violations.push(`${event.effectiveDirective} ${event.blockedURI}`));
  });
  return {
    async seen() {
      const inPage = await page.evaluate(() => (window as unknown as { docsTraffic: PageTraffic }).docsTraffic);
      return { requests: [...requests], ...inPage };
    },
  };
}

/** URLs that leave the page's origin. data:, blob: and about: URLs never reach a network. */
function foreign(urls: string[], origin: string): string[] {
  return urls.filter((url) => !/^(data|blob|about):/.test(url) && new URL(url).origin !== origin);
}

/**
 * Reads the whole page as a reader would, which is everything that can make
 * Redoc load something or report something: each operation of each group
 * opened from the sidebar (Redoc renders the page in parts, as it is
 * reached), its schemas expanded, a search, the colour mode switched. Then
 * the page is hidden, as when its tab is closed or put in the background:
 * that is when a page sends what it has batched (OpenTelemetry's batch
 * processor flushes on `visibilitychange` to hidden and on `pagehide`), so
 * nothing waits on a timer.
 */
async function readEveryPart(page: Page) {
  const menu = page.locator('[data-component-name="Menu/Menu"]').first();
  await page.locator('[id="section/errors"]').waitFor();
  const groups = await menu.locator('a[href^="/"]:not([href^="/section/"]):not([href="/"])').evaluateAll((links) => links.map((link) => link.getAttribute('href') as string));
  expect(groups).toEqual(expect.arrayContaining(['/players', '/files', '/uploads', '/projects', '/account']));
  for (const group of groups) {
    await menu.locator(`a[href="${group}"]`).click();
    await page.locator(`[id="${group.slice(1)}"]`).waitFor();
    const operations = menu.locator(`a[href^="#${group}/"]`);
    await operations.first().waitFor();
    for (const href of await operations.evaluateAll((links) => links.map((link) => link.getAttribute('href') as string))) {
      await menu.locator(`a[href="${href}"]`).click();
      const operation = page.locator(`[id="${href.slice(2)}"]`);
      await operation.locator('h2').first().waitFor();
      // Each click turns its button into "Collapse all" (an expanded schema may show buttons of its own: at most 20).
      const expandAll = operation.getByText('Expand all', { exact: true });
      for (let clicks = 0; clicks < 20 && (await expandAll.count()) > 0; clicks++) {
        const button = await expandAll.first().elementHandle();
        // A click can land while Redoc re-renders the operation and be lost (a CI run waited 30 s on one that never
        // took): after 10 s with the button unchanged, it is clicked again, at most twice more.
        for (let attempt = 0; ; attempt++) {
          await button?.click();
          const took = await page
            .waitForFunction((clicked) => !clicked?.isConnected || clicked.textContent !== 'Expand all', button, { timeout: 10_000 })
            .then(() => true)
            .catch((error: unknown) => {
              if (attempt >= 2) throw error;
              return false;
            });
          if (took) break;
        }
      }
    }
  }
  // The search indexes the whole spec.
  await page.getByText(/^Search/).first().click();
  await page.keyboard.type('artwork');
  await page.locator('[data-component-name="Search/SearchItem"]').filter({ hasText: 'Request an artwork upload URL' }).first().waitFor();
  await page.keyboard.press('Escape');
  await page.locator('[data-component-name="icons/MoonIcon/MoonIcon"]').click();
  await page.evaluate(async () => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
    window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
    // What the handlers start runs in promise callbacks: let them finish, one task later.
    await new Promise<void>((done) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => done();
      channel.port2.postMessage(null);
    });
  });
}


/** The spec's introduction, as the docs page renders it. */
function specDescription(): string {
  const spec = JSON.parse(readFileSync(resolve(import.meta.dirname, '../generated/openapi.json'), 'utf8')) as { info: { description: string } };
  return spec.info.description;
}

describe('docs page', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();

  it('served at /docs, asks nothing of any other origin while every part of it is read (no telemetry, no CDN), under its CSP', { timeout: READ_ALL_TIMEOUT_MS }, async () => {
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      const traffic = await watchTraffic(page);
      await page.goto(`${t.server.address}/docs`);
      await readEveryPart(page);
      const { requests, asked, violations } = await traffic.seen();
      const origin = new URL(t.server.address).origin;
      expect(requests.length).toBeGreaterThan(0);
      expect(foreign(requests, origin)).toEqual([]);
      expect(foreign(asked, origin)).toEqual([]);
      // The one violation allowed: the search probes Function() to build a worker and, refused, indexes on the page
      // (the search above found an operation). Any blocked URL would be a request to somewhere.
      expect(violations.filter((violation) => violation !== 'script-src eval')).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('as a file, without the CSP, asks nothing of any other origin either', { timeout: READ_ALL_TIMEOUT_MS }, async () => {
    const context: BrowserContext = await chromium.browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      // The page on an origin of its own, with no CSP. Anything for another origin is recorded and cut off,
      // so nothing leaves this machine whatever the page does.
      const origin = 'https://docs.example.test';
      const html = readFileSync(docsPath);
      const routed: string[] = [];
      await context.route('**/*', (route) => {
        const url = route.request().url();
        routed.push(url);
        if (url === `${origin}/docs`) return route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html });
        if (new URL(url).origin === origin) return route.fulfill({ status: 404, body: '' });
        return route.abort('blockedbyclient');
      });
      const page = await context.newPage();
      const traffic = await watchTraffic(page);
      const response = await page.goto(`${origin}/docs`);
      expect(response?.headers()['content-security-policy']).toBeUndefined();
      await readEveryPart(page);
      const { requests, asked, violations } = await traffic.seen();
      expect(violations).toEqual([]);
      expect(foreign(routed, origin)).toEqual([]);
      expect(foreign(requests, origin)).toEqual([]);
      expect(foreign(asked, origin)).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('lists the error types at 1280 px without breaking any type across lines', async () => {
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(`${t.server.address}/docs#/section/errors`);
      const errors = page.locator('[id="section/errors"]');
      await errors.waitFor();
      // Each `type`: a code element that opens a list item or a table cell of the Errors section.
      const types = await page.evaluate(() =>
        [...document.querySelectorAll('li > code:first-child, td > code:first-child')]
          .filter((code) => code.textContent?.startsWith('/problems/') && code.parentElement?.firstChild === code)
          .filter((code) => {
            // Only those of the Errors section: after its heading, before the next one.
            const heading = document.getElementById('section/errors');
            const next = document.getElementById('section/uploads-in-two-steps');
            return heading && next && heading.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_FOLLOWING && next.compareDocumentPosition(code) & Node.DOCUMENT_POSITION_PRECEDING;
          })
          .map((code) => ({ type: code.textContent, lines: code.getClientRects().length })),
      );
      // Every type the spec's Errors list names is on the page, each on one line.
      const listed = [...specDescription().matchAll(/^- `(\/problems\/[a-z-]+)`/gm)].map(([, type]) => type);
      expect(listed.length).toBeGreaterThanOrEqual(16);
      expect(types.map(({ type }) => type)).toEqual(listed);
      expect(types.filter(({ lines }) => lines !== 1)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('names the servers by absolute URL, this server first, without Markdown marks', async () => {
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(`${t.server.address}/docs`);
      const servers = page.locator('[data-component-name="Panel/Panel"]').filter({ hasText: 'Servers' });
      await servers.waitFor();
      const text = (await servers.textContent()) ?? '';
      // The server that serves the docs comes first, under its own address (its PUBLIC_URL), not the default one.
      expect(text).toContain(`${t.server.address}/api/v1`);
      expect(text).toContain('This server');
      expect(text).not.toContain('localhost:8080');
      expect(text).toContain('http://127.0.0.1:4010/api/v1');
      expect(text).not.toContain('`');
    } finally {
      await page.close();
    }
  });

  it('shows the runnable workflows with the commands that run them against this server, and a step links to its operation', async () => {
    const page = await chromium.browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await page.goto(`${t.server.address}/docs#/section/runnable-workflows`);
      await page.locator('[id="section/runnable-workflows"]').waitFor();
      for (const path of workflowFiles(resolve(import.meta.dirname, '..'))) {
        // The command, as served: naming this server, not the default address the build wrote.
        const command = page.locator('pre, code').filter({ hasText: `npx redocly respect ${path}` });
        await expect(command.first().textContent()).resolves.toContain(`--server api=${t.server.address}/api/v1`);
      }
      // A step's link (written as workflows-docs.ts guesses Redoc's anchors) opens that operation.
      await page.locator('a[href="#/webhooks/redeliverwebhook"]').first().click();
      const operation = page.locator('[id="webhooks/redeliverwebhook"]');
      await operation.locator('h2').first().waitFor();
      await expect(operation.locator('h2').first().textContent()).resolves.toBe('Redeliver an event');
      await page.waitForFunction(() => {
        const top = document.getElementById('webhooks/redeliverwebhook')?.getBoundingClientRect().top;
        return top !== undefined && top >= 0 && top < window.innerHeight;
      });
    } finally {
      await page.close();
    }
  });

  it('shows the icon: its own, inlined, and /favicon.ico, a real icon kept for long', async () => {
    const favicon = await fetch(`${t.server.address}/favicon.ico`);
    expect(favicon.status).toBe(200);
    expect(favicon.headers.get('content-type')).toMatch(/^image\/(x-icon|vnd\.microsoft\.icon)$/);
    expect(Number(/max-age=(\d+)/.exec(favicon.headers.get('cache-control') ?? '')?.[1])).toBeGreaterThanOrEqual(7 * 24 * 3600);
    // An ICO: reserved 0, type 1 (icon), then at least one image.
    const bytes = Buffer.from(await favicon.arrayBuffer());
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2)]).toEqual([0, 1]);
    expect(bytes.readUInt16LE(4)).toBeGreaterThan(0);

    const page = await chromium.browser.newPage();
    try {
      await page.goto(`${t.server.address}/docs`);
      const link = await page.locator('link[rel="icon"]').getAttribute('href');
      expect(link).toMatch(/^data:image\/svg\+xml,/);
      // Chromium decodes both, under the page's CSP (img-src 'self' data:).
      const sizes = await page.evaluate(async (sources) => {
        const decoded = [];
        for (const source of sources) {
          const image = new Image();
          image.src = source;
          await image.decode();
          decoded.push(image.naturalWidth);
        }
        return decoded;
      }, [link as string, '/favicon.ico']);
      for (const width of sizes) expect(width).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });
});
