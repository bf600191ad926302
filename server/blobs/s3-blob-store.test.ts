import { ListMultipartUploadsCommand, ListPartsCommand } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestS3, type TestS3 } from '../testing/s3.ts';
import { blobStoreConformance } from './blob-store.conformance.ts';
import { BlobStoreUnavailableError } from './blob-store.ts';
import { COPY_PREFIX, createS3Client, S3BlobStore } from './s3-blob-store.ts';

const s3 = useTestS3();

const scratch = mkdtempSync(join(tmpdir(), 's3-blob-copies-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The keys of the multipart uploads under way in a bucket: what writes cut off leave behind on S3. */
async function unfinishedUploads(bucket: string): Promise<string[]> {
  const listing = await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return (listing.Uploads ?? []).map((upload) => upload.Key!);
}

blobStoreConformance('S3 (radosgw)', async () => {
  const bucket = await s3.bucket();
  return {
    store: new S3BlobStore({ client: s3.client, bucket, scratchDir: scratch }),
    leftovers: () => unfinishedUploads(bucket),
    unusable: () => new S3BlobStore({ client: s3.client, bucket: `${bucket}-never-made`, scratchDir: scratch }),
  };
});

/** A write fed by hand, with the chunks the test pushes; resolves once its first chunk was received. */
async function feedByHand(store: S3BlobStore, key: string, expectedSize: number) {
  const source = new Readable({ read() {} });
  let received!: () => void;
  const arrived = new Promise<void>((resolve) => (received = resolve));
  const writing = store.write(key, source, { expectedSize, onProgress: () => received() });
  return {
    writing,
    push: async (chunk: Buffer) => {
      source.push(chunk);
      await arrived;
    },
    end: () => source.push(null),
  };
}

describe('S3 blob store', () => {
  const MIB = 1024 * 1024;

  it('streams a blob larger than a part as several parts, with a bounded number in flight, and reads any range of it', async () => {
    const bucket = await s3.bucket();
    const store = new S3BlobStore({ client: s3.client, bucket, partSize: 5 * MIB, partsInFlight: 2 });
    // 12 MiB and 3 bytes: two whole parts and a short last one.
    const size = 12 * MIB + 3;
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 7 + (i >> 13)) & 0xff;
    const chunks = Array.from({ length: Math.ceil(size / 65536) }, (_, i) => bytes.subarray(i * 65536, (i + 1) * 65536));
    expect(await store.write('big/blob', Readable.from(chunks), { expectedSize: size })).toEqual({ size });
    expect(await store.stat('big/blob')).toEqual({ size });
    const whole = Buffer.concat(await Readable.from(store.read('big/blob')).toArray());
    expect(whole.equals(bytes)).toBe(true);
    const start = 5 * MIB - 10;
    const middle = Buffer.concat(await store.read('big/blob', { start, end: start + 19 }).toArray());
    expect(middle.equals(bytes.subarray(start, start + 20))).toBe(true);
    expect(await unfinishedUploads(bucket)).toEqual([]);
  });

  it('makes no object until the last part is stored: a blob being written is not there yet', async () => {
    const bucket = await s3.bucket();
    const store = new S3BlobStore({ client: s3.client, bucket, partSize: 5 * MIB });
    const write = await feedByHand(store, 'slow/blob', 6 * MIB);
    await write.push(Buffer.alloc(6 * MIB - 1, 1));
    expect(await store.stat('slow/blob')).toBeUndefined();
    write.push(Buffer.from([2]));
    write.end();
    expect(await write.writing).toEqual({ size: 6 * MIB });
    expect(await store.stat('slow/blob')).toEqual({ size: 6 * MIB });
  });

  it('keeps a slow write alive through a sweep while its bytes flow, and lets the sweep take it once they stop', async () => {
    const bucket = await s3.bucket();
    const store = new S3BlobStore({ client: s3.client, bucket, keepAliveMs: 200 });
    const write = await feedByHand(store, 'trickle/blob', 100);
    await write.push(Buffer.from('x'));
    // Bytes keep arriving, a few a tenth of a second, far fewer than a part, for 3 s: S3 hears of it every 200 ms.
    // S3's clock counts whole seconds, so an idle time of 1.5 s is judged as 1 to 2 s.
    let sent = 1;
    const sweeps: number[] = [];
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await write.push(Buffer.from('y'));
      sent++;
      sweeps.push(await store.sweepUnfinishedWrites(1500));
    }
    expect(sweeps.every((removed) => removed === 0)).toBe(true);
    // Its placeholder is the part being filled; the bytes so far are still in memory.
    const [upload] = (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads!;
    const parts = await s3.client.send(new ListPartsCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
    expect(parts.Parts?.map((part) => [part.PartNumber, part.Size])).toEqual([[1, 0]]);
    // Then nothing more arrives: within a few seconds it is idle for 1.5 s by S3's clock, and swept.
    const deadline = Date.now() + 5000;
    let removed = 0;
    while (removed === 0 && Date.now() < deadline) removed = await store.sweepUnfinishedWrites(1500);
    expect(removed).toBe(1);
    write.push(Buffer.alloc(100 - sent, 'z'));
    write.end();
    await expect(write.writing).rejects.toThrow();
    expect(await store.stat('trickle/blob')).toBeUndefined();
  }, 20_000);

  it('completes a write whose placeholder part the last part replaces', async () => {
    const bucket = await s3.bucket();
    const store = new S3BlobStore({ client: s3.client, bucket, keepAliveMs: 50 });
    const write = await feedByHand(store, 'placeholder/blob', 6);
    await write.push(Buffer.from('abc'));
    // Wait until the placeholder is stored: the upload shows part 1, empty.
    const deadline = Date.now() + 5000;
    for (;;) {
      const [upload] = (await s3.client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))).Uploads ?? [];
      const parts = upload && (await s3.client.send(new ListPartsCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }))).Parts;
      if (parts?.length || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    write.push(Buffer.from('def'));
    write.end();
    expect(await write.writing).toEqual({ size: 6 });
    expect(await text(store.read('placeholder/blob'))).toBe('abcdef');
  });

  it('copies a blob to a local file readable by the server alone, and removes the copy on release', async () => {
    const bucket = await s3.bucket();
    const folder = mkdtempSync(join(scratch, 'copies-'));
    const store = new S3BlobStore({ client: s3.client, bucket, scratchDir: folder });
    await store.write('copy/me', Readable.from([Buffer.from('audio bytes')]), { expectedSize: 11 });
    const local = await store.localFile('copy/me');
    expect(local.path.startsWith(folder)).toBe(true);
    expect((await stat(local.path)).mode & 0o777).toBe(0o600);
    expect(await readFile(local.path, 'utf8')).toBe('audio bytes');
    await local.release();
    expect(await readdir(folder)).toEqual([]);
    await expect(store.localFile('copy/missing')).rejects.toThrow('No blob copy/missing');
    expect(await readdir(folder)).toEqual([]);
  });

  it('removes, when it makes a copy, the copies of processes that are gone, and keeps those of running ones', async () => {
    const folder = mkdtempSync(join(scratch, 'crashed-'));
    const store = new S3BlobStore({ client: s3.client, bucket: await s3.bucket(), scratchDir: folder });
    await store.write('copy/me', Readable.from([Buffer.from('x')]), { expectedSize: 1 });
    // A pid that surely ran and is gone: a process that has exited.
    const gone = spawnSync('true').pid!;
    const left = { gone: `${COPY_PREFIX}${gone}-AbCdEf`, running: `${COPY_PREFIX}${process.ppid}-GhIjKl`, other: 'analyse-MnOpQr' };
    for (const name of Object.values(left)) {
      await mkdir(join(folder, name));
      await writeFile(join(folder, name, 'blob'), 'left behind');
    }
    const local = await store.localFile('copy/me');
    expect((await readdir(folder)).sort()).toEqual([left.running, left.other, basename(dirname(local.path))].sort());
    await local.release();
  });

  it('signs GETs straight from the bucket, with the type, disposition and caching asked for, Range and ETag from S3, until exactly their expiry', async () => {
    const store = new S3BlobStore({ client: s3.client, bucket: await s3.bucket() });
    await store.write('signed/blob', Readable.from([Buffer.from('0123456789')]), { expectedSize: 10 });
    const options = { ttlSeconds: 60, contentType: 'audio/flac', contentDisposition: 'inline; filename="a.flac"', cacheControl: 'private, max-age=3600' };
    const now = Date.now();
    const signed = await store.presignedGet('signed/blob', { ...options, now });
    expect(signed.expires).toBe(Math.floor(now / 1000) * 1000 + 60_000);
    const whole = await fetch(signed.url);
    expect(whole.status).toBe(200);
    expect(Object.fromEntries(['content-type', 'content-disposition', 'cache-control'].map((name) => [name, whole.headers.get(name)]))).toEqual({
      'content-type': 'audio/flac',
      'content-disposition': 'inline; filename="a.flac"',
      'cache-control': 'private, max-age=3600',
    });
    const etag = whole.headers.get('etag');
    // A strong ETag, of a multipart upload here ("<md5 of the parts' md5s>-<parts>").
    expect(etag).toMatch(/^"[0-9a-f]{32}-1"$/);
    const part = await fetch(signed.url, { headers: { Range: 'bytes=2-4' } });
    expect([part.status, part.headers.get('content-range'), await part.text()]).toEqual([206, 'bytes 2-4/10', '234']);
    expect((await fetch(signed.url, { headers: { 'If-None-Match': etag! } })).status).toBe(304);
    // Signed 61 s ago for 60 s: expired one second ago, and S3 refuses it.
    const expired = await store.presignedGet('signed/blob', { ...options, now: now - 61_000 });
    expect(expired.expires).toBeLessThan(Date.now());
    const refused = await fetch(expired.url);
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('AccessDenied');
  });

  it('sends no checksum the operation does not require (the SDK default that some S3 stores refuse, and that radosgw would not catch)', async () => {
    const client = createS3Client(s3.settings);
    const sent: Array<{ method: string; headers: Record<string, string>; query: Record<string, unknown> }> = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { method: string; headers: Record<string, string>; query: Record<string, unknown> };
        sent.push({ method: request.method, headers: { ...request.headers }, query: { ...request.query } });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'recordRequests' },
    );
    const store = new S3BlobStore({ client, bucket: await s3.bucket(), partSize: 5 * MIB });
    await store.write('checked/write', Readable.from([Buffer.alloc(6 * MIB, 3)]), { expectedSize: 6 * MIB });
    const { mkdtemp } = await import('node:fs/promises');
    const file = join(await mkdtemp(join(scratch, 'adopt-')), 'rendition');
    await writeFile(file, 'rendition');
    await store.adopt('checked/adopted', file);
    await text(store.read('checked/write', { start: 0, end: 9 }));
    expect(sent.map((request) => request.method)).toEqual(['POST', 'PUT', 'PUT', 'POST', 'PUT', 'GET']);
    for (const request of sent) {
      const names = [...Object.keys(request.headers), ...Object.keys(request.query)].map((name) => name.toLowerCase());
      expect(names.filter((name) => name.startsWith('x-amz-checksum') || name.startsWith('x-amz-sdk-checksum') || name === 'x-amz-trailer')).toEqual([]);
      expect(request.headers['content-encoding'] ?? '').not.toContain('aws-chunked');
    }
    client.destroy();
  });

  it('fails a read of a missing blob as reading a missing file does', async () => {
    const store = new S3BlobStore({ client: s3.client, bucket: await s3.bucket() });
    await expect(text(store.read('no/such'))).rejects.toMatchObject({ code: 'ENOENT', message: 'No blob no/such' });
  });

  describe('checking the bucket at start', () => {
    const storeFor = (overrides: Partial<TestS3['settings']>, bucket: string) =>
      new S3BlobStore({ client: createS3Client({ ...s3.settings, ...overrides }), bucket, description: `bucket ${bucket} at ${overrides.endpoint ?? s3.settings.endpoint}` });

    it('passes for a bucket these keys may use', async () => {
      await expect(storeFor({}, await s3.bucket()).check()).resolves.toBeUndefined();
    });

    it('says the bucket does not exist', async () => {
      await expect(storeFor({}, 'no-such-bucket-here').check()).rejects.toThrow(
        /^Cannot use the S3 bucket no-such-bucket-here at http:\/\/127\.0\.0\.1:\d+: the bucket does not exist/,
      );
    });

    it('says the keys are refused', async () => {
      const error = await storeFor({ secretAccessKey: 'not-the-secret' }, await s3.bucket())
        .check()
        .catch((error: unknown) => error);
      expect(error).toBeInstanceOf(BlobStoreUnavailableError);
      expect((error as Error).message).toMatch(/access denied: check S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/);
    });

    it('says nothing answers at the endpoint', async () => {
      // A port nothing listens on: the connection is refused at once.
      const { createServer } = await import('node:net');
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      await new Promise((resolve) => server.close(resolve));
      await expect(storeFor({ endpoint: `http://127.0.0.1:${port}` }, 'any').check()).rejects.toThrow(
        new RegExp(`^Cannot use the S3 bucket any at http://127\\.0\\.0\\.1:${port}: nothing usable answers there \\(ECONNREFUSED.*check S3_ENDPOINT`),
      );
    });
  });
});
