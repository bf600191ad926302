/**
 * The page renews its signed URLs before they expire (views.yaml: "Read the
 * view again before then to renew them; the page does so on its own"), so a
 * page left open past `urlsExpire` still plays. Time is driven, never waited
 * for: the server's test clock moves past the URLs' expiry, and the page's
 * clock (Playwright's) runs its renewal timer forward.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { makeAudio, stereoSegments } from '../server/testing/audio.ts';
import { waitForStatus } from '../server/testing/files.ts';

/** Signed URLs live 15 s here, so the page's renewal (5 minutes ahead, at least 10 s after the view) falls 10 s after the load. */
const URL_TTL_SECONDS = 15;

describe('the player page renews its signed URLs', () => {
  const t = useTestServer('sqlite', { PROCESSING: 'in-process', JOB_POLL_MS: '50', DOWNLOAD_URL_TTL_SECONDS: String(URL_TTL_SECONDS) });
  const chromium = useBrowser();
  let pageUrl: string;

  beforeAll(async () => {
    const { api } = await t.as('renewal.owner@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Renewal' } });
    const wav = await makeAudio('long-take.wav', [...stereoSegments([[-20, 8]]), '-c:a', 'pcm_s16le']);
    const upload = await api.uploadFile(project!.id, { name: 'long-take.wav', mimeType: 'audio/wav' }, wav);
    expect((await waitForStatus(api, project!.id, upload.data!.box.id)).status).toBe('ready');
    const { data: player } = await api.POST('/players', { body: { name: 'Left open', projectid: project!.id } });
    pageUrl = player!.playerUrl!;
  });

  it('reads the view again before urlsExpire, swaps the stream, and plays after the old URL has expired', async () => {
    const page = await chromium.browser.newPage();
    try {
      await page.clock.install();
      const viewReads: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname.endsWith('/view')) viewReads.push(request.url());
      });
      await page.goto(pageUrl);
      await page.locator('main[data-state="ready"]').waitFor();
      const audio = page.locator('audio#audio');
      const firstSrc = await audio.evaluate((element: HTMLAudioElement) => element.src);
      expect(firstSrc).toContain('signature=');
      expect(viewReads).toHaveLength(1);

      // The server's clock passes the first URLs' expiry: they stop working.
      t.server.clock.advance((URL_TTL_SECONDS + 5) * 1000);
      expect((await fetch(firstSrc)).status).toBe(403);

      // The page's renewal timer runs; it reads the view again and takes the new stream URL (the audio is paused).
      await page.clock.runFor(11_000);
      await page.waitForFunction((old) => (document.getElementById('audio') as HTMLAudioElement).src !== old, firstSrc);
      expect(viewReads).toHaveLength(2);
      const renewedSrc = await audio.evaluate((element: HTMLAudioElement) => element.src);
      expect((await fetch(renewedSrc)).status).toBe(200);

      await page.getByRole('button', { name: 'Play', exact: true }).click();
      await page.waitForFunction(() => (document.getElementById('audio') as HTMLAudioElement).currentTime > 0.2);
      expect(await audio.evaluate((element: HTMLAudioElement) => element.error)).toBeNull();
    } finally {
      await page.close();
    }
  });
});
