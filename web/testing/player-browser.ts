/**
 * The player page in headless Chromium, for web/player-app.test.ts: pages
 * that record every CSP violation and console error, the page's states and
 * audio element as the DOM contract names them, axe-core, and waits that
 * end on a condition or a deadline, never on a fixed sleep.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Frame, Page } from 'playwright-core';

/**
 * How long the page may take to reach a state, start playing, or apply a change. Each wait ends at its event; this
 * bound is for a machine whose two cores the whole suite shares: a full-page screenshot of the player page once took
 * more than 15 s there (web/player-guest.test.ts, in a CI run).
 */
export const DEADLINE_MS = 30_000;

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** CSP violations (in every frame that `frames` names, the main one by default), console errors and uncaught exceptions so far. */
  problems(frames?: Frame[]): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The browser's own line for a response it was given with an error status.
 * The page asks for the view (and opens sessions) knowing it may be refused
 * (401 locked, 403 a wrong password, 404, 410 expired): those answers are
 * states the tests check themselves, so only they are let through, and only
 * for those API paths. Any other failed load is a problem.
 */
const EXPECTED_REFUSAL = /^Failed to load resource: the server responded with a status of (401|402|403|404|410)\b/;
const REFUSABLE_URL = /\/api\/v1\/players\/[^/]+\/(view|session|plays)(\?|$)|\/(p|embed)\/[^/?]+(\?|$)/;

/**
 * A page in a context of its own (so no session cookie leaks between
 * tests) that records every CSP violation (the `securitypolicyviolation`
 * event, listened for before any of the page's code runs, in every frame),
 * every console error and every uncaught exception.
 */
export async function watchedPage(browser: Browser, options: BrowserContextOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  page.setDefaultTimeout(DEADLINE_MS);
  const logged: string[] = [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const where = message.location().url;
    if (EXPECTED_REFUSAL.test(message.text()) && REFUSABLE_URL.test(where)) return;
    logged.push(`console: ${message.text()} (${where})`);
  });
  page.on('pageerror', (error) => logged.push(`exception: ${error.message}`));
  await context.addInitScript(() => {
    const seen: string[] = ((window as unknown as { __cspViolations: string[] }).__cspViolations = []);
    document.addEventListener('securitypolicyviolation', (event) =>
      seen.push(`csp: ${event.effectiveDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}`),
    );
  });
  return {
    page,
    context,
    async problems(frames = [page.mainFrame()]) {
      const violations: string[] = [];
      for (const frame of frames) {
        violations.push(...(await frame.evaluate(() => (window as unknown as { __cspViolations?: string[] }).__cspViolations ?? ['no CSP recorder in this frame'])));
      }
      return [...logged, ...violations];
    },
    close: () => context.close(),
  };
}

export type Scope = Page | Frame;

/** The state the page settled in (`main#app` data-state other than loading), and its data-lock. */
export async function settledState(scope: Scope): Promise<{ state: string | null; lock: string | null }> {
  const app = scope.locator('main#app[data-state]:not([data-state="loading"])');
  await app.waitFor({ state: 'attached', timeout: DEADLINE_MS });
  return { state: await app.getAttribute('data-state'), lock: await app.getAttribute('data-lock') };
}

/** Waits for the ready state; fails with the state the page settled in otherwise. */
export async function waitForReady(scope: Scope): Promise<void> {
  const settled = await settledState(scope);
  if (settled.state !== 'ready') throw new Error(`The page settled in ${JSON.stringify(settled)}, not ready`);
}

export interface AudioState {
  src: string;
  currentTime: number;
  duration: number;
  paused: boolean;
  seeking: boolean;
  readyState: number;
  trackId?: string;
  versionId?: string;
  quality?: string;
  error: number | null;
}

/** The page's one `<audio id="audio">`: what it plays and where. */
export function audioState(scope: Scope): Promise<AudioState> {
  return scope.locator('audio#audio').evaluate((audio: HTMLAudioElement) => ({
    src: audio.currentSrc || audio.getAttribute('src') || '',
    currentTime: audio.currentTime,
    duration: audio.duration,
    paused: audio.paused,
    seeking: audio.seeking,
    readyState: audio.readyState,
    trackId: audio.dataset.trackId,
    versionId: audio.dataset.versionId,
    quality: audio.dataset.quality,
    error: audio.error?.code ?? null,
  }));
}

/** The sources of every audio element on the page (with their <source> children): none of them may hold a URL while the page is locked. */
export function audioSources(scope: Scope): Promise<string[]> {
  return scope.evaluate(() =>
    [...document.querySelectorAll('audio')].flatMap((audio) =>
      [audio.currentSrc, audio.getAttribute('src') ?? '', ...[...audio.querySelectorAll('source')].map((source) => source.getAttribute('src') ?? '')].filter(Boolean),
    ),
  );
}

/**
 * Waits until `predicate(arg)` holds in the page (it finds the audio element
 * itself: Playwright serializes it, so it may use nothing from the test's
 * scope), polled every animation frame, and fails after the deadline saying
 * what the element was doing. A function, never a string: Playwright runs a
 * string through eval on every poll, which the page's CSP refuses.
 */
export async function waitForAudio<A>(scope: Scope, what: string, predicate: (arg: A) => boolean, arg: A): Promise<AudioState> {
  try {
    // Plain JSON arguments only (no handles), so Playwright's unboxing leaves `arg` as it is.
    await scope.waitForFunction(predicate as (arg: unknown) => boolean, arg as unknown, { timeout: DEADLINE_MS });
  } catch (error) {
    const state = await audioState(scope).catch(() => undefined);
    throw new Error(`The audio did not come to ${what} within ${DEADLINE_MS} ms: ${JSON.stringify(state)} (${(error as Error).message.split('\n')[0]})`);
  }
  return audioState(scope);
}

/** A condition on the page's audio element, for waitForAudio: self-contained, as it runs in the page. */
type AudioPredicate<A> = (arg: A) => boolean;
/** Playing, at or past `time` seconds. */
export const playingPast: AudioPredicate<number> = (time) => {
  const a = document.getElementById('audio') as HTMLAudioElement | null;
  return !!a && !a.paused && a.currentTime >= time;
};
/** Paused, no seek under way. */
export const pausedStill: AudioPredicate<null> = () => {
  const a = document.getElementById('audio') as HTMLAudioElement | null;
  return !!a && a.paused && !a.seeking;
};

/**
 * Polls `read` until `done` holds for its value or the deadline passes, and
 * returns the last value either way, for the test to assert on (so a
 * failure shows what the page had, not only that it timed out).
 */
export async function settle<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = DEADLINE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The transport region and its controls, by the names of the DOM contract. */
export function controls(scope: Scope) {
  const region = scope.getByRole('region', { name: 'Player controls' });
  return {
    region,
    play: region.getByRole('button', { name: 'Play', exact: true }),
    pause: region.getByRole('button', { name: 'Pause', exact: true }),
    seek: region.getByRole('slider', { name: 'Seek' }),
    versions: region.getByRole('radiogroup', { name: 'Version' }),
    loudnessMatch: region.getByRole('switch', { name: 'Loudness match' }),
  };
}

/** Clicks Play, and waits until the audio plays on: its currentTime advances by `by` seconds from where the click found it. */
export async function playAndAdvance(scope: Scope, by = 0.5): Promise<AudioState> {
  const before = await audioState(scope);
  await controls(scope).play.click();
  return waitForAudio(scope, `play on past ${before.currentTime + by} s`, playingPast, before.currentTime + by);
}

/** Clicks Pause, and waits until the element is paused with no seek under way. */
export async function pause(scope: Scope): Promise<AudioState> {
  await controls(scope).pause.click();
  return waitForAudio(scope, 'a pause', pausedStill, null);
}

/** The gain the page applies for loudness matching, in dB: `#loudness-gain` data-gain-db. */
export async function gainDb(scope: Scope): Promise<number> {
  const value = await scope.locator('output#loudness-gain').getAttribute('data-gain-db');
  return value === null ? Number.NaN : Number(value);
}

const AXE_SOURCE = readFile(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

/**
 * The serious and critical axe-core violations of the page's current state,
 * one line each. axe is evaluated through the CDP: the page's CSP allows no
 * inline script, and a script evaluated this way is not the page's.
 */
export async function seriousAxeViolations(scope: Scope): Promise<string[]> {
  await scope.evaluate(await AXE_SOURCE);
  return scope.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact?: string; help: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation) => `${violation.id} (${violation.impact}): ${violation.help}, at ${violation.nodes.map((node) => JSON.stringify(node.target)).join(', ')}`);
  });
}
