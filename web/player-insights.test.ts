/**
 * The player page reports listening (web/player/listening.ts), in headless
 * Chromium on a real track made by ffmpeg: a play shows in the player's
 * insights once 3 s were heard, a pause reports how far it got, and leaving
 * the page sends what was heard since (fetch keepalive). Every wait ends on
 * an event or a condition with a deadline.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../generated/client.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { LISTENING_SERVER_ENV, OWNER, createPlayer, makeSmallProject, type FixtureTrack, type Player } from './testing/player-fixtures.ts';
import { pause, playAndAdvance, settle, waitForAudio, waitForReady, watchedPage, playingPast } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;

describe('the player page reports listening for the insights', { timeout: BROWSER_TEST_MS }, () => {
  const t = useTestServer('sqlite', LISTENING_SERVER_ENV);
  const chromium = useBrowser();
  let track: FixtureTrack;
  let player: Player;

  const insights = async () => {
    const { token } = await t.as(OWNER);
    const response = await t.fetch(`/players/${player.id}/insights`, { token });
    expect(response.status).toBe(200);
    return (await response.json()) as Schemas['PlayerInsights'];
  };

  beforeAll(async () => {
    const project = await makeSmallProject(t, 'Insights');
    track = project.track;
    player = await createPlayer(t, { projectid: project.projectid, name: 'Insights', public: true });
  }, 120_000);

  it('reports a play once 3 s are heard, its position on pause, and what was heard since when the page goes away', async () => {
    const watched = await watchedPage(chromium.browser);
    const { page } = watched;
    const reports: Array<{ status: number; body: Schemas['RecordPlayRequest'] }> = [];
    page.on('requestfinished', async (request) => {
      if (!request.url().endsWith(`/players/${player.id}/plays`)) return;
      reports.push({ status: (await request.response())!.status(), body: request.postDataJSON() });
    });
    await page.goto(player.playerUrl!);
    await waitForReady(page);
    expect((await insights()).totals.plays).toBe(0);

    // Nothing goes out before 3 s are heard.
    await playAndAdvance(page, 2);
    expect(reports).toEqual([]);
    const first = page.waitForResponse((response) => response.url().endsWith('/plays') && response.request().method() === 'POST');
    await waitForAudio(page, 'past 3.2 s', playingPast, 3.2);
    expect((await first).status()).toBe(200);
    const paused = await pause(page);
    const counted = await settle(insights, (seen) => seen.tracks[0]?.listeners[0]?.farthest >= paused.currentTime - 0.05);
    expect(counted.totals).toMatchObject({ plays: 1, listeners: 1 });
    const version = track.versions[0];
    expect(counted.tracks[0]).toMatchObject({ fileid: version.id, plays: 1 });
    expect(counted.tracks[0].listeners[0]).toMatchObject({ name: 'Anonymous', anonymous: true, plays: 1 });
    expect(counted.tracks[0].listeners[0].farthest).toBeCloseTo(paused.currentTime, 1);
    expect(counted.tracks[0].listeners[0].fraction).toBeCloseTo(paused.currentTime / version.duration, 2);

    // Resumed, it is the same play; leaving the page mid-play sends the rest, with keepalive.
    const resumed = await playAndAdvance(page, 1.5);
    expect(await watched.problems()).toEqual([]);
    await page.close({ runBeforeUnload: true });
    // The page reports positions in hundredths of a second (web/player/listening.ts), rounded to the nearest: at the
    // track's very end, where the position stops, the report may be up to 5 ms short of the element's time.
    const reached = resumed.currentTime - 0.005;
    const left = await settle(insights, (seen) => seen.tracks[0]?.listeners[0]?.farthest >= reached);
    expect(left.totals.plays).toBe(1);
    expect(left.tracks[0].listeners[0].farthest).toBeGreaterThanOrEqual(reached);
    const ids = new Set(reports.map((report) => report.body.playid));
    expect(ids.size).toBe(1);
    expect(reports.every((report) => report.status === 200 && report.body.fileid === version.id && report.body.heard >= 3)).toBe(true);
    await watched.close();
  });
});
