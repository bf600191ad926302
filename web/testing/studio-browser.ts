/**
 * The studio in headless Chromium for the tests: a watched page (CSP
 * violations, console errors, uncaught exceptions) in a context signed in
 * as an account, through POST /auth/signin as the sign-in page does, and
 * the checks every studio page gets at both widths.
 */
import { mkdirSync } from 'node:fs';
import { expect } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { screenshot } from '../../server/testing/browser.ts';
import { signIn, type SignedIn } from '../../server/testing/sessions.ts';
import type { TestServer } from '../../server/testing/test-server.ts';
import { seriousAxeViolations, watchedPage, type WatchedPage } from './player-browser.ts';

export const STUDIO_SHOTS = '/tmp/shots-studio';

export interface StudioPage extends WatchedPage {
  signedIn: SignedIn;
  /** The server's address and a path below it. */
  at(path: string): string;
  /** Goes to a studio path and waits until the frame is drawn. */
  open(path: string): Promise<void>;
  /** Requests the page made to any origin but the server's own. */
  foreign: string[];
}

/** A page signed in as `email` (the account made if needed), not yet at any address. */
export async function studioPage(browser: Browser, server: TestServer, email: string): Promise<StudioPage> {
  const signedIn = await signIn(server, email);
  const watched = await watchedPage(browser);
  const origin = new URL(server.address).origin;
  const [name, value] = signedIn.cookie.split(/=(.*)/s);
  await watched.context.addCookies([{ name, value, url: origin, httpOnly: true, sameSite: 'Lax' }]);
  const foreign: string[] = [];
  watched.page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== origin) foreign.push(request.url());
  });
  const at = (path: string) => `${server.address}${path}`;
  return {
    ...watched,
    signedIn,
    at,
    foreign,
    async open(path: string) {
      await watched.page.goto(at(path));
      await watched.page.locator('#studio[data-state="ready"]').waitFor();
    },
  };
}

/** The page fits the viewport's width: nothing to scroll sideways. */
export const horizontalOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Resolves once the page has drawn two more frames: ResizeObserver callbacks and the layout they change are done. */
const nextFrame = (page: Page) => page.evaluate(() => new Promise<void>((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve()))));

/** At 1280 and 360 px: no sideways scroll and a screenshot to look at; then nothing serious for axe-core. */
export async function checkLayout(page: Page, name: string): Promise<void> {
  mkdirSync(STUDIO_SHOTS, { recursive: true });
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 800 });
    // What redraws to the new width on a ResizeObserver (the player's waveforms) does so before the next frame is drawn.
    await nextFrame(page);
    expect(await horizontalOverflow(page), `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0);
    await screenshot(page, { path: `${STUDIO_SHOTS}/${name}-${width}.png`, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  expect(await seriousAxeViolations(page), name).toEqual([]);
}
