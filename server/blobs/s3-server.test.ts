/**
 * The whole server on an S3 bucket (radosgw): uploads through the API land
 * in the bucket, the audio worker reads them and writes renditions and peaks
 * there, downloads read them back, deletes remove them, and nothing is left
 * on local disk but the database. And a server whose bucket cannot be used
 * does not start.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createContext } from '../open-context.ts';
import { backends } from '../testing/databases.ts';
import { useTestServer } from '../testing/harness.ts';
import { eventually, makeAudio, sineAt } from '../testing/audio.ts';
import { waitForStatus } from '../testing/files.ts';
import { useTestS3 } from '../testing/s3.ts';
import { fileBlobKey, projectBlobPrefix, renditionBlobKey } from './keys.ts';
import { S3BlobStore } from './s3-blob-store.ts';
import { signDownload } from '../signing/signed-downloads.ts';
import { sweepUploads } from '../resources/uploads/upload-sweeper.ts';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.each(backends)('a server on S3 (radosgw), %s', (backend) => {
  const s3 = useTestS3();
  // Filled in before the server starts (its beforeAll runs after this one).
  const env: Record<string, string> = { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100' };
  let bucket: string;
  let wav: Buffer;
  beforeAll(async () => {
    bucket = await s3.bucket();
    Object.assign(env, s3.env(bucket));
    wav = await makeAudio('take.wav', ['-f', 'lavfi', '-i', `aevalsrc=${sineAt(-12)}|${sineAt(-12)}:s=44100:d=2:c=stereo`, '-c:a', 'pcm_s16le']);
  });
  const t = useTestServer(backend, env);

  const keysUnder = async (prefix: string) => {
    const listing = await s3.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (listing.Contents ?? []).map((object) => object.Key!).sort();
  };

  it('stores an upload in the bucket, analyses it from there, puts its renditions and peaks beside it, serves them, and removes them all with the file', async () => {
    expect(t.server.ctx.blobs).toBeInstanceOf(S3BlobStore);
    const { api } = await t.as('s3@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'On S3' } });
    const projectid = project!.id;
    const { data: uploaded, error } = await api.uploadFile(projectid, { name: 'take.wav', mimeType: 'audio/wav' }, wav);
    expect(error).toBeUndefined();
    const boxid = uploaded!.box.id;
    const head = await s3.client.send(new HeadObjectCommand({ Bucket: bucket, Key: fileBlobKey(projectid, boxid) }));
    expect(head.ContentLength).toBe(wav.length);

    const file = await waitForStatus(api, projectid, boxid);
    expect(file).toMatchObject({ status: 'ready', duration: 2, audio: { codec: 'pcm_s16le', renditions: ['original', 'compressed', 'lossless'] } });
    expect(await keysUnder(projectBlobPrefix(projectid))).toEqual(
      [fileBlobKey(projectid, boxid), ...(['compressed', 'lossless', 'peaks-dat', 'peaks-json'] as const).map((variant) => renditionBlobKey(projectid, boxid, variant))].sort(),
    );
    // Nothing of the file on local disk: no blobs folder, and the analysis's copy and scratch go once it is done
    // (the job removes them just after it marks the file ready).
    const dataDir = t.server.ctx.config.dataDir;
    expect(existsSync(join(dataDir, 'blobs'))).toBe(false);
    await eventually(async () => (await readdir(join(dataDir, 'tmp'))).length === 0, 'the scratch folder is empty');

    const path = { projectid, fileid: boxid };
    // Downloads come straight from the bucket: a presigned GET, which works until exactly `expires`.
    const original = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path } });
    const presigned = new URL(original.data!.url);
    expect(presigned.origin).toBe(new URL(s3.settings.endpoint!).origin);
    const signedAt = presigned.searchParams.get('X-Amz-Date')!.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z');
    expect(original.data!.expires).toBe(Date.parse(signedAt) + Number(presigned.searchParams.get('X-Amz-Expires')) * 1000);
    expect(original.data!.expires - Date.now()).toBeGreaterThan(3598_000);
    const served = await fetch(original.data!.url);
    expect(served.headers.get('content-type')).toBe('audio/wav');
    expect(served.headers.get('content-disposition')).toBe('attachment; filename="take.wav"');
    expect(sha256(new Uint8Array(await served.arrayBuffer()))).toBe(sha256(wav));
    const ranged = await fetch(original.data!.url, { headers: { Range: 'bytes=0-11' } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer()).toString('latin1')).toMatch(/^RIFF....WAVE$/s);
    const compressed = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path, query: { quality: 'compressed' } } });
    const m4a = Buffer.from(await (await fetch(compressed.data!.url)).arrayBuffer());
    expect(m4a.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const peaks = await api.GET('/projects/{projectid}/files/{fileid}/peaks', { params: { path } });
    expect(await (await fetch(peaks.data!.url)).json()).toMatchObject({ version: 2, channels: 1, sample_rate: 44100, length: 200 });

    // This server's own signed URLs (player pages, artwork) are checked here, then sent to the bucket: no bytes through Node.
    const own = signDownload(t.server.ctx, boxid, 'inline').url;
    const redirect = await fetch(own, { redirect: 'manual' });
    expect(redirect.status).toBe(307);
    expect(redirect.headers.get('x-content-type-options')).toBe('nosniff');
    expect(new URL(redirect.headers.get('location')!).origin).toBe(new URL(s3.settings.endpoint!).origin);
    const streamed = await fetch(own);
    expect(new URL(streamed.url).origin).toBe(new URL(s3.settings.endpoint!).origin);
    expect(streamed.headers.get('content-type')).toBe('audio/wav');
    expect(streamed.headers.get('content-disposition')).toBe('inline; filename="take.wav"');
    expect(sha256(new Uint8Array(await streamed.arrayBuffer()))).toBe(sha256(wav));
    // A tampered signature is refused by the server, before any bucket URL is made.
    const tampered = own.replace(/signature=([0-9a-f])/, (_, first: string) => `signature=${first === '0' ? '1' : '0'}`);
    const refused = await fetch(tampered, { redirect: 'manual' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('location')).toBeNull();

    await api.DELETE('/projects/{projectid}/files/{fileid}', { params: { path } });
    expect(await keysUnder(projectBlobPrefix(projectid))).toEqual([]);
    expect((await fetch(original.data!.url)).status).toBe(404);
  });

  it('serves uploaded bytes that are not on the inline allow-list from the bucket as an opaque attachment, whatever their declared type, and refuses a URL asking for another type', async () => {
    const { api } = await t.as('s3@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Hostile' } });
    const page = new TextEncoder().encode('<!doctype html><script>alert(document.domain)</script>');
    const { data: uploaded } = await api.uploadFile(project!.id, { name: '../../index.html', mimeType: 'text/html' }, page);
    const { data } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: project!.id, fileid: uploaded!.box.id } } });
    const served = await fetch(data!.url);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('application/octet-stream');
    expect(served.headers.get('content-disposition')).toBe('attachment; filename="index.html"');
    // The type and disposition are in the signed query: changing them breaks the signature.
    const altered = new URL(data!.url);
    altered.searchParams.set('response-content-type', 'text/html');
    altered.searchParams.set('response-content-disposition', 'inline');
    const refused = await fetch(altered);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('SignatureDoesNotMatch');
  });

  it('sweeps the bucket: bytes no record points at are removed', async () => {
    // What a server that died between storing the bytes and committing the record leaves.
    const key = fileBlobKey('prj_gone', 'box_gone');
    await t.server.ctx.blobs.write(key, Readable.from([Buffer.from('orphan')]), { expectedSize: 6 });
    const swept = await sweepUploads(t.server.ctx);
    expect(swept.orphanedBlobs).toBeGreaterThanOrEqual(1);
    expect(await t.server.ctx.blobs.stat(key)).toBeUndefined();
  });

  it('keeps nothing in the bucket of a PUT it refuses: a body longer than declared leaves no object and no unfinished upload', async () => {
    const { api } = await t.as('s3@example.com');
    const { data: project } = await api.POST('/projects', { body: { name: 'Refused' } });
    const { data } = await api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: 'a.bin', mimeType: 'application/octet-stream', size: 10 } });
    // No Content-Length (chunked), so the server learns of the excess only while storing the bytes.
    const body = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(8));
        controller.enqueue(new Uint8Array(8));
        controller.close();
      },
    });
    const put = await fetch(data!.url, { method: 'PUT', headers: data!.headers as Record<string, string>, body, duplex: 'half' } as RequestInit);
    expect(put.status).toBe(413);
    expect(await keysUnder(projectBlobPrefix(project!.id))).toEqual([]);
    expect((await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? []).toEqual([]);
  });
});

describe('a server whose bucket cannot be used', () => {
  const s3 = useTestS3();
  const dataDirs: string[] = [];
  afterAll(async () => {
    const { rm } = await import('node:fs/promises');
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  });

  it('does not start, and says which bucket at which endpoint, and why', async () => {
    const { mkdtemp } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dataDir = await mkdtemp(join(tmpdir(), 's3-start-'));
    dataDirs.push(dataDir);
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...s3.env('no-such-bucket') });
    await expect(createContext(config)).rejects.toThrow(`Cannot use the S3 bucket no-such-bucket at ${s3.settings.endpoint}: the bucket does not exist: create it, or set S3_BUCKET to one that does.`);
    // Nothing was opened: no database was made.
    expect(await readdir(dataDir)).not.toContain('audio-share.sqlite');
  });
});
