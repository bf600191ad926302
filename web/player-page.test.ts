import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { useTestServer } from '../server/testing/harness.ts';
import { launchBrowser } from '../server/testing/browser.ts';
import { sineWav } from '../server/testing/audio.ts';
import { onePixelPng } from '../server/testing/fixtures.ts';
import { waitForStatus } from '../server/testing/files.ts';

describe('player page in Chromium', () => {
  const t = useTestServer('sqlite');
  let browser: Browser;
  let tone: Buffer;
  beforeAll(async () => {
    [browser, tone] = await Promise.all([launchBrowser(), sineWav(3)]);
  });
  afterAll(async () => {
    await browser?.close();
  });

  /** A project with artwork and a stack of two versions, and a player on it. */
  async function playerWith(body: Record<string, unknown>) {
    const { api, token } = await t.as('artist@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Night Drive EP' } });
    const projectid = project!.id;
    await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng);
    const first = await api.uploadFile(projectid, { name: 'night-drive-v1.wav', mimeType: 'audio/wav' }, tone);
    await api.uploadFile(projectid, { name: 'night-drive-v2.wav', mimeType: 'audio/wav', parentid: first.upload.stackid }, tone);
    // A file still awaiting its bytes is not shown.
    await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'not-yet.wav', mimeType: 'audio/wav', size: 10 } });
    const { data: player } = await api.POST('/players', { body: { name: 'Listen', projectid, ...body } });
    return { player: player!, token };
  }

  it('lists the tracks with the artwork, plays them, and offers downloads', async () => {
    const { player } = await playerWith({ options: { stacks: true } });
    const page = await browser.newPage();
    const response = await page.goto(player.playerUrl!);
    expect(response!.status()).toBe(200);
    expect(await page.locator('.track-name').allTextContents()).toEqual(['night-drive-v1.wav', 'night-drive-v2.wav']);
    expect(await page.locator('img.artwork').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    expect(await page.locator('a.download').count()).toBe(2);
    const played = await page.locator('audio').first().evaluate(async (audio: HTMLAudioElement) => {
      await audio.play();
      await new Promise((resolve) => setTimeout(resolve, 700));
      audio.currentTime = 2; // seeking works over Range requests
      await new Promise((resolve) => audio.addEventListener('seeked', resolve, { once: true }));
      return { time: audio.currentTime, duration: audio.duration, error: audio.error?.code ?? null };
    });
    expect(played.error).toBeNull();
    expect(played.time).toBeGreaterThanOrEqual(2);
    expect(played.duration).toBeCloseTo(3, 1);
    await page.close();
  });

  it('shows only the most recent version when stacks is off, and no downloads when they are off', async () => {
    const { player } = await playerWith({ options: { downloads: false } });
    const page = await browser.newPage();
    await page.goto(player.playerUrl!);
    expect(await page.locator('.track-name').allTextContents()).toEqual(['night-drive-v2.wav']);
    expect(await page.locator('a.download').count()).toBe(0);
    await page.close();
  });

  it('asks for a token on a collaborators-only player, and opens for an invited one only', async () => {
    const { player } = await playerWith({ public: false, collaborators: [{ email: 'label@example.com', role: 'viewer' }] });
    const page = await browser.newPage();
    const first = await page.goto(player.playerUrl!);
    expect(first!.status()).toBe(401);
    expect(await page.locator('.track').count()).toBe(0);
    const stranger = await t.as('stranger@example.com');
    await page.fill('input[name=token]', stranger.token);
    await page.click('button[type=submit]');
    expect(await page.locator('.error').textContent()).toMatch(/does not give access/);
    const invited = await t.as('label@example.com');
    await page.fill('input[name=token]', invited.token);
    await page.click('button[type=submit]');
    expect(await page.locator('.track-name').allTextContents()).toEqual(['night-drive-v2.wav']);
    await page.close();
  });

  it('answers an unknown player with a 404 page', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${t.server.address}/p/ply_nothing`);
    expect(response!.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('Player not found');
    await page.close();
  });
});

describe('player page streams the renditions of analysed files', () => {
  const t = useTestServer('sqlite', { PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('plays the quality the player sets, or the best the connection carries when it sets none', async () => {
    const { api } = await t.as('mastering@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Masters' } });
    const { box } = await api.uploadFile(project!.id, { name: 'master.wav', mimeType: 'audio/wav' }, await sineWav(3));
    await waitForStatus(api, project!.id, box.id, ['ready']);
    const page = await browser.newPage();
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
      const played = await page.locator('audio').first().evaluate(async (audio: HTMLAudioElement) => {
        await audio.play();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { quality: audio.dataset.quality, src: audio.currentSrc, time: audio.currentTime, duration: audio.duration, error: audio.error?.code ?? null };
      });
      expect(played.quality, `${quality} at ${mbps} Mbit/s`).toBe(expected);
      expect(played.error).toBeNull();
      expect(played.time).toBeGreaterThan(0);
      expect(played.duration).toBeCloseTo(3, 1);
      if (expected === 'original') expect(played.src).not.toContain('variant=');
      else expect(played.src).toContain(`variant=${expected}`);
    }
    await page.close();
  });
});
