/**
 * Upload claims once never expired. A PUT cut off by a crash,
 * or whose commit failed after the bytes arrived, left its file
 * `awaiting-upload` for good, its URL answering 409 and its bytes orphaned.
 * Here claims have a deadline (1 s in these tests), renewed while a PUT is
 * alive, and the sweep frees what dead ones leave.
 */
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { onePixelPng } from '../../testing/fixtures.ts';
import { uploadHeaders } from '../../../generated/client.ts';
import { artworkBlobKey, fileBlobKey, renditionBlobKey } from '../../blobs/keys.ts';
import type { Store } from '../../repositories.ts';
import { sweepUploads } from './upload-sweeper.ts';
import { recordingLogger, streamedPut, temporaryFiles } from '../../testing/uploads.ts';
import { until } from '../../testing/until.ts';

const CLAIM_MS = 1000;

describe.each(backends)('upload claims on %s', (backend) => {
  const t = useTestServer(backend, { UPLOAD_CLAIM_SECONDS: String(CLAIM_MS / 1000) });
  const uploads = () => t.server.ctx.store.uploads;
  const blobRoot = () => join(t.server.ctx.config.dataDir, 'blobs');

  async function newProject() {
    const { api, token } = await t.as('claims@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Claims' } });
    return { api, token, projectid: project!.id };
  }

  async function requestUpload(projectid: string, size: number, name = 'take.bin') {
    const { token } = await t.as('claims@example.com');
    const response = await t.fetch(`/projects/${projectid}/files`, { ...json({ name, mimeType: 'application/octet-stream', size }), token });
    expect(response.status).toBe(200);
    const upload = await response.json();
    return { ...upload, id: new URL(upload.url).pathname.split('/').pop()! } as { id: string; url: string; boxid: string; stackid: string; contentType: string; metadata: Record<string, string> };
  }

  const put = (upload: { url: string; contentType: string; metadata: Record<string, string> }, body: string | Uint8Array) =>
    fetch(upload.url, { method: 'PUT', headers: uploadHeaders(upload), body: typeof body === 'string' ? body : new Uint8Array(body) });

  const stored = async (key: string) => {
    if (!(await t.server.ctx.blobs.stat(key))) return undefined;
    return Buffer.concat(await t.server.ctx.blobs.read(key).toArray()).toString();
  };

  /** The blob key of the project's artwork. */
  const artworkKey = async (projectid: string) => artworkBlobKey(projectid, (await t.server.ctx.store.projects.get(projectid))!.artworkId!);

  async function fileStatus(projectid: string, fileid: string) {
    const { api } = await t.as('claims@example.com');
    const { data } = await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid } } });
    return (data as { status?: string } | undefined)?.status;
  }

  /** A claim as a server killed mid-PUT leaves it: held by a token nobody will renew. */
  const deadServersClaim = (uploadId: string, expires = t.server.clock.now() + CLAIM_MS) => uploads().claim(uploadId, 'killed-server', t.server.clock.now(), expires);

  it('answers 409 while a dead server\'s claim runs, then lets a new PUT take it over; the dead one can no longer complete it', async () => {
    const { projectid } = await newProject();
    const upload = await requestUpload(projectid, 10);
    expect(await deadServersClaim(upload.id)).toBe(true);
    const early = await put(upload, '0123456789');
    expect(early.status).toBe(409);
    expect((await early.json()).detail).toMatch(/under way.*lapses within 1 second\b/);

    t.server.clock.advance(CLAIM_MS + 1);
    const retry = await put(upload, '0123456789');
    expect(retry.status).toBe(200);
    expect(await stored(fileBlobKey(projectid, upload.boxid))).toBe('0123456789');
    expect(await fileStatus(projectid, upload.boxid)).toBe('ready');
    // Fenced: the holder it was taken from cannot complete or release it.
    expect(await uploads().complete(upload.id, 'killed-server', t.server.clock.now())).toBe(false);
    expect(await uploads().release(upload.id, 'killed-server')).toBe(false);
    const replay = await put(upload, '0123456789');
    expect(replay.status).toBe(409);
    expect((await replay.json()).type).toBe('/problems/upload-already-used');
  });

  it('keeps renewing the claim of a PUT that sends slowly, for longer than a deadline, so it is never taken for dead', async () => {
    const { projectid } = await newProject();
    const size = 32;
    const upload = await requestUpload(projectid, size);
    const slow = streamedPut(upload.url, uploadHeaders(upload), size);
    await slow.send(Buffer.from('a'));
    let expires = (await until(async () => (await uploads().get(upload.id))?.claimExpires, 'the PUT to claim its upload'))!;
    const claimed = Date.now();
    let sent = 1;
    // A byte after each renewal, until more than two deadlines have passed since the claim was taken.
    while (Date.now() - claimed < 2 * CLAIM_MS) {
      const previous = expires;
      expires = await until(async () => {
        const now = (await uploads().get(upload.id))?.claimExpires;
        return now && now > previous ? now : undefined;
      }, 'the claim to be renewed');
      await slow.send(Buffer.from('a'));
      sent++;
    }
    const competing = await put(upload, 'b'.repeat(size));
    expect(competing.status).toBe(409);
    await slow.send(Buffer.from('a'.repeat(size - sent)));
    slow.end();
    expect(await slow.outcome).toMatchObject({ status: 200, body: { status: 'ready' } });
    expect(await stored(fileBlobKey(projectid, upload.boxid))).toBe('a'.repeat(size));
  });

  it('gives up a PUT that sends nothing for a whole deadline: keeps nothing and frees the URL', async () => {
    const { projectid } = await newProject();
    const upload = await requestUpload(projectid, 1000);
    const stalled = streamedPut(upload.url, uploadHeaders(upload), 1000);
    await stalled.send(Buffer.alloc(100, 1));
    await until(async () => (await temporaryFiles(blobRoot())).length > 0 && (await uploads().get(upload.id))?.claimToken, 'the PUT to be under way');
    t.server.clock.advance(CLAIM_MS + 1);
    expect(await stalled.outcome).toMatchObject({ status: 408, body: { type: "/problems/request-timeout", detail: expect.stringMatching(/No bytes arrived for 1 second\b/) } });
    await until(async () => (await uploads().get(upload.id))?.claimToken === null, 'the claim to be given back');
    expect(await temporaryFiles(blobRoot())).toEqual([]);
    expect(await t.server.ctx.blobs.stat(fileBlobKey(projectid, upload.boxid))).toBeUndefined();
    expect((await put(upload, Buffer.alloc(1000, 2))).status).toBe(200);
  });

  describe('a commit that fails after the bytes arrived', () => {
    /** Makes the next transaction fail after its work ran, as a commit that fails does (everything it did is rolled back). */
    function failNextCommit() {
      const store = t.server.ctx.store;
      const transaction = store.transaction;
      store.transaction = function failing<T>(work: (tx: Store) => Promise<T>): Promise<T> {
        store.transaction = transaction;
        return transaction(async (tx) => {
          await work(tx as Store);
          throw new Error('the database connection was lost during COMMIT');
        }) as Promise<T>;
      };
    }

    it('removes the stored bytes and gives the claim back: the file still awaits its upload and the URL works again', async () => {
      const { projectid } = await newProject();
      const upload = await requestUpload(projectid, 10);
      failNextCommit();
      const failed = await put(upload, '0123456789');
      expect(failed.status).toBe(500);
      expect(await t.server.ctx.blobs.stat(fileBlobKey(projectid, upload.boxid))).toBeUndefined();
      expect(await uploads().get(upload.id)).toMatchObject({ claimToken: null, timeCompleted: null });
      expect(await fileStatus(projectid, upload.boxid)).toBe('awaiting-upload');
      const retry = await put(upload, 'abcdefghij');
      expect(retry.status).toBe(200);
      expect(await stored(fileBlobKey(projectid, upload.boxid))).toBe('abcdefghij');
    });

    it('does the same for artwork: no artwork is set and its bytes are gone', async () => {
      const { api, projectid } = await newProject();
      const { data: artwork } = await api.POST('/projects/{projectid}/artwork', { params: { path: { projectid } }, body: { name: 'cover.png', mimeType: 'image/png', size: onePixelPng.length } });
      failNextCommit();
      const failed = await put(artwork!, Buffer.from(onePixelPng));
      expect(failed.status).toBe(500);
      expect(await t.server.ctx.blobs.stat(artworkBlobKey(projectid, artwork!.boxid))).toBeUndefined();
      expect((await api.GET('/projects/{projectid}', { params: { path: { projectid } } })).data).not.toHaveProperty('artwork');
      expect((await put(artwork!, Buffer.from(onePixelPng))).status).toBe(200);
      expect((await api.GET('/projects/{projectid}', { params: { path: { projectid } } })).data!.artwork).toMatchObject({ contentType: 'image/png' });
    });

    it('keeps the bytes when the commit landed but its answer was lost, since the file now points at them', async () => {
      const { projectid } = await newProject();
      const upload = await requestUpload(projectid, 10);
      const store = t.server.ctx.store;
      const transaction = store.transaction;
      store.transaction = function committedThenLost<T>(work: (tx: Store) => Promise<T>): Promise<T> {
        store.transaction = transaction;
        return transaction(work).then(() => {
          throw new Error('the connection was lost after COMMIT was sent');
        }) as Promise<T>;
      };
      expect((await put(upload, '0123456789')).status).toBe(500);
      expect(await stored(fileBlobKey(projectid, upload.boxid))).toBe('0123456789');
      expect(await fileStatus(projectid, upload.boxid)).toBe('ready');
      expect((await put(upload, '0123456789')).status).toBe(409);
    });
  });

  describe('the sweep', () => {
    it('removes an upload whose URL expired while a dead server held it, with its file and stack', async () => {
      const { projectid } = await newProject();
      const upload = await requestUpload(projectid, 10);
      expect(await deadServersClaim(upload.id)).toBe(true);
      // What a PUT killed after its bytes appeared, before its commit, leaves.
      await t.server.ctx.blobs.write(fileBlobKey(projectid, upload.boxid), Readable.from([Buffer.from('0123456789')]), { expectedSize: 10 });
      t.server.clock.advance(2 * 3600 * 1000);
      try {
        expect((await sweepUploads(t.server.ctx)).abandonedUploads).toBeGreaterThanOrEqual(1);
      } finally {
        t.server.clock.advance(-2 * 3600 * 1000);
      }
      expect(await uploads().get(upload.id)).toBeUndefined();
      expect(await fileStatus(projectid, upload.boxid)).toBeUndefined();
      expect(await fileStatus(projectid, upload.stackid)).toBeUndefined();
      expect(await t.server.ctx.blobs.stat(fileBlobKey(projectid, upload.boxid))).toBeUndefined();
    });

    it('frees stale claims and removes orphaned blobs, and keeps what live claims and records hold', async () => {
      const { api, projectid } = await newProject();
      const blobs = t.server.ctx.blobs;
      const write = (key: string, content = 'orphan') => blobs.write(key, Readable.from([Buffer.from(content)]), { expectedSize: content.length });
      const stale = await requestUpload(projectid, 6, 'stale.bin');
      const live = await requestUpload(projectid, 6, 'live.bin');
      const done = await requestUpload(projectid, 6, 'done.bin');
      expect((await put(done, 'stored')).status).toBe(200);
      expect((await api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng)).error).toBeUndefined();
      const currentArtwork = await artworkKey(projectid);
      // A server died after the bytes of `stale` appeared; a PUT of `live` is under way elsewhere, its bytes in place.
      expect(await deadServersClaim(stale.id, t.server.clock.now() - 1)).toBe(true);
      await write(fileBlobKey(projectid, stale.boxid));
      expect(await uploads().claim(live.id, 'live-put', t.server.clock.now(), t.server.clock.now() + 60_000)).toBe(true);
      await write(fileBlobKey(projectid, live.boxid));
      // Bytes of a file deleted since, and artwork no record names.
      await write(fileBlobKey(projectid, 'box_deleted'));
      await write(renditionBlobKey(projectid, 'box_deleted', 'compressed'));
      await write(artworkBlobKey(projectid, 'art_unrecorded'));

      const swept = await sweepUploads(t.server.ctx);
      expect(swept.staleClaims).toBeGreaterThanOrEqual(1);
      expect(swept.orphanedBlobs).toBeGreaterThanOrEqual(4);
      for (const key of [fileBlobKey(projectid, stale.boxid), fileBlobKey(projectid, 'box_deleted'), renditionBlobKey(projectid, 'box_deleted', 'compressed'), artworkBlobKey(projectid, 'art_unrecorded')]) {
        expect(await blobs.stat(key), key).toBeUndefined();
      }
      expect(await stored(fileBlobKey(projectid, live.boxid))).toBe('orphan');
      expect(await stored(fileBlobKey(projectid, done.boxid))).toBe('stored');
      expect(await blobs.stat(currentArtwork)).toBeDefined();
      expect(await uploads().get(stale.id)).toMatchObject({ claimToken: null });
      expect(await uploads().get(live.id)).toMatchObject({ claimToken: 'live-put' });
      // The freed URL works again.
      expect((await put(stale, 'second')).status).toBe(200);
      expect(await stored(fileBlobKey(projectid, stale.boxid))).toBe('second');
    });

    it('never touches a PUT under way: its temporary file and its claim stay, and it completes', async () => {
      const { projectid } = await newProject();
      const upload = await requestUpload(projectid, 1000);
      const slow = streamedPut(upload.url, uploadHeaders(upload), 1000);
      await slow.send(Buffer.alloc(500, 1));
      await until(async () => (await temporaryFiles(blobRoot())).length > 0, 'the PUT to be under way');
      const swept = await sweepUploads(t.server.ctx);
      expect(swept.unfinishedWrites).toBe(0);
      expect(await temporaryFiles(blobRoot())).toHaveLength(1);
      expect((await uploads().get(upload.id))?.claimToken).toBeTruthy();
      await slow.send(Buffer.alloc(500, 1));
      slow.end();
      expect(await slow.outcome).toMatchObject({ status: 200 });
      expect(await temporaryFiles(blobRoot())).toEqual([]);
    });

    it('logs a failure to remove replaced artwork with the error, and removes those bytes later', async () => {
      const { api, projectid } = await newProject();
      expect((await api.uploadArtwork(projectid, { name: 'one.png', mimeType: 'image/png' }, onePixelPng)).error).toBeUndefined();
      const firstKey = await artworkKey(projectid);
      const { ctx } = t.server;
      const { logger, entries } = recordingLogger();
      const realLogger = ctx.logger;
      const realDelete = ctx.blobs.delete;
      const failure = Object.assign(new Error('EACCES: permission denied, unlink'), { code: 'EACCES' });
      ctx.logger = logger;
      ctx.blobs.delete = async (key) => {
        if (key === firstKey) throw failure;
        return realDelete.call(ctx.blobs, key);
      };
      try {
        expect((await api.uploadArtwork(projectid, { name: 'two.png', mimeType: 'image/png' }, onePixelPng)).error).toBeUndefined();
      } finally {
        ctx.logger = realLogger;
        delete (ctx.blobs as Partial<typeof ctx.blobs>).delete;
      }
      expect(entries).toContainEqual({ level: 'error', message: 'removing the replaced artwork failed', fields: expect.objectContaining({ err: failure, key: firstKey }) });
      expect(await ctx.blobs.stat(firstKey)).toBeDefined();
      await sweepUploads(ctx);
      expect(await ctx.blobs.stat(firstKey)).toBeUndefined();
      expect((await api.GET('/projects/{projectid}', { params: { path: { projectid } } })).data!.artwork).toBeDefined();
    });
  });
});
