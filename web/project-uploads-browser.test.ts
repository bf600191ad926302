/**
 * A signed-in browser sends a project member's resumable upload (tus 1.0.0)
 * from a page of the server's own origin, with its session cookie and
 * nothing else: Chromium sets Origin and Sec-Fetch-Site on the POST, PATCH
 * and DELETE by itself, as it does for tus-js-client in the studio, and the
 * API's same-origin rule for a session's unsafe requests lets them through.
 * The first PATCH is cut (page.route aborts it); the page reads the offset
 * with HEAD and sends the rest; the stored bytes are the file's (sha256).
 * Every wait ends on a condition with a deadline.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { signIn } from '../server/testing/sessions.ts';
import { fileBlobKey } from '../server/blobs/keys.ts';
import { watchedPage } from './testing/player-browser.ts';

const OWNER = 'musician@example.com';
const sha256 = (bytes: Buffer | Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe('resumable uploads from a signed-in browser', () => {
  const h = useTestServer('sqlite');
  const chromium = useBrowser();

  it('creates, resumes after a cut PATCH and completes an upload with the session cookie alone', { timeout: 90_000 }, async () => {
    const browser = await signIn(h.server, OWNER);
    const { data: project } = await browser.api.POST('/projects', { body: { name: 'Browser uploads' } });
    const watched = await watchedPage(chromium.browser);
    const { page, context } = watched;
    const [name, value] = browser.cookie.split(/=(.*)/s);
    await context.addCookies([{ name, value, url: h.server.address }]);
    let cut = false;
    await page.route('**/api/v1/projects/*/tus/*', async (route) => {
      if (route.request().method() === 'PATCH' && !cut) {
        cut = true;
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    try {
      // Any page of the server's own: the sign-in page is served to anyone.
      expect((await page.goto(`${h.server.address}/signin`))?.status()).toBe(200);
      const bytes = Array.from({ length: 300_000 }, (_, index) => (index * 7) % 256);
      const outcome = await page.evaluate(
        async ({ endpoint, bytes }) => {
          const body = new Uint8Array(bytes);
          const tus = { 'Tus-Resumable': '1.0.0' };
          const created = await fetch(endpoint, {
            method: 'POST',
            headers: { ...tus, 'Upload-Length': String(body.length), 'Upload-Metadata': `filename ${btoa('from the browser.bin')}` },
          });
          const url = created.headers.get('location') ?? '';
          const fileId = created.headers.get('upload-file-id');
          const send = (offset: number) =>
            fetch(url, { method: 'PATCH', headers: { ...tus, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }, body: body.subarray(offset) });
          const first = await send(0).then((res) => res.status, (error: Error) => error.name);
          const offset = Number((await fetch(url, { method: 'HEAD', headers: tus })).headers.get('upload-offset'));
          const rest = await send(offset);
          const done = await fetch(url, { method: 'HEAD', headers: tus });
          // A second upload, cancelled: DELETE is an unsafe request too.
          const other = await fetch(endpoint, { method: 'POST', headers: { ...tus, 'Upload-Length': '4', 'Upload-Metadata': `filename ${btoa('cancelled.bin')}` } });
          const cancelled = await fetch(other.headers.get('location') ?? '', { method: 'DELETE', headers: tus });
          return {
            created: created.status,
            fileId,
            first,
            offset,
            rest: rest.status,
            restFileId: rest.headers.get('upload-file-id'),
            done: [done.status, done.headers.get('upload-offset'), done.headers.get('upload-file-id')],
            cancelled: cancelled.status,
          };
        },
        { endpoint: `${h.server.apiUrl}/projects/${project!.id}/tus`, bytes },
      );
      expect(outcome).toMatchObject({ created: 201, first: 'TypeError', offset: 0, rest: 204, cancelled: 204 });
      expect(outcome.fileId).toMatch(/^box_/);
      expect(outcome.restFileId).toBe(outcome.fileId);
      expect(outcome.done).toEqual([200, String(bytes.length), outcome.fileId]);
      const chunks: Buffer[] = [];
      for await (const chunk of h.server.ctx.blobs.read(fileBlobKey(project!.id, outcome.fileId!))) chunks.push(chunk as Buffer);
      expect(sha256(Buffer.concat(chunks))).toBe(sha256(Uint8Array.from(bytes)));
      // The cut PATCH is the one failed load the console may show.
      expect((await watched.problems()).filter((line) => !line.includes('net::ERR_CONNECTION_RESET'))).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
