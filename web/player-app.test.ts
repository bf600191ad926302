/**
 * The listener's player page in headless Chromium, on real audio
 * made by ffmpeg and analysed by a real server on loopback, held to the DOM
 * contract of the page (web/player/*): it plays, its waveform seeks, its
 * versions switch at the same position, its loudness-match gain follows the
 * rule (shared/reference.md), a comment posted at the playhead stays there
 * across a reload, every locked state locks and the URLs the page had stop
 * working, axe-core finds nothing serious, it fits 360 px, and the embed
 * page plays in a frame on another origin. No state may log a CSP violation
 * or a console error. Every wait ends on an event or a condition with a
 * deadline, never on a fixed sleep.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestServer } from '../server/testing/harness.ts';
import { screenshot, useBrowser } from '../server/testing/browser.ts';
import {
  LISTENING_SERVER_ENV,
  OWNER,
  connectPaymentProvider,
  createPlayer,
  expectedGainDb,
  grantUrls,
  inviteUrlOf,
  listenerView,
  makeEdgeCaseProject,
  makeListeningProject,
  makeSmallProject,
  purchaserCookie,
  recordPurchase,
  removePurchase,
  updatePlayer,
  type FixtureTrack,
  type ListeningProject,
  type LoudnessOptions,
  type Player,
} from './testing/player-fixtures.ts';
import {
  audioSources,
  controls,
  gainDb,
  pause,
  playAndAdvance,
  playingPast,
  seriousAxeViolations,
  settle,
  settledState,
  waitForAudio,
  waitForReady,
  watchedPage,
  type Scope,
  type WatchedPage,
} from './testing/player-browser.ts';

/** A browser test does several page loads and waits: more than the default 30 s, well under the deadline of a hung one. */
const BROWSER_TEST_MS = 90_000;
/** The gain's tolerance ("equals the formula to within 0.1 dB"). */
const GAIN_TOLERANCE_DB = 0.1;

const trackItem = (scope: Scope, track: FixtureTrack) => scope.locator(`ol#tracks > li.track[data-track-id="${track.id}"]`);
/** The button with the track's name, which plays it. */
const trackButton = (scope: Scope, track: FixtureTrack) => trackItem(scope, track).getByRole('button', { name: track.name, exact: true });
const currentWaveform = (scope: Scope) => scope.locator('ol#tracks > li.track[aria-current="true"] .waveform');
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/**
 * The radio of a version, found by the start of its name, so that the A/B
 * and loudness checks measure switching whatever else the name holds; the
 * exact names of the contract are a test of their own.
 */
const versionRadio = (scope: Scope, name: string) => controls(scope).versions.getByRole('radio', { name: new RegExp(`^\\s*${escapeRegExp(name)}`) });
/** The accessible names of the radios of the Version radiogroup, as Chromium's accessibility tree has them. */
async function versionRadioNames(scope: Scope): Promise<string[]> {
  const snapshot = await controls(scope).versions.ariaSnapshot();
  return [...snapshot.matchAll(/^\s*- radio "((?:[^"\\]|\\.)*)"/gm)].map(([, name]) => JSON.parse(`"${name}"`) as string);
}
const downloadLinks = (scope: Scope) => scope.getByRole('link', { name: /^Download\b/ });

/** Paused within `tolerance` seconds of `time`, no seek under way. */
const pausedAt = ({ time, tolerance }: { time: number; tolerance: number }) => {
  const a = document.getElementById('audio') as HTMLAudioElement | null;
  return !!a && a.paused && !a.seeking && Math.abs(a.currentTime - time) <= tolerance;
};
/** The element has loaded this version's source (metadata at least) and no seek is under way. */
const loadedVersion = ({ versionId, playing }: { versionId: string; playing: boolean }) => {
  const a = document.getElementById('audio') as HTMLAudioElement | null;
  return !!a && a.dataset.versionId === versionId && a.readyState >= 1 && !a.seeking && a.paused === !playing;
};

/** Waits until the page applies `expected` dB (within the tolerance), and asserts it. */
async function expectGain(scope: Scope, expected: number, what: string) {
  const applied = await settle(() => gainDb(scope), (db) => Math.abs(db - expected) <= GAIN_TOLERANCE_DB);
  expect(Math.abs(applied - expected), `${what}: the page applies ${applied} dB, the rule gives ${expected.toFixed(3)} dB`).toBeLessThanOrEqual(GAIN_TOLERANCE_DB);
}

/** Clicks the track's button (which plays it) and waits until the audio element is on that track. */
async function playTrack(scope: Scope, track: FixtureTrack) {
  await trackButton(scope, track).click();
  await waitForAudio(scope, `track ${track.name}`, (id) => (document.getElementById('audio') as HTMLAudioElement | null)?.dataset.trackId === id, track.id);
}

/** Clicks the current track's waveform at `fraction` of its width (a tap on a touch screen). */
async function pointAtWaveform(scope: Scope, fraction: number, how: 'click' | 'tap' = 'click') {
  const waveform = currentWaveform(scope);
  await waveform.scrollIntoViewIfNeeded();
  const box = await waveform.boundingBox();
  if (!box) throw new Error('The current track has no visible .waveform');
  const position = { x: box.width * fraction, y: box.height / 2 };
  if (how === 'tap') await waveform.tap({ position });
  else await waveform.click({ position });
}

/** Which of these signed URLs the server does not refuse with a 4xx. */
async function notRefused(urls: string[]): Promise<Array<[string, number]>> {
  const answers = await Promise.all(
    urls.map(async (url) => {
      const response = await fetch(url);
      await response.arrayBuffer();
      return [url, response.status] as [string, number];
    }),
  );
  return answers.filter(([, status]) => status < 400 || status >= 500);
}

describe('the player page in Chromium: playing, seeking, versions, loudness matching and comments', { timeout: BROWSER_TEST_MS }, () => {
  const t = useTestServer('sqlite', LISTENING_SERVER_ENV);
  const chromium = useBrowser();
  let fixture: ListeningProject;
  /** Stacks, comments, downloads and loudness matching at the default target (−14 LUFS, no platform). */
  let player: Player;
  const youtubeOptions: LoudnessOptions = { loudnessPlatform: 'youtube' };
  let youtube: Player;
  const customTargetOptions: LoudnessOptions = { loudnessPlatform: 'spotify', targetLufs: -20 };
  let customTarget: Player;

  beforeAll(async () => {
    fixture = await makeListeningProject(t);
    const common = { projectid: fixture.projectid };
    player = await createPlayer(t, { ...common, name: 'Night Drive EP — mixes for review', options: { stacks: true, comments: true, downloads: true, loudnessMatch: true } });
    youtube = await createPlayer(t, { ...common, name: 'As on YouTube', options: { stacks: true, loudnessMatch: true, ...youtubeOptions } });
    customTarget = await createPlayer(t, { ...common, name: 'At −20 LUFS', options: { stacks: true, loudnessMatch: true, ...customTargetOptions } });
  }, 180_000);

  it('serves the page under a strict CSP with link previews, draws the player, and plays: currentTime advances and Play becomes Pause', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    const response = await page.goto(player.playerUrl!);
    expect(response!.status()).toBe(200);
    const csp = (await response!.allHeaders())['content-security-policy'] ?? '';
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    const served = await response!.text();
    // No inline script, no style element or attribute: the page is static files under its CSP.
    expect(served).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=/i);
    // Link previews, server-rendered in the head: the player's name, and the artwork.
    expect(served).toMatch(/<meta[^>]+property="og:title"/);
    expect(served).toMatch(/<meta[^>]+name="twitter:card"/);
    expect(served).toMatch(/<meta[^>]+property="og:image"/);
    expect(await page.locator('head meta[property="og:title"]').getAttribute('content')).toContain(player.name);

    await waitForReady(page);
    expect(await page.locator('h1').textContent()).toBe(player.name);
    expect(await page.locator('img').evaluateAll((images: HTMLImageElement[]) => images.some((image) => image.complete && image.naturalWidth === 1))).toBe(true);
    const tracks = [fixture.nightDrive, fixture.quiet, fixture.loud, fixture.peaky];
    expect(await page.locator('ol#tracks > li.track').evaluateAll((items) => items.map((item) => item.getAttribute('data-track-id')))).toEqual(tracks.map((track) => track.id));
    expect(await trackItem(page, fixture.nightDrive).getAttribute('aria-current')).toBe('true');
    for (const track of tracks) {
      expect(await trackButton(page, track).count(), track.name).toBe(1);
      expect(await trackItem(page, track).locator('.waveform').count(), track.name).toBe(1);
      expect(await trackItem(page, track).getByRole('link', { name: `Download ${track.name}`, exact: true }).count(), track.name).toBe(1);
    }
    expect(await page.locator('audio').count()).toBe(1);
    expect(await page.content()).not.toContain('producer.private.name');

    const playing = await playAndAdvance(page, 1);
    expect(playing).toMatchObject({ trackId: fixture.nightDrive.id, versionId: fixture.nightDrive.versions[0].id, error: null });
    expect(playing.duration).toBeCloseTo(fixture.nightDrive.versions[0].duration, 1);
    await controls(page).pause.waitFor();
    expect(await controls(page).play.count()).toBe(0);
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('seeks to the middle (within 1 % of the duration) when the waveform is clicked at 50 % of its width', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    await playAndAdvance(page, 0.3);
    await pause(page);
    const duration = fixture.nightDrive.versions[0].duration;
    await pointAtWaveform(page, 0.5);
    const seeked = await waitForAudio(page, `the middle, ${duration / 2} s`, pausedAt, { time: duration / 2, tolerance: 0.01 * duration });
    expect(Math.abs(seeked.currentTime - duration / 2)).toBeLessThanOrEqual(0.01 * duration);
    // The Seek slider follows, in seconds.
    const slider = await settle(async () => Number(await controls(page).seek.inputValue()), (value) => Math.abs(value - seeked.currentTime) <= 0.5);
    expect(Math.abs(slider - seeked.currentTime)).toBeLessThanOrEqual(0.5);
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('names each version radio by its version name (one radio per version, only for a track of several)', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    expect((await versionRadioNames(page)).sort()).toEqual(fixture.nightDrive.versions.map((version) => version.versionName!).sort());
    // A track of one version has no Version radiogroup.
    await playTrack(page, fixture.quiet);
    await settle(() => controls(page).versions.count(), (count) => count === 0);
    expect(await controls(page).versions.count()).toBe(0);
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('switches versions in one click at the same position: within 0.1 s paused, and playing on from where it was', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    const [newer, older] = fixture.nightDrive.versions;
    expect(await controls(page).versions.getByRole('radio').count()).toBe(2);
    expect(await versionRadio(page, newer.versionName!).isChecked()).toBe(true);

    await playAndAdvance(page, 0.3);
    await pause(page);
    await controls(page).seek.fill('8');
    const before = await waitForAudio(page, 'a pause at 8 s', pausedAt, { time: 8, tolerance: 0.05 });
    expect(before.versionId).toBe(newer.id);
    await versionRadio(page, older.versionName!).click();
    const switched = await waitForAudio(page, `version ${older.versionName}, paused`, loadedVersion, { versionId: older.id, playing: false });
    expect(Math.abs(switched.currentTime - before.currentTime), `from ${before.currentTime} s to ${switched.currentTime} s`).toBeLessThanOrEqual(0.1);
    expect(switched.src).not.toBe(before.src);
    expect(await versionRadio(page, older.versionName!).isChecked()).toBe(true);

    // A/B while playing: the other version takes over from the position it was at, and plays on.
    const playing = await playAndAdvance(page, 0.3);
    const clicked = Date.now();
    await versionRadio(page, newer.versionName!).click();
    const back = await waitForAudio(page, `version ${newer.versionName}, playing`, loadedVersion, { versionId: newer.id, playing: true });
    const elapsed = (Date.now() - clicked) / 1000;
    expect(back.currentTime, `switched at about ${playing.currentTime} s`).toBeGreaterThanOrEqual(playing.currentTime - 0.1);
    expect(back.currentTime, `switched at about ${playing.currentTime} s, ${elapsed} s ago`).toBeLessThanOrEqual(playing.currentTime + elapsed + 0.1);
    await waitForAudio(page, 'playing on after the switch', playingPast, back.currentTime + 0.3);
    await controls(page).pause.waitFor();
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('applies the rule\'s loudness-match gain (within 0.1 dB) to a quiet, a loud and a true-peak-capped track and to each version, and the switch turns it off', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    const atDefault: LoudnessOptions = {};
    for (const track of [fixture.quiet, fixture.loud, fixture.peaky, fixture.nightDrive]) {
      await playTrack(page, track);
      await expectGain(page, expectedGainDb(atDefault, track.versions[0].loudness), track.name);
    }
    // The peaky track is the capped case: its boost stops where its true peak reaches −1 dBTP.
    const peaky = fixture.peaky.versions[0].loudness;
    expect(expectedGainDb(atDefault, peaky)).toBeCloseTo(-1 - peaky.truePeakDbtp, 5);
    const older = fixture.nightDrive.versions[1];
    await versionRadio(page, older.versionName!).click();
    await expectGain(page, expectedGainDb(atDefault, older.loudness), `${fixture.nightDrive.name}, ${older.versionName}`);

    const toggle = controls(page).loudnessMatch;
    expect(await toggle.isChecked()).toBe(true);
    await toggle.click();
    expect(await toggle.isChecked()).toBe(false);
    await expectGain(page, 0, 'with loudness match off');
    await toggle.click();
    await expectGain(page, expectedGainDb(atDefault, older.loudness), 'with loudness match on again');
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('takes the target from the platform (YouTube only turns down) and from targetLufs over the platform', async () => {
    for (const [on, options] of [
      [youtube, youtubeOptions],
      [customTarget, customTargetOptions],
    ] as const) {
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      await page.goto(on.playerUrl!);
      await waitForReady(page);
      for (const track of [fixture.quiet, fixture.loud]) {
        await playTrack(page, track);
        await expectGain(page, expectedGainDb(options, track.versions[0].loudness), `${on.name}: ${track.name}`);
      }
      expect(await watched.problems()).toEqual([]);
      await watched.close();
    }
    // What these cases stand for: YouTube leaves the quiet track alone; −20 LUFS boosts it less than −14 would.
    expect(expectedGainDb(youtubeOptions, fixture.quiet.versions[0].loudness)).toBe(0);
    expect(expectedGainDb(customTargetOptions, fixture.quiet.versions[0].loudness)).toBeCloseTo(-20 - fixture.quiet.versions[0].loudness.integratedLufs, 5);
  });

  it('posts a comment at the playhead, lists it at that time after a reload, and seeks there from its time', async () => {
    const message = 'The kick drum drops out here.';
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    await playAndAdvance(page, 0.3);
    await pause(page);
    await controls(page).seek.fill('6.5');
    const playhead = await waitForAudio(page, 'a pause at 6.5 s', pausedAt, { time: 6.5, tolerance: 0.05 });

    const comments = page.locator('section#comments');
    const yourName = comments.getByRole('textbox', { name: 'Your name' });
    if (await yourName.count()) await yourName.fill('Sam Listener');
    await comments.getByRole('textbox', { name: 'Comment' }).fill(message);
    await comments.getByRole('button', { name: 'Post comment' }).click();
    await comments.locator('li.comment', { hasText: message }).waitFor();

    await page.reload();
    await waitForReady(page);
    const listed = page.locator('section#comments li.comment', { hasText: message });
    await listed.waitFor();
    const time = Number(await listed.getAttribute('data-time'));
    expect(Math.abs(time - playhead.currentTime), `listed at ${time} s, posted at ${playhead.currentTime} s`).toBeLessThanOrEqual(0.1);

    // The API has it on the version that played, at that time, under the listener's name.
    const { api } = await t.as(OWNER);
    const { data: onVersion } = await api.GET('/projects/{projectid}/files/{fileid}/comments', {
      params: { path: { projectid: fixture.projectid, fileid: playhead.versionId! } },
    });
    const stored = onVersion!.find((comment) => comment.message === message)!;
    expect(stored).toMatchObject({ id: await listed.getAttribute('data-comment-id'), creator: { kind: 'listener' } });
    expect(Math.abs(stored.audioTimestamp! - playhead.currentTime)).toBeLessThanOrEqual(0.1);

    // Its time is a button that seeks there: from near the start, back to the comment.
    await playAndAdvance(page, 0.2);
    const away = await pause(page);
    expect(Math.abs(away.currentTime - time)).toBeGreaterThan(1);
    await listed.getByRole('button', { name: /\d+:\d{2}/ }).first().click();
    await waitForAudio(page, `the comment's time, ${time} s`, pausedAt, { time, tolerance: 0.1 });
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('has no serious or critical axe-core violation when ready, with comments on', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    await page.locator('section#comments').waitFor();
    expect(await watched.problems()).toEqual([]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await watched.close();
  });

  it('holds its layout on a 360 px phone (no horizontal scroll), and a tap on the waveform seeks', async () => {
    const watched = await watchedPage(chromium.browser, { viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    await page.locator('section#comments').waitFor();
    const widths = await page.evaluate(() => ({ document: document.documentElement.scrollWidth, body: document.body.scrollWidth, viewport: window.innerWidth }));
    expect(widths.viewport).toBe(360);
    expect(widths.document, JSON.stringify(widths)).toBeLessThanOrEqual(360);
    expect(widths.body, JSON.stringify(widths)).toBeLessThanOrEqual(360);

    await controls(page).play.tap();
    await waitForAudio(page, 'playing', playingPast, 0.3);
    await controls(page).pause.tap();
    await waitForAudio(page, 'a pause', ({ time }) => {
      const a = document.getElementById('audio') as HTMLAudioElement | null;
      return !!a && a.paused && a.currentTime >= time;
    }, { time: 0.3 });
    const duration = fixture.nightDrive.versions[0].duration;
    await pointAtWaveform(page, 0.25, 'tap');
    const tapped = await waitForAudio(page, `a quarter in, ${duration / 4} s`, pausedAt, { time: duration / 4, tolerance: 0.01 * duration });
    expect(Math.abs(tapped.currentTime - duration / 4)).toBeLessThanOrEqual(0.01 * duration);
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });
});

describe('locked players in Chromium: each lock locks, and the URLs the page had stop working', { timeout: BROWSER_TEST_MS }, () => {
  const t = useTestServer('sqlite', LISTENING_SERVER_ENV);
  const chromium = useBrowser();
  let projectid: string;
  let track: FixtureTrack;

  beforeAll(async () => {
    ({ projectid, track } = await makeSmallProject(t));
    await connectPaymentProvider(t);
  }, 120_000);

  /** An open player, and every signed URL its view gives an anonymous listener. */
  async function openPlayerAndItsUrls(name: string, body: Partial<Parameters<typeof createPlayer>[1]> = {}) {
    const made = await createPlayer(t, { name, projectid, options: { downloads: true, comments: true }, ...body });
    const urls = grantUrls(await listenerView(t, made.id));
    expect(urls.length, 'the open player gives stream, peaks and download URLs').toBeGreaterThanOrEqual(4);
    return { player: made, urls };
  }

  /**
   * The page is locked as `lock` says, holds no audio source, no Download
   * link and no URL of a player grant; it logged no problem and axe finds
   * nothing serious.
   */
  async function expectLocked(watched: WatchedPage, lock: string) {
    const { page } = watched;
    expect(await settledState(page)).toEqual({ state: 'locked', lock });
    expect(await audioSources(page)).toEqual([]);
    expect(await downloadLinks(page).count()).toBe(0);
    expect(await page.content()).not.toMatch(/[?&]grant=(stream|download)/);
    expect(await watched.problems()).toEqual([]);
    expect(await seriousAxeViolations(page)).toEqual([]);
  }

  it('paywall (allow-access): locks until paid, opens with a purchase on record, and locks again without it', async () => {
    const { player, urls } = await openPlayerAndItsUrls('Pay to listen');
    await updatePlayer(t, player.id, { payment: { price: 499, fulfillment: 'allow-access', recipient: 'customer' } });
    const watched = await watchedPage(chromium.browser);
    const { page, context } = watched;
    await page.goto(player.playerUrl!);
    await expectLocked(watched, 'paywall');
    expect(await notRefused(urls)).toEqual([]);

    await recordPurchase(t, player.id, 'pur_pagetest01');
    const cookie = purchaserCookie(t, player.id, 'pur_pagetest01');
    await context.addCookies([cookie.browser]);
    await page.reload();
    await waitForReady(page);
    expect(await downloadLinks(page).count()).toBe(1);
    const playing = await playAndAdvance(page, 0.3);
    expect(playing.trackId).toBe(track.id);
    const paidUrls = grantUrls(await listenerView(t, player.id, cookie.header));
    expect(paidUrls.every((url) => new URL(url).searchParams.get('purchase') === 'pur_pagetest01')).toBe(true);
    expect(await watched.problems()).toEqual([]);

    await removePurchase(t, 'pur_pagetest01');
    await page.reload();
    await expectLocked(watched, 'paywall');
    expect(await notRefused([...paidUrls, playing.src])).toEqual([]);
    await watched.close();
  });

  it('paywall (allow-download): plays, but shows no Download link and holds no download URL before anyone pays', async () => {
    const player = await createPlayer(t, { name: 'Pay to download', projectid, options: { downloads: true }, payment: { price: 299, fulfillment: 'allow-download', recipient: 'customer' } });
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await settledState(page);
    expect(await downloadLinks(page).count()).toBe(0);
    expect(await page.content()).not.toMatch(/[?&]grant=download/);
    const playing = await playAndAdvance(page, 0.3);
    expect(playing.trackId).toBe(track.id);
    expect(await watched.problems()).toEqual([]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await watched.close();
  });

  it('password: locks with a form, says a wrong password is wrong, and opens with the right one', async () => {
    const { player, urls } = await openPlayerAndItsUrls('Behind a password');
    await updatePlayer(t, player.id, { password: 'night-drive-2026' });
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    await page.goto(player.playerUrl!);
    await expectLocked(watched, 'password');
    expect(await notRefused(urls)).toEqual([]);
    // Said once, in the heading; the paragraph says what to do.
    expect(await page.getByText(/has a password/).count()).toBe(1);
    await page.getByText('Type the password its owner gave you to listen.').waitFor();

    const password = page.getByRole('textbox', { name: 'Password' });
    const open = page.getByRole('button', { name: 'Open', exact: true });
    await password.fill('night-drive-2025');
    await open.click();
    const alert = page.getByRole('alert');
    await alert.filter({ hasText: /\S/ }).first().waitFor();
    expect(await settledState(page)).toEqual({ state: 'locked', lock: 'password' });
    expect(await audioSources(page)).toEqual([]);

    await password.fill('night-drive-2026');
    await open.click();
    await page.locator('main#app[data-state="ready"]').waitFor();
    expect(await downloadLinks(page).count()).toBe(1);
    expect((await playAndAdvance(page, 0.3)).trackId).toBe(track.id);
    expect(await watched.problems()).toEqual([]);
    await watched.close();
  });

  it('expired: locks as expired', async () => {
    const { player, urls } = await openPlayerAndItsUrls('Expired link');
    await updatePlayer(t, player.id, { expires: t.server.clock.now() - 1 });
    const watched = await watchedPage(chromium.browser);
    await watched.page.goto(player.playerUrl!);
    await expectLocked(watched, 'expired');
    expect(await notRefused(urls)).toEqual([]);
    await watched.close();
  });

  it('collaborators only: locks for anyone else, and an invite link opens a session and leaves the address', async () => {
    const email = 'label.person@studio.test';
    const { player, urls } = await openPlayerAndItsUrls('For the label', { collaborators: [{ email, role: 'viewer' }] });
    await updatePlayer(t, player.id, { public: false });
    const stranger = await watchedPage(chromium.browser);
    await stranger.page.goto(player.playerUrl!);
    await expectLocked(stranger, 'collaborators');
    expect(await notRefused(urls)).toEqual([]);
    await stranger.close();

    const invite = await inviteUrlOf(t, player.id, email);
    expect(new URL(invite).searchParams.get('invite')).toBeTruthy();
    const invited = await watchedPage(chromium.browser);
    const { page } = invited;
    await page.goto(invite);
    await waitForReady(page);
    expect(new URL(page.url()).searchParams.has('invite')).toBe(false);
    expect(new URL(page.url()).pathname).toBe(new URL(player.playerUrl!).pathname);
    expect((await playAndAdvance(page, 0.3)).trackId).toBe(track.id);
    // The session, not the spent link, opens it from now on.
    await page.reload();
    await waitForReady(page);
    expect(await invited.problems()).toEqual([]);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await invited.close();
  });

  it('not found: an unknown player locks as not-found', async () => {
    const watched = await watchedPage(chromium.browser);
    await watched.page.goto(`${t.server.address}/p/ply_doesnotexist`);
    await expectLocked(watched, 'not-found');
    await watched.close();
  });
});

describe('the embed page in Chromium', { timeout: BROWSER_TEST_MS }, () => {
  const t = useTestServer('sqlite', LISTENING_SERVER_ENV);
  const chromium = useBrowser();
  let player: Player;
  let track: FixtureTrack;

  beforeAll(async () => {
    const small = await makeSmallProject(t, 'Embedded');
    track = small.track;
    player = await createPlayer(t, { name: 'On the band\'s site', projectid: small.projectid });
  }, 120_000);

  it('answers /embed/{playerid} without X-Frame-Options and with a frame-ancestors that lets other sites frame it', async () => {
    const response = await fetch(`${t.server.address}/embed/${player.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('x-frame-options')).toBeNull();
    const directives = new Map(
      (response.headers.get('content-security-policy') ?? '')
        .split(';')
        .map((directive) => directive.trim().split(/\s+/))
        .filter(([name]) => name)
        .map(([name, ...sources]) => [name.toLowerCase(), sources] as const),
    );
    const ancestors = directives.get('frame-ancestors');
    expect(ancestors, 'a frame-ancestors directive').toBeDefined();
    expect(ancestors).not.toContain("'none'");
    expect(ancestors!.some((source) => source === '*' || /^https?:$/.test(source)), `frame-ancestors ${ancestors!.join(' ')}`).toBe(true);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    await response.text();
  });

  it('plays inside an iframe on another origin', async () => {
    const embedUrl = `${t.server.address}/embed/${player.id}`;
    // Another site on loopback (localhost, where the player is on 127.0.0.1), so that Chromium's
    // Private Network Access rules, which would stop a public site's frame, play no part.
    const host = createServer((_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<!doctype html><title>The band</title><h1>The band</h1><iframe src="${embedUrl}" title="Player" width="600" height="400"></iframe>`),
    );
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    try {
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      await page.goto(`http://localhost:${(host.address() as AddressInfo).port}/`);
      const frame = await settle(
        async () => page.frames().find((candidate) => candidate.url().startsWith(embedUrl)),
        (found) => found !== undefined,
      );
      if (!frame) throw new Error(`No frame of ${embedUrl}: ${page.frames().map((candidate) => candidate.url()).join(', ')}`);
      await waitForReady(frame);
      const playing = await playAndAdvance(frame, 0.5);
      expect(playing).toMatchObject({ trackId: track.id, error: null });
      await controls(frame).pause.waitFor();
      expect(await watched.problems([page.mainFrame(), frame])).toEqual([]);
      expect(await seriousAxeViolations(frame)).toEqual([]);
      await watched.close();
    } finally {
      await new Promise((resolve) => host.close(resolve));
    }
  });
});

describe('the player page in Chromium: waveforms at the edges', { timeout: BROWSER_TEST_MS }, () => {
  const t = useTestServer('sqlite', LISTENING_SERVER_ENV);
  const chromium = useBrowser();

  it('draws a one-second track and tracks at 8, 96 and 192 kHz across the whole width, with no error, at 1280 and 360 px', async () => {
    const { projectid, tracks } = await makeEdgeCaseProject(t);
    const player = await createPlayer(t, { projectid, name: 'Edge cases' });
    for (const width of [1280, 360]) {
      const watched = await watchedPage(chromium.browser, { viewport: { width, height: 900 } });
      const { page } = watched;
      await page.goto(player.playerUrl!);
      await waitForReady(page);
      for (const track of tracks) {
        const waveform = trackItem(page, track).locator('.waveform');
        // Peaks draws into canvases of its own inside the container; the wave's right end is near the container's.
        await waveform.locator('canvas').first().waitFor();
        const drawnTo = await settle(
          () => waveform.evaluate((element) => {
            // The furthest column any of Peaks' layers drew into, as a fraction of the width.
            let furthest = 0;
            for (const canvas of element.querySelectorAll('canvas')) {
              const context = canvas.width > 0 && canvas.height > 0 ? canvas.getContext('2d') : null;
              if (!context) continue;
              const { data, width: pixels, height } = context.getImageData(0, 0, canvas.width, canvas.height);
              for (let x = pixels - 1; x >= 0 && (x + 1) / pixels > furthest; x--) {
                let drawn = false;
                for (let y = 0; y < height && !drawn; y++) drawn = data[(y * pixels + x) * 4 + 3] > 0;
                if (drawn) furthest = (x + 1) / pixels;
              }
            }
            return furthest;
          }),
          (fraction) => fraction > 0.9,
        );
        expect(drawnTo, `${track.name} at ${width} px: the wave reaches ${Math.round(drawnTo * 100)} % of the width`).toBeGreaterThan(0.9);
      }
      await screenshot(page, { path: `/tmp/player-edge-cases-${width}.png`, fullPage: true });
      expect(await watched.problems()).toEqual([]);
      await watched.close();
    }
  });
});
