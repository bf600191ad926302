import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { contentDisposition, parseRange } from './downloads-service.ts';

describe('Range and Content-Disposition rules', () => {
  it('parses single and suffix ranges as RFC 9110 defines them', () => {
    expect(parseRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=900-', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=900-5000', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-100', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-5000', 1000)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 1000)).toBe('unsatisfiable');
    // Not understood, or several ranges: ignored, so the whole file is sent.
    expect(parseRange('bytes=0-1,5-6', 1000)).toBeUndefined();
    expect(parseRange('items=0-1', 1000)).toBeUndefined();
    expect(parseRange('bytes=5-1', 1000)).toBeUndefined();
  });

  it('writes an ASCII filename, and filename* for names that are not ASCII', () => {
    expect(contentDisposition('attachment', 'mix.wav')).toBe('attachment; filename="mix.wav"');
    expect(contentDisposition('attachment', 'Björk "live".flac')).toBe(`attachment; filename="Bj_rk _live_.flac"; filename*=UTF-8''Bj%C3%B6rk%20%22live%22.flac`);
  });
});

describe.each(backends)('downloads on %s', (backend) => {
  const t = useTestServer(backend);
  const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

  async function stored(name = 'Café mix.wav') {
    const { api } = await t.as('listener@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Downloads' } });
    const projectid = project!.id;
    const { box } = await api.uploadFile(projectid, { name, mimeType: 'audio/wav' }, content);
    const { data } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: box.id } } });
    return { api, projectid, box, download: data! };
  }

  it('signs a URL that expires in an hour, in milliseconds since the epoch', async () => {
    const { download } = await stored();
    expect(download.expires).toBeGreaterThan(Date.now() + 3590 * 1000);
    expect(download.expires).toBeLessThan(Date.now() + 3610 * 1000);
    expect(new URL(download.url).searchParams.get('expires')).toBe(String(download.expires));
  });

  it('sends the whole file with its type, ETag and original name', async () => {
    const { download } = await stored();
    const response = await fetch(download.url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('accept-ranges')).toBe('bytes');
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="Caf_ mix.wav"; filename*=UTF-8''Caf%C3%A9%20mix.wav`);
    expect(Buffer.from(await response.arrayBuffer()).equals(content)).toBe(true);
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"box_\w+-1000"$/);
    const again = await fetch(download.url, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
  });

  it('answers ranges with 206 and Content-Range, and unsatisfiable ones with 416', async () => {
    const { download } = await stored();
    const part = await fetch(download.url, { headers: { Range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe('bytes 100-199/1000');
    expect(Buffer.from(await part.arrayBuffer()).equals(content.subarray(100, 200))).toBe(true);
    const seek = await fetch(download.url, { headers: { Range: 'bytes=990-' } });
    expect(Buffer.from(await seek.arrayBuffer()).equals(content.subarray(990))).toBe(true);
    const suffix = await fetch(download.url, { headers: { Range: 'bytes=-10' } });
    expect(suffix.headers.get('content-range')).toBe('bytes 990-999/1000');
    const beyond = await fetch(download.url, { headers: { Range: 'bytes=5000-' } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe('bytes */1000');
    expect((await beyond.json()).type).toBe('/problems/range-not-satisfiable');
  });

  it('refuses a tampered, re-dispositioned or expired URL with 403, and a deleted file with 404', async () => {
    const { api, projectid, box, download } = await stored();
    const inline = new URL(download.url);
    inline.searchParams.set('disposition', 'inline');
    const other = new URL(download.url.replace(box.id, 'box_0000000000000000'));
    for (const url of [inline, other]) expect((await fetch(url)).status).toBe(403);
    t.server.clock.advance(3601 * 1000);
    try {
      expect((await fetch(download.url)).status).toBe(403);
    } finally {
      t.server.clock.advance(-3601 * 1000);
    }
    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: box.id } } });
    expect((await fetch(download.url)).status).toBe(404);
  });

  it('refuses to sign a download of a folder or stack, or of a box the caller cannot see', async () => {
    const { api, projectid, box } = await stored();
    const { data: file } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: box.id } } });
    const stackid = (file as { parentid: string }).parentid;
    expect((await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: stackid } } })).response.status).toBe(409);
    const stranger = await t.as('stranger@example.com');
    expect((await stranger.api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: box.id } } })).response.status).toBe(404);
  });
});
