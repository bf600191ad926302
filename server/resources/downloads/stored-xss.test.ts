/**
 * The stored-XSS reproduction, in headless Chromium:
 * a page or SVG uploaded to a project, opened through a download URL signed
 * `inline` (as the player page signs them), on the API's own origin. Before
 * the fix it rendered and its script ran; now the browser downloads it. Every
 * wait is for an event: the download, or the script reporting that it ran.
 */
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../../testing/harness.ts';
import { useBrowser } from '../../testing/browser.ts';
import { signDownload } from '../../signing/signed-downloads.ts';
import { hostilePage, hostileSvg } from './hostile-files.ts';

describe('stored XSS through downloads, in Chromium', () => {
  const t = useTestServer('sqlite');
  const chromium = useBrowser();

  it.each([
    ['mix.html', 'text/html', hostilePage],
    ['cover.svg', 'image/svg+xml', hostileSvg],
  ])('%s uploaded as %s and opened through an inline URL is downloaded; its script never runs', async (name, mimeType, body) => {
    const { api } = await t.as('attacker@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Mixes' } });
    const { box } = (await api.uploadFile(project!.id, { name, mimeType }, Buffer.from(body))).data!;
    const url = signDownload(t.server.ctx, box.id, 'inline').url;

    const context = await chromium.browser.newContext({ acceptDownloads: true });
    try {
      const page = await context.newPage();
      let scriptRuns = 0;
      let reportRan = () => {};
      const scriptRan = new Promise<'script ran'>((resolve) => (reportRan = () => resolve('script ran')));
      await page.exposeFunction('reportScriptRan', () => {
        scriptRuns++;
        reportRan();
      });
      const downloaded = page.waitForEvent('download');
      // A navigation that turns into a download is aborted ("Download is starting"); that is the outcome we want.
      const navigation = page.goto(url).then(
        () => 'rendered',
        (error: Error) => error.message,
      );
      const outcome = await Promise.race([downloaded.then(() => 'downloaded' as const), scriptRan]);
      expect(outcome).toBe('downloaded');
      expect((await downloaded).suggestedFilename()).toBe(name);
      expect(await navigation).toMatch(/Download is starting|net::ERR_ABORTED/);
      expect(scriptRuns).toBe(0);
      expect(await page.title()).not.toBe('pwned');
    } finally {
      await context.close();
    }
  });
});
