/**
 * First audio after a click on Play, measured inside the page: from the
 * click (a capturing listener on window, which runs before the page's own
 * handler) to the first `playing` event of <audio id="audio">, and to the
 * first moment its currentTime is above 0 (checked every 4 ms: a
 * setInterval, at the clamp browsers apply to repeating timers), all with
 * performance.now(); and, from the currentTime first seen, when playback
 * actually began. Each run is a fresh page load in a browser context of
 * its own, so nothing is cached from one run to the next.
 */
import type { Browser } from 'playwright-core';

export interface FirstAudio {
  /** Milliseconds from the click to the first `playing` event. */
  playingMs: number;
  /** Milliseconds from the click to currentTime > 0. */
  advancingMs: number;
  /**
   * When playback began, estimated: the moment currentTime was seen above 0
   * less the currentTime seen. The check runs on the page's main thread, so
   * whatever the page does there as playback starts delays the sighting, not
   * the sound; this estimate takes that delay out.
   */
  startedMs: number;
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
      const marks: { click?: number; playing?: number; advancing?: number; advancedBy?: number } = {};
      (window as unknown as { firstAudioMarks: typeof marks }).firstAudioMarks = marks;
      window.addEventListener('click', () => (marks.click ??= performance.now()), { capture: true });
      audio.addEventListener('playing', () => (marks.playing ??= performance.now()));
      const poll = setInterval(() => {
        if (audio.currentTime > 0) {
          marks.advancing = performance.now();
          marks.advancedBy = audio.currentTime * 1000;
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
      ...(window as unknown as { firstAudioMarks: { click: number; playing: number; advancing: number; advancedBy: number } }).firstAudioMarks,
      source: (document.getElementById('audio') as HTMLAudioElement).currentSrc,
    }));
    return {
      playingMs: marks.playing - marks.click,
      advancingMs: marks.advancing - marks.click,
      startedMs: marks.advancing - marks.advancedBy - marks.click,
      source: marks.source,
    };
  } finally {
    await context.close();
  }
}
