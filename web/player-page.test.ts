/**
 * The player page in headless Chromium: what it lists and plays, under its
 * strict CSP with no violation, its sign-in, and what it offers for files that
 * are not audio. Every wait is for an event or a condition, never for time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { makeAudio, sineWav } from '../server/testing/audio.ts';
import { onePixelPng } from '../server/testing/fixtures.ts';
import { waitForStatus } from '../server/testing/files.ts';
import { PAGE_CSP } from './page-security.ts';
import { SESSION_COOKIE } from '../server/auth/player-session.ts';

/** How long a page may take to start playing before the test says so. */
const PLAYBACK_DEADLINE_MS = 15_000;

/**
 * A new page that records every CSP violation (the `securitypolicyviolation`
 * event, registered before any of the page's own code runs), every console
 * error and every uncaught exception.
 */
async function watchedPage(browser: Browser): Promise<{ page: Page; problems: () => Promise<string[]> }> {
  const page = await browser.newPage();
  const logged: string[] = [];
  page.on('console', (message) => {
    // A page answered 401 or 404 on purpose is logged by Chromium as a failed load; the tests check those statuses themselves.
    if (message.type() !== 'error') return;
    const where = message.location().url;
    if (message.text().startsWith('Failed to load resource') && /\/p\/[^/?]+(\/session)?$/.test(where)) return;
    logged.push(`console: ${message.text()} (${where})`);
  });
  page.on('pageerror', (error) => logged.push(`exception: ${error.message}`));
  await page.addInitScript(() => {
    const seen: string[] = ((window as unknown as { __cspViolations: string[] }).__cspViolations = []);
    document.addEventListener('securitypolicyviolation', (event) => seen.push(`csp: ${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`));
  });
  const problems = async () => [...logged, ...(await page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations))];
  return { page, problems };
}

/**
 * Plays the audio element until its time advances (a `timeupdate` with
 * currentTime > 0), optionally seeks and waits for `seeked`, and reports
 * what it played. Fails when the element errors or the deadline passes.
 */
function playAndReport(page: Page, index: number, seekTo?: number) {
  return page
    .locator('audio')
    .nth(index)
    .evaluate(
      async (audio: HTMLAudioElement, { seekTo, deadlineMs }) => {
        const event = (name: string, done: () => boolean) =>
          new Promise<void>((resolve, reject) => {
            const deadline = setTimeout(() => reject(new Error(`no ${name} within ${deadlineMs} ms (currentTime ${audio.currentTime})`)), deadlineMs);
            const check = () => {
              if (!done()) return;
              clearTimeout(deadline);
              audio.removeEventListener(name, check);
              resolve();
            };
            audio.addEventListener(name, check);
            audio.addEventListener('error', () => reject(new Error(`media error ${audio.error?.code}: ${audio.error?.message}`)), { once: true });
          });
        const advanced = event('timeupdate', () => audio.currentTime > 0);
        await audio.play();
        await advanced;
        const playedTo = audio.currentTime;
        if (seekTo !== undefined) {
          const seeked = event('seeked', () => true);
          audio.currentTime = seekTo; // seeking works over Range requests
          await seeked;
        }
        audio.pause();
        return { playedTo, time: audio.currentTime, duration: audio.duration, quality: audio.dataset.quality, src: audio.currentSrc, error: audio.error?.code ?? null };
      },
      { seekTo, deadlineMs: PLAYBACK_DEADLINE_MS },
    );
}

describe('player page in Chromium', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();
  let tone: Buffer;
  beforeAll(async () => {
    tone = await sineWav(3);
  });

  /** A project with artwork and a stack of two versions, and a player on it. */
  async function playerWith(body: Record<string, unknown>, extra: (projectid: string) => Promise<unknown> = async () => {}) {
    const { api, token } = await t.as('artist.private.name@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Night Drive EP', color: '#ff8800' } });
    const projectid = project!.id;
    expect((await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng)).error).toBeUndefined();
    const first = (await api.uploadFile(projectid, { name: 'night-drive-v1.wav', mimeType: 'audio/wav' }, tone)).data!;
    expect((await api.uploadFile(projectid, { name: 'night-drive-v2.wav', mimeType: 'audio/wav', parentid: first.upload.stackid }, tone)).error).toBeUndefined();
    // A file still awaiting its bytes is not shown.
    await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'not-yet.wav', mimeType: 'audio/wav', size: 10 } });
    await extra(projectid);
    const { data: player } = await api.POST('/players', { body: { name: 'Listen', projectid, ...body } });
    return { player: player!, token, projectid };
  }

  it('lists the tracks with the artwork, plays them and offers downloads, under a strict CSP with no violation', async () => {
    const { player } = await playerWith({ options: { stacks: true } });
    const { page, problems } = await watchedPage(chromium.browser);
    const response = await page.goto(player.playerUrl!);
    expect(response!.status()).toBe(200);
    const headers = await response!.allHeaders();
    expect(headers['content-security-policy']).toBe(PAGE_CSP);
    expect(headers['referrer-policy']).toBe('no-referrer');
    expect(await page.locator('.track-name').allTextContents()).toEqual(['night-drive-v1.wav', 'night-drive-v2.wav']);
    expect(await page.locator('img.artwork').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    expect(await page.locator('a.download').count()).toBe(2);
    // The page's script and stylesheet, both static files, ran and applied: the player colour is the accent.
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('li.track')!).borderLeftColor)).toBe('rgb(255, 136, 0)');
    // No inline script, no style element or attribute in the page as served.
    const served = await response!.text();
    expect(served).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>|<style|\sstyle=/i);
    const played = await playAndReport(page, 0, 2);
    expect(played.error).toBeNull();
    expect(played.playedTo).toBeGreaterThan(0);
    expect(played.time).toBeGreaterThanOrEqual(2);
    expect(played.duration).toBeCloseTo(3, 1);
    expect(await problems()).toEqual([]);
    await page.close();
  });

  it('shows only the most recent version when stacks is off, and no downloads when they are off', async () => {
    const { player } = await playerWith({ options: { downloads: false } });
    const page = await chromium.browser.newPage();
    await page.goto(player.playerUrl!);
    expect(await page.locator('.track-name').allTextContents()).toEqual(['night-drive-v2.wav']);
    expect(await page.locator('a.download').count()).toBe(0);
    await page.close();
  });

  it('offers a file that is not audio as a download only, never at an inline URL, and not at all with downloads off', async () => {
    const html = Buffer.from('<!doctype html><script>parent.stolen = document.cookie</script>');
    let htmlId = '';
    const addHtml = async (projectid: string) => {
      const { api } = await t.as('artist.private.name@example.com');
      htmlId = (await api.uploadFile(projectid, { name: 'liner-notes.html', mimeType: 'text/html' }, html)).data!.box.id;
    };
    for (const downloads of [true, false]) {
      const { player } = await playerWith({ options: { downloads } }, addHtml);
      const { page, problems } = await watchedPage(chromium.browser);
      await page.goto(player.playerUrl!);
      const track = page.locator(`li.track[data-box-id="${htmlId}"]`);
      expect(await track.locator('.track-name').textContent()).toBe('liner-notes.html');
      expect(await track.locator('audio').count()).toBe(0);
      const pageHtml = await page.content();
      expect(pageHtml).not.toMatch(new RegExp(`/download/${htmlId}\\?[^"]*disposition=inline`));
      const link = track.locator('a.download');
      if (downloads) {
        expect(new URL((await link.getAttribute('href'))!).searchParams.get('disposition')).toBeNull();
      } else {
        expect(await link.count()).toBe(0);
        expect(pageHtml).not.toContain(`/download/${htmlId}`);
      }
      // The audio tracks still play inline.
      expect(await page.locator('audio').count()).toBe(1);
      expect(await problems()).toEqual([]);
      await page.close();
    }
  });

  it('shows no part of the uploader\'s email as the artist of a file without an artist tag', async () => {
    const { player } = await playerWith({});
    const page = await chromium.browser.newPage();
    await page.goto(player.playerUrl!);
    expect(await page.locator('.subtitle').count()).toBe(0);
    expect(await page.content()).not.toContain('artist.private.name');
    await page.close();
  });

  it('asks collaborators of a collaborators-only player to sign in, opens for an invited one only, and keeps the session HttpOnly', async () => {
    const { player } = await playerWith({ public: false, collaborators: [{ email: 'label@example.com', role: 'viewer' }] });
    const { page, problems } = await watchedPage(chromium.browser);
    const first = await page.goto(player.playerUrl!);
    expect(first!.status()).toBe(401);
    expect((await first!.allHeaders())['content-security-policy']).toBe(PAGE_CSP);
    expect(await page.locator('.track').count()).toBe(0);
    const stranger = await t.as('stranger@example.com');
    await page.fill('input[name=token]', stranger.token);
    await page.click('button[type=submit]');
    expect(await page.locator('.error').textContent()).toMatch(/does not give access/);
    const invited = await t.as('label@example.com');
    await page.fill('input[name=token]', invited.token);
    await page.click('button[type=submit]');
    expect(await page.locator('.track-name').allTextContents()).toEqual(['night-drive-v2.wav']);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const [session] = (await page.context().cookies()).filter((cookie) => cookie.name === SESSION_COOKIE);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: `/p/${player.id}` });
    expect(session.value).not.toContain(invited.token);
    expect(await problems()).toEqual([]);
    await page.context().clearCookies();
    await page.close();
  });

  it('refuses a sign-in form posted from another site, and will not show the sign-in page in its frame', async () => {
    const { player } = await playerWith({ public: false, collaborators: [{ email: 'label@example.com', role: 'viewer' }] });
    const invited = await t.as('label@example.com');
    // An attacker's page on another site (localhost, where the player is on 127.0.0.1; both on loopback, so that
    // Chromium's Private Network Access rules do not block the frame before our header could): a form that signs the
    // visitor in as someone else, and a frame of the sign-in page.
    const attackerPage = `<!doctype html><form method="post" action="${player.playerUrl}/session"><input name="token" value="${invited.token}"><button>Go</button></form>
<iframe src="${player.playerUrl}"></iframe>`;
    const attacker = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end(attackerPage));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const context = await chromium.browser.newContext();
    const page = await context.newPage();
    await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
    const framed = page.frames().find((frame) => frame !== page.mainFrame())!;
    await framed.waitForLoadState();
    // frame-ancestors 'none': Chromium shows its own error page in place of ours.
    expect(framed.url()).toBe('chrome-error://chromewebdata/');
    expect(await framed.locator('form[action$="/session"]').count()).toBe(0);
    const [posted] = await Promise.all([page.waitForResponse(`${player.playerUrl}/session`), page.click('button')]);
    expect(posted.status()).toBe(403);
    expect((await context.cookies()).filter((cookie) => cookie.name === SESSION_COOKIE)).toEqual([]);
    await context.close();
    await new Promise((resolve) => attacker.close(resolve));
  });

  it('answers an unknown player with a 404 page', async () => {
    const page = await chromium.browser.newPage();
    const response = await page.goto(`${t.server.address}/p/ply_nothing`);
    expect(response!.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Player not found');
    await page.close();
  });
});

describe('player page streams the renditions of analysed files', () => {
  const t = useTestServer('sqlite', { PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  const chromium = useBrowser();

  it('plays the quality the player sets, or the best the connection carries when it sets none', async () => {
    const { api } = await t.as('mastering@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Masters' } });
    const { box } = (await api.uploadFile(project!.id, { name: 'master.wav', mimeType: 'audio/wav' }, await sineWav(3))).data!;
    await waitForStatus(api, project!.id, box.id, ['ready']);
    const { page, problems } = await watchedPage(chromium.browser);
    // The connection the page sees, as the Network Information API reports it (Mbit/s); each case sets it anew.
    await page.addInitScript(() => {
      Object.defineProperty(navigator, 'connection', { get: () => ({ downlink: (window as unknown as { __downlink: number }).__downlink }) });
    });
    const cases = [
      ['compressed', 50, 'compressed'],
      ['original', 1, 'original'],
      [undefined, 50, 'lossless'],
      [undefined, 1, 'compressed'],
    ] as const;
    for (const [quality, mbps, expected] of cases) {
      const { data: player } = await api.POST('/players', { body: { name: `Quality ${quality}`, projectid: project!.id, ...(quality ? { options: { quality } } : {}) } });
      await page.addInitScript((value) => ((window as unknown as { __downlink: number }).__downlink = value), mbps);
      await page.goto(player!.playerUrl!);
      const played = await playAndReport(page, 0);
      expect(played.quality, `${quality} at ${mbps} Mbit/s`).toBe(expected);
      expect(played.error).toBeNull();
      expect(played.time).toBeGreaterThan(0);
      expect(played.duration).toBeCloseTo(3, 1);
      if (expected === 'original') expect(played.src).not.toContain('variant=');
      else expect(played.src).toContain(`variant=${expected}`);
      expect(await problems()).toEqual([]);
    }
    await page.close();
  });

  it('shows the file\'s artist tag as the artist, and nothing of the uploader\'s email without one', async () => {
    const { api } = await t.as('uploader.secret.name@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Credits' } });
    const tagged = await makeAudio('tagged.wav', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-metadata', 'artist=The Night Drivers', '-c:a', 'pcm_s16le']);
    const boxes = [
      (await api.uploadFile(project!.id, { name: 'tagged.wav', mimeType: 'audio/wav' }, tagged)).data!.box,
      (await api.uploadFile(project!.id, { name: 'untagged.wav', mimeType: 'audio/wav' }, await sineWav(1))).data!.box,
    ];
    for (const box of boxes) await waitForStatus(api, project!.id, box.id, ['ready']);
    const { data: player } = await api.POST('/players', { body: { name: 'Credits', projectid: project!.id, options: { boxSubtitle: 'artist' } } });
    const page = await chromium.browser.newPage();
    await page.goto(player!.playerUrl!);
    expect(await page.locator(`li[data-box-id="${boxes[0].id}"] .subtitle`).textContent()).toBe('The Night Drivers');
    expect(await page.locator(`li[data-box-id="${boxes[1].id}"] .subtitle`).count()).toBe(0);
    expect(await page.content()).not.toContain('uploader.secret.name');
    await page.close();
  });
});
