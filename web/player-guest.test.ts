/**
 * Listeners cannot pose as members on the player page, in headless
 * Chromium on both stores: a listener's comment shows the visible word
 * "Guest" beside the name they typed, whatever it is ("Project member", a
 * member's own name, markup), and a member's comment does not. The names
 * are text, never markup. axe-core finds nothing serious, and the list
 * holds at 1280 and 360 px (screenshots in /tmp).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { json, useTestServer } from '../server/testing/harness.ts';
import type { Page } from 'playwright-core';
import { screenshot, useBrowser } from '../server/testing/browser.ts';
import { LISTENING_SERVER_ENV, OWNER, createPlayer, makeSmallProject, type FixtureTrack, type Player } from './testing/player-fixtures.ts';
import { seriousAxeViolations, waitForReady, watchedPage } from './testing/player-browser.ts';

/** A browser test loads pages and waits on them: more than the default 30 s, well under the deadline of a hung one. */
const BROWSER_TEST_MS = 90_000;
const MARKUP = '<img src=x onerror="document.title=1">Mia';

describe.each(backends)('guests on the player page on %s', (backend) => {
  const t = useTestServer(backend, LISTENING_SERVER_ENV);
  const chromium = useBrowser();
  let player: Player;
  let track: FixtureTrack;
  const posted: Record<string, string> = {};

  /** Posts a comment as a listener whose session has this name, as the page would. */
  async function asListener(name: string, message: string, audioTimestamp: number) {
    const origin = new URL(t.server.ctx.config.publicUrl).origin;
    const opened = await t.fetch(`/players/${player.id}/session`, { ...json({ name }), headers: { 'Content-Type': 'application/json', Origin: origin } });
    expect(opened.status, await opened.clone().text()).toBe(200);
    const cookie = opened.headers.getSetCookie()[0].split(';')[0];
    const response = await t.fetch(`/players/${player.id}/files/${track.versions[0].id}/comments`, {
      ...json({ message, audioTimestamp }),
      headers: { 'Content-Type': 'application/json', Origin: origin, Cookie: cookie },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { id: string }).id;
  }

  beforeAll(async () => {
    let projectid: string;
    ({ projectid, track } = await makeSmallProject(t, 'Guest list'));
    player = await createPlayer(t, { name: 'Demo review', projectid, public: true, options: { comments: true } });
    const { api } = await t.as(OWNER);
    // The owner, with no display name: "Project member".
    const { data: member } = await api.POST('/projects/{projectid}/files/{fileid}/comments', {
      params: { path: { projectid, fileid: track.versions[0].id } },
      body: { message: 'From the owner: final master on Friday.', audioTimestamp: 1 },
    });
    posted.member = member!.id;
    posted.impostor = await asListener('Project member', 'From a listener who calls themselves a member.', 2);
    posted.markup = await asListener(MARKUP, 'A name with markup in it.', 3);
  }, 120_000);

  /** The head of one comment of the list: its author's name and the badges beside it. */
  const headOf = (page: Page, id: string) => page.locator(`section#comments li.comment[data-comment-id="${id}"] > .comment-head`);

  for (const [width, height] of [[1280, 800], [360, 740]] as const) {
    it(`shows "Guest" beside every listener's name and never beside a member's, at ${width} px`, async () => {
      const watched = await watchedPage(chromium.browser, width < 400 ? { viewport: { width, height }, isMobile: true, hasTouch: true } : { viewport: { width, height } });
      const { page } = watched;
      await page.goto(player.playerUrl!);
      await waitForReady(page);
      await headOf(page, posted.markup).waitFor();

      // The member: their fallback name, and no Guest.
      const member = headOf(page, posted.member);
      await expect(member.locator('strong').textContent()).resolves.toBe('Project member');
      expect(await member.getByText('Guest', { exact: true }).count()).toBe(0);
      // The listener who typed "Project member": the same name, and Guest, visibly, beside it.
      const impostor = headOf(page, posted.impostor);
      await expect(impostor.locator('strong').textContent()).resolves.toBe('Project member');
      const guest = impostor.getByText('Guest', { exact: true });
      expect(await guest.isVisible()).toBe(true);
      const [nameBox, guestBox] = [await impostor.locator('strong').boundingBox(), await guest.boundingBox()];
      expect(guestBox!.width).toBeGreaterThan(10);
      // Beside the name: on its line, or at the start of the next when the head wraps.
      expect(Math.abs(guestBox!.y - nameBox!.y) < nameBox!.height || guestBox!.y >= nameBox!.y).toBe(true);
      // Markup in a name is text: shown as typed, no element made of it, and Guest beside it.
      const markup = headOf(page, posted.markup);
      await expect(markup.locator('strong').textContent()).resolves.toBe(MARKUP);
      expect(await page.locator('section#comments img').count()).toBe(0);
      expect(await markup.getByText('Guest', { exact: true }).isVisible()).toBe(true);
      expect(await page.title()).not.toBe('1');

      const widths = await page.evaluate(() => ({ document: document.documentElement.scrollWidth, viewport: window.innerWidth }));
      expect(widths.document, JSON.stringify(widths)).toBeLessThanOrEqual(widths.viewport);
      await page.locator('section#comments').scrollIntoViewIfNeeded();
      await screenshot(page, { path: `/tmp/player-guest-${backend}-${width}.png`, fullPage: true });
      expect(await seriousAxeViolations(page)).toEqual([]);
      expect(await watched.problems()).toEqual([]);
      await watched.close();
    }, BROWSER_TEST_MS);
  }
});
