/**
 * First audio after a click on Play, measured inside the page: from the
 * click (a capturing listener on window, which runs before the page's own
 * handler) to the first `playing` event of <audio id="audio">, and to the
 * first moment its currentTime is above 0 (checked every 4 ms: a
 * setInterval, at the clamp browsers apply to repeating timers), all with
 * performance.now(). Each run is a fresh page load in a browser context of
 * its own, so nothing is cached from one run to the next.
 */
import type { Browser } from 'playwright-core';

export interface FirstAudio {
  /** Milliseconds from the click to the first `playing` event. */
  playingMs: number;
  /** Milliseconds from the click to currentTime > 0. */
  advancingMs: number;
  /** What the element played (its currentSrc). */
  source: string;
}

const DEADLINE_MS = 30_000;

/**
 * Opens `url` in a new context, waits until the page is drawn
 * (main[data-state=ready]) and the network has been idle for 500 ms (so that
 * whatever either page preloads, it has), clicks the button "Play" and
 * waits until the audio advances.
 */
export async function firstAudio(browser: Browser, url: string): Promise<FirstAudio> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(DEADLINE_MS);
    await page.goto(url);
    await page.waitForSelector('main[data-state="ready"]');
    await page.waitForLoadState('networkidle');
    await page.evaluate(() => {
      const audio = document.getElementById('audio') as HTMLAudioElement;
      if (!audio.paused || audio.currentTime > 0) throw new Error('the audio element is playing before the click');
      const marks: { click?: number; playing?: number; advancing?: number } = {};
      (window as unknown as { firstAudioMarks: typeof marks }).firstAudioMarks = marks;
      window.addEventListener('click', () => (marks.click ??= performance.now()), { capture: true });
      audio.addEventListener('playing', () => (marks.playing ??= performance.now()));
      const poll = setInterval(() => {
        if (audio.currentTime > 0) {
          marks.advancing = performance.now();
          clearInterval(poll);
        }
      }, 1);
    });
    await page.getByRole('button', { name: 'Play', exact: true }).click();
    await page.waitForFunction(() => {
      const marks = (window as unknown as { firstAudioMarks: { playing?: number; advancing?: number } }).firstAudioMarks;
      return marks.playing !== undefined && marks.advancing !== undefined;
    });
    const marks = await page.evaluate(() => ({
      ...(window as unknown as { firstAudioMarks: { click: number; playing: number; advancing: number } }).firstAudioMarks,
      source: (document.getElementById('audio') as HTMLAudioElement).currentSrc,
    }));
    return { playingMs: marks.playing - marks.click, advancingMs: marks.advancing - marks.click, source: marks.source };
  } finally {
    await context.close();
  }
}
