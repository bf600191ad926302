import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { onePixelPng } from '../../testing/fixtures.ts';
import { sweepAbandonedUploads } from './uploads-service.ts';
import { uploadHeaders } from '../../../generated/client.ts';
import { fileBlobKey } from '../../blobs/keys.ts';
import { streamedPut, temporaryFiles } from '../../testing/uploads.ts';
import { until } from '../../testing/until.ts';

describe.each(backends)('uploads on %s', (backend) => {
  const t = useTestServer(backend);

  async function requestUpload(body: Record<string, unknown> = {}) {
    const { api, token } = await t.as('uploader@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Uploads' } });
    const response = await t.fetch(`/projects/${project!.id}/files`, { ...json({ name: 'take.wav', mimeType: 'audio/wav', size: 10, ...body }), token });
    return { api, token, projectid: project!.id, response, upload: response.status === 200 ? await response.json() : undefined };
  }

  /** The PUT headers of an upload, with some changed (or, given undefined, left out). */
  function signedHeaders(upload: { contentType: string; metadata: Record<string, string> }, changes: Record<string, string | undefined> = {}) {
    const headers = uploadHeaders(upload);
    for (const [name, value] of Object.entries(changes)) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    return headers;
  }

  /** The file's state after a refused PUT must be exactly as before: awaiting its bytes, none stored. */
  async function expectNothingStored(projectid: string, boxid: string) {
    const { api } = await t.as('uploader@example.com');
    const { data } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: boxid } } });
    expect(data).toMatchObject({ status: 'awaiting-upload' });
    expect(await t.server.ctx.blobs.stat(fileBlobKey(projectid, boxid))).toBeUndefined();
  }

  it('answers with boxid, contentType, metadata, the headers to send, stackid and a signed url on this server', async () => {
    const { upload, projectid } = await requestUpload({ size: '10' });
    expect(upload).toEqual({
      boxid: expect.stringMatching(/^box_/),
      contentType: 'audio/wav',
      metadata: { boxpath: `projects/${projectid}/boxes/${upload.boxid}`, destination: 'file', projectid },
      headers: {
        'Content-Type': 'audio/wav',
        'x-storage-meta-boxpath': `projects/${projectid}/boxes/${upload.boxid}`,
        'x-storage-meta-destination': 'file',
        'x-storage-meta-projectid': projectid,
      },
      stackid: expect.stringMatching(/^box_/),
      parentid: null,
      autoStacked: false,
      url: expect.stringMatching(new RegExp(`^${t.server.apiUrl}/upload/files/upl_\\w+\\?expires=\\d+&signature=[0-9a-f]{64}$`)),
      expires: expect.any(Number),
    });
    expect(upload.expires).toBeGreaterThan(Date.now() + 59 * 60 * 1000);
  });

  it('stores the bytes of a correct PUT, once', async () => {
    const { upload, projectid } = await requestUpload();
    const first = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: '0123456789' });
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ id: upload.boxid, status: 'pending', size: 10 });
    const again = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: 'abcdefghij' });
    expect(again.status).toBe(409);
    expect((await again.json()).type).toBe('/problems/upload-already-used');
    const stored = await t.server.ctx.blobs.read(fileBlobKey(projectid, upload.boxid)).toArray();
    expect(Buffer.concat(stored).toString()).toBe('0123456789');
  });

  it('refuses a wrong header with 403 and a missing one with 400, storing nothing', async () => {
    const { upload, projectid } = await requestUpload();
    const cases: Array<[Record<string, string | undefined>, number]> = [
      [{ 'x-storage-meta-boxpath': 'projects/other/boxes/box_x' }, 403],
      [{ 'x-storage-meta-projectid': 'prj_other' }, 403],
      [{ 'Content-Type': 'audio/flac' }, 403],
      [{ 'x-storage-meta-destination': undefined }, 400],
      [{ 'Content-Type': undefined }, 403],
    ];
    for (const [changes, status] of cases) {
      const response = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload, changes), body: '0123456789' });
      expect(response.status, JSON.stringify(changes)).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/problem\+json/);
    }
    await expectNothingStored(projectid, upload.boxid);
    // The URL still works after refusals that stored nothing.
    expect((await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: '0123456789' })).status).toBe(200);
  });

  it('stores a PUT that sends exactly the headers given, and names every missing header at once', async () => {
    const { upload, projectid } = await requestUpload();
    const bare = await fetch(upload.url, { method: 'PUT', headers: { 'Content-Type': upload.contentType }, body: '0123456789' });
    expect(bare.status).toBe(400);
    const problem = await bare.json();
    expect(problem.type).toBe('/problems/validation-error');
    const named = problem.errors.map((error: { header?: string }) => error.header).sort();
    expect(named).toEqual(['x-storage-meta-boxpath', 'x-storage-meta-destination', 'x-storage-meta-projectid']);
    for (const header of named) expect(problem.detail).toContain(header);
    await expectNothingStored(projectid, upload.boxid);
    const sent = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: '0123456789' });
    expect(sent.status).toBe(200);
  });

  it('refuses bodies longer or shorter than declared, with or without Content-Length', async () => {
    const { upload, projectid } = await requestUpload();
    const longer = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: '0123456789X' });
    expect(longer.status).toBe(413);
    const shorter = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: '012' });
    expect(shorter.status).toBe(400);
    const chunked = (body: string[]) =>
      fetch(upload.url, {
        method: 'PUT',
        headers: signedHeaders(upload),
        body: new ReadableStream({ start(controller) { for (const part of body) controller.enqueue(new TextEncoder().encode(part)); controller.close(); } }),
        duplex: 'half',
      } as RequestInit);
    expect((await chunked(['01234', '56789', 'X'])).status).toBe(413);
    expect((await chunked(['01234'])).status).toBe(400);
    await expectNothingStored(projectid, upload.boxid);
  });

  it('refuses a tampered or expired URL with 403', async () => {
    const { upload, projectid } = await requestUpload();
    const url = new URL(upload.url);
    const tamperedSignature = new URL(url);
    tamperedSignature.searchParams.set('signature', 'f'.repeat(64));
    const laterExpiry = new URL(url);
    laterExpiry.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 1));
    for (const target of [tamperedSignature, laterExpiry]) {
      const response = await fetch(target, { method: 'PUT', headers: signedHeaders(upload), body: '0123456789' });
      expect(response.status).toBe(403);
      expect((await response.json()).type).toBe('/problems/signature-invalid');
    }
    t.server.clock.advance(2 * 3600 * 1000);
    try {
      const expired = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: '0123456789' });
      expect(expired.status).toBe(403);
      expect((await expired.json()).detail).toMatch(/expired/);
    } finally {
      t.server.clock.advance(-2 * 3600 * 1000);
    }
    await expectNothingStored(projectid, upload.boxid);
  });

  it('keeps nothing of an upload whose connection drops midway, and the URL works again after', async () => {
    const { upload, projectid } = await requestUpload({ size: 1_000_000 });
    const uploadId = new URL(upload.url).pathname.split('/').pop()!;
    const dropped = streamedPut(upload.url, signedHeaders(upload), 1_000_000);
    await dropped.send(Buffer.alloc(300_000, 1));
    // Cut once the server holds the upload, as a client whose connection drops mid-body.
    await until(async () => (await t.server.ctx.store.uploads.get(uploadId))?.claimToken, 'the PUT to claim its upload');
    dropped.cut();
    expect(await dropped.outcome).toHaveProperty('error');
    await until(async () => (await t.server.ctx.store.uploads.get(uploadId))?.claimToken === null, 'the server to give the claim back');
    await expectNothingStored(projectid, upload.boxid);
    expect(await temporaryFiles(join(t.server.ctx.config.dataDir, 'blobs'))).toEqual([]);
    const retry = await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: Buffer.alloc(1_000_000, 2) });
    expect(retry.status).toBe(200);
  });

  it('lands an upload without parentid in a new stack, with a stack id in a stack, with a folder id in a new stack in the folder', async () => {
    const { api, token, projectid } = await requestUpload();
    const top = (await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'top.wav', mimeType: 'audio/wav', size: 1 } })).data!;
    const { data: topStack } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: top.stackid } } });
    // Issue 21: "A stack that an upload makes is named after the file without its extension".
    expect(topStack).toMatchObject({ object: 'stack', name: 'top', children: [{ id: top.boxid }] });
    expect(topStack).not.toHaveProperty('parentid');
    const inStack = (await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'v2.wav', mimeType: 'audio/wav', size: 1, parentid: top.stackid } })).data!;
    expect(inStack.stackid).toBe(top.stackid);
    const { data: folder } = await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
    const inFolder = (await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'f.wav', mimeType: 'audio/wav', size: 1, parentid: folder!.id } })).data!;
    const { data: folderStack } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: inFolder.stackid } } });
    expect(folderStack).toMatchObject({ object: 'stack', parentid: folder!.id });
    const onFile = await t.fetch(`/projects/${projectid}/files`, { ...json({ name: 'x.wav', mimeType: 'audio/wav', size: 1, parentid: top.boxid }), token });
    expect(onFile.status).toBe(409);
    const { data: other } = await api.POST('/projects', { body: { name: 'Other' } });
    const foreign = await t.fetch(`/projects/${other!.id}/files`, { ...json({ name: 'x.wav', mimeType: 'audio/wav', size: 1, parentid: top.stackid }), token });
    expect(foreign.status).toBe(409);
  });

  it('refuses declared sizes over the limit with 413, and malformed sizes with 400', async () => {
    const over = await requestUpload({ size: t.server.ctx.config.maxUploadBytes + 1 });
    expect(over.response.status).toBe(413);
    for (const size of [-1, 1.5, '1e3', '', 'ten']) {
      const { response } = await requestUpload({ size });
      expect(response.status, String(size)).toBe(400);
    }
  });

  it('keeps a file out of downloads and player pages until its PUT completes', async () => {
    const { api, upload, projectid } = await requestUpload();
    const early = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: upload.boxid } } });
    expect(early.response.status).toBe(409);
    await fetch(upload.url, { method: 'PUT', headers: signedHeaders(upload), body: '0123456789' });
    const late = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: upload.boxid } } });
    expect(late.response.status).toBe(200);
  });

  it('sweeps away the file and stack of an upload URL that expired unused, and nothing else', async () => {
    const { api, projectid, upload: unused } = await requestUpload();
    const { data: used } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'sent.wav', mimeType: 'audio/wav', size: 3 } });
    await fetch(used!.url, { method: 'PUT', headers: signedHeaders(used!), body: 'abc' });
    const { data: fresh } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'later.wav', mimeType: 'audio/wav', size: 3 } });
    t.server.clock.advance(2 * 3600 * 1000);
    try {
      // The fresh URL was asked for "now"; make it younger than the others by asking again after the clock moved.
      const { data: young } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'young.wav', mimeType: 'audio/wav', size: 3 } });
      expect(await sweepAbandonedUploads(t.server.ctx)).toBeGreaterThanOrEqual(2);
      const ids = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!.map((box) => box.id);
      expect(ids).not.toContain(unused.boxid);
      expect(ids).not.toContain(unused.stackid);
      expect(ids).not.toContain(fresh!.boxid);
      expect(ids).toContain(used!.boxid);
      expect(ids).toContain(young!.boxid);
      // The swept upload is gone: a late PUT is told to ask for a new URL.
      const late = await fetch(unused.url, { method: 'PUT', headers: signedHeaders(unused), body: '0123456789' });
      expect(late.status).toBe(404);
      expect((await late.json()).detail).toMatch(/Request a new upload URL/);
    } finally {
      t.server.clock.advance(-2 * 3600 * 1000);
    }
  });

  describe('artwork', () => {
    it('sets the project artwork from a PNG, served by a signed URL', async () => {
      const { api, projectid } = await requestUpload();
      const { project } = (await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng)).data!;
      expect(project.artwork).toMatchObject({ contentType: 'image/png', url: expect.stringContaining('/download/art_') });
      const image = await fetch(project.artwork!.url);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await image.arrayBuffer()).equals(Buffer.from(onePixelPng))).toBe(true);
      const { data: read } = await api.GET('/projects/{projectid}', { params: { path: { projectid } } });
      expect(read!.artwork!.contentType).toBe('image/png');
    });

    it('refuses a non-image type on the request with 415', async () => {
      const { token, projectid } = await requestUpload();
      const response = await t.fetch(`/projects/${projectid}/artwork`, { ...json({ name: 'a.pdf', mimeType: 'application/pdf', size: 10 }), token });
      expect(response.status).toBe(415);
      expect((await response.json()).detail).toMatch(/must be an image/);
    });

    it('sniffs the bytes on the PUT: a non-image, or another image type than declared, gets 415 and sets nothing', async () => {
      const { api, projectid } = await requestUpload();
      const fake = Buffer.from('%PDF-1.7 this is not an image at all');
      const jpegHead = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0]);
      for (const body of [fake, jpegHead]) {
        const { data } = await api.POST('/projects/{projectid}/artwork', { params: { path: { projectid } }, body: { name: 'cover.png', mimeType: 'image/png', size: body.length } });
        const response = await fetch(data!.url, { method: 'PUT', headers: signedHeaders(data!), body });
        expect(response.status).toBe(415);
      }
      const { data: project } = await api.GET('/projects/{projectid}', { params: { path: { projectid } } });
      expect(project).not.toHaveProperty('artwork');
    });
  });
});
