/**
 * The upload portal's page (/u/{playerid}) in headless Chromium against a
 * real server: the uploader types a name, chooses files with "Choose files",
 * presses "Upload"; one PATCH is cut on the way (page.route aborts it) and
 * the upload resumes from the server's offset; each file's progress bar,
 * named by the file, reaches 100 %, the page thanks (or goes to the
 * redirect), and the stored file is the very bytes, analysed. The owner's
 * header is text, never markup. A closed portal's page says so with 404 and
 * has no form. Every wait ends on a condition with a deadline.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../server/testing/harness.ts';
import { screenshot, useBrowser } from '../server/testing/browser.ts';
import { sineWav } from '../server/testing/audio.ts';
import { fileBlobKey } from '../server/blobs/keys.ts';
import type { Schemas } from '../server/lib/api-types.ts';
import { until } from '../server/testing/until.ts';
import { watchedPage } from './testing/player-browser.ts';

const BROWSER_TEST_MS = 90_000;
const OWNER = 'artist@example.com';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('the upload portal page', () => {
  const h = useTestServer('sqlite', { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100' });
  const chromium = useBrowser();

  async function portal(upload: Schemas['UploadPortal']) {
    const { api } = await h.as(OWNER);
    const { data, error } = await api.POST('/players', { body: { name: 'Stems', upload } });
    if (!data) throw new Error(JSON.stringify(error));
    return data;
  }

  async function stored(projectId: string, name: string): Promise<{ box: Schemas['FileBox']; bytes: Buffer }> {
    const { api } = await h.as(OWNER);
    const all = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid: projectId } } })).data!;
    const box = all.find((candidate): candidate is Schemas['FileBox'] => candidate.object === 'file' && candidate.name === name)!;
    const chunks: Buffer[] = [];
    for await (const chunk of h.server.ctx.blobs.read(fileBlobKey(projectId, box.id))) chunks.push(chunk as Buffer);
    return { box, bytes: Buffer.concat(chunks) };
  }

  it(
    'sends files resumably through a cut connection, shows each one reach 100 %, and thanks',
    async () => {
      const player = await portal({ enabled: true, header: '<img src=x onerror=alert(1)>Send us your stems', greeting: 'WAV or FLAC, please.\nThanks!' });
      // Over one PATCH's worth (8 MiB), so that the second PATCH can be cut and resumed from the server's offset.
      const wav = await sineWav(60);
      const notes = Buffer.from('Bass: bars 12-16 are a take 2.\n');
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      const patches: string[] = [];
      let cut = false;
      await page.route('**/api/v1/portal/*/tus/*', async (route) => {
        const request = route.request();
        if (request.method() === 'PATCH') {
          const offset = (await request.headerValue('upload-offset')) ?? '';
          patches.push(offset);
          if (!cut && offset !== '0') {
            cut = true;
            return route.abort('connectionreset');
          }
        }
        return route.continue();
      });
      try {
        const response = await page.goto(`${h.server.address}/u/${player.id}`);
        expect(response?.status()).toBe(200);
        // The owner's text is shown as text: no element was made of it.
        await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('<img src=x onerror=alert(1)>Send us your stems');
        expect(await page.locator('h1 img').count()).toBe(0);
        await page.getByRole('textbox', { name: 'Your name', exact: true }).fill('Sam Rivera');
        await page.getByRole('textbox', { name: 'Your email', exact: true }).fill('sam@example.com');
        await page.getByLabel('Choose files', { exact: true }).setInputFiles([
          { name: 'mix-v3.wav', mimeType: 'audio/wav', buffer: wav },
          { name: 'notes.txt', mimeType: 'text/plain', buffer: notes },
        ]);
        await page.getByRole('button', { name: 'Upload', exact: true }).click();

        // Whose portal it is, said before anything is sent.
        expect(await page.locator('.recipient').textContent()).toBe(`Files sent here go to its owner, for “${player.name}”. Only they see them.`);
        await page.getByRole('heading', { name: 'Thank you' }).waitFor({ timeout: 60_000 });
        // The thanks replace the form: no Upload button to press again, nothing else to fill in.
        expect(await page.getByRole('button', { name: 'Upload', exact: true }).isVisible()).toBe(false);
        expect(await page.getByRole('textbox', { name: 'Your name', exact: true }).isVisible()).toBe(false);
        await screenshot(page, { path: '/tmp/portal-thanks-1280.png', fullPage: true });
        for (const name of ['mix-v3.wav', 'notes.txt']) {
          expect(await page.getByRole('progressbar', { name, exact: true }).evaluate((bar) => (bar as HTMLProgressElement).value)).toBe(100);
        }
        // The cut PATCH was sent again from where the server had stopped, not from the start.
        expect(cut).toBe(true);
        expect(patches.filter((offset) => offset === '0')).toHaveLength(2);
        expect(patches.filter((offset) => offset === String(8 * 1024 * 1024)).length).toBeGreaterThanOrEqual(2);
        expect((await watched.problems()).filter((problem) => problem.startsWith('csp:') || problem.startsWith('exception:'))).toEqual([]);
      } finally {
        await watched.close();
      }

      const mix = await stored(player.projectid, 'mix-v3.wav');
      expect(sha256(mix.bytes)).toBe(sha256(wav));
      expect(mix.box.uploader).toEqual({ name: 'Sam Rivera', email: 'sam@example.com' });
      expect(sha256((await stored(player.projectid, 'notes.txt')).bytes)).toBe(sha256(notes));
      const { api } = await h.as(OWNER);
      const analysed = await until(async () => {
        const { data } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid: player.projectid, fileid: mix.box.id } } });
        return data?.object === 'file' && data.status === 'ready' && data;
      }, 'the uploaded mix to be analysed', 60_000);
      expect(analysed).toMatchObject({ duration: 60 });
    },
    BROWSER_TEST_MS,
  );

  it(
    "goes to the owner's redirect when every file is in, and the player page links to the portal",
    async () => {
      const player = await portal({ enabled: true, redirect: `${h.server.address}/healthz` });
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        await page.goto(`${h.server.address}/p/${player.id}`);
        const portalLink = page.getByRole('link', { name: "Send files to this player's owner" });
        await page.locator('main#app[data-state="ready"], main#app[data-state="empty"]').first().waitFor();
        // A button-like link in a bar above the player, aligned with it at the right, not loose in the corner.
        for (const width of [1280, 360]) {
          await page.setViewportSize({ width, height: 700 });
          const link = (await portalLink.boundingBox())!;
          const app = (await page.locator('main#app').boundingBox())!;
          expect(link.x + link.width, `at ${width} px`).toBeGreaterThan(app.x + app.width - 40);
          expect(link.x, `at ${width} px`).toBeGreaterThan(app.x);
          expect(await portalLink.evaluate((a) => getComputedStyle(a).borderTopStyle)).toBe('solid');
          await screenshot(page, { path: `/tmp/player-portal-link-${width}.png` });
        }
        await portalLink.click();
        await page.waitForURL(`${h.server.address}/u/${player.id}`);
        await page.getByRole('textbox', { name: 'Your name', exact: true }).fill('Client');
        await page.getByLabel('Choose files', { exact: true }).setInputFiles([{ name: 'brief.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.7\n%%EOF\n') }]);
        await page.getByRole('button', { name: 'Upload', exact: true }).click();
        await page.waitForURL(`${h.server.address}/healthz`);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows a closed portal as closed, with 404 and no form, and a refusal as a message',
    async () => {
      const closed = await portal({ enabled: false, header: 'Send us your stems' });
      const open = await portal({ enabled: true });
      const watched = await watchedPage(chromium.browser);
      const { page } = watched;
      try {
        const response = await page.goto(`${h.server.address}/u/${closed.id}`);
        expect(response?.status()).toBe(404);
        await page.getByRole('heading', { name: 'This upload portal is closed' }).waitFor();
        expect(await page.getByRole('button', { name: 'Upload' }).count()).toBe(0);

        await page.goto(`${h.server.address}/u/${open.id}`);
        await page.getByRole('textbox', { name: 'Your name', exact: true }).fill('Sam');
        await page.getByLabel('Choose files', { exact: true }).setInputFiles([{ name: 'setup.exe', mimeType: 'application/x-msdownload', buffer: Buffer.from('MZ') }]);
        await page.getByRole('button', { name: 'Upload', exact: true }).click();
        await expect.poll(() => page.getByRole('alert').filter({ hasText: 'not a kind of file this portal takes' }).count(), { timeout: 15_000 }).toBe(1);
      } finally {
        await watched.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
