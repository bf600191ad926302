/** Headless Chromium (Debian's) driven by playwright-core, with the flags this machine needs. */
import { afterAll, beforeAll } from 'vitest';
import { chromium, errors, type Browser, type Page, type PageScreenshotOptions } from 'playwright-core';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--autoplay-policy=no-user-gesture-required'],
  });
}

/** Per-describe setup: one Chromium for the describe's tests, closed after them. */
export function useBrowser(): { readonly browser: Browser } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser() {
      if (!browser) throw new Error('Chromium has not started yet');
      return browser;
    },
  };
}

/** What one capture may take: about 100 ms on a quiet machine, a few seconds on a loaded one. */
const SHOT_MS = 20_000;

/**
 * A screenshot for a person to look at; the tests assert nothing on its pixels. The page is brought to the front
 * first: Chromium captures only from a frame its compositor commits, and a page behind another window may not commit
 * one (playwright#20434). Captures that take about 100 ms here hung in CI runs (45 s, then twice 20 s, on the player
 * page after a download), so a capture that times out is tried once more, and a second timeout fails the test with
 * what the page still does.
 */
export async function screenshot(page: Page, options: PageScreenshotOptions & { path: string }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.bringToFront();
    try {
      await page.screenshot({ timeout: SHOT_MS, ...options });
      return;
    } catch (error) {
      if (!(error instanceof errors.TimeoutError)) throw error;
      if (attempt === 2) throw new Error(`${(error as Error).message.split('\n')[0]}, twice; ${await pageHealth(page)}`, { cause: error });
    }
  }
}

/** Whether the page still runs script, for the message of a capture that hung: a hung renderer, or a stuck capture. */
async function pageHealth(page: Page): Promise<string> {
  const answered = await Promise.race([
    page.evaluate(() => `${document.readyState}, ${document.documentElement.scrollWidth}×${document.documentElement.scrollHeight} px`).catch((error: Error) => `an error: ${error.message}`),
    new Promise<undefined>((resolve) => void setTimeout(resolve, 5_000)),
  ]);
  return `the page at ${page.url()} (${page.frames().length} frame(s)) ${answered ? `answered script with ${answered}` : 'did not answer script within 5 s'}`;
}
