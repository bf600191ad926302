/**
 * GET /readyz: 200 when the database and the blob store answer and the
 * process is not draining; otherwise 503, a problem that names what failed.
 */
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CreateBucketCommand, DeleteBucketCommand } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backends } from '../testing/databases.ts';
import { startTestServer, type TestServer } from '../testing/test-server.ts';
import { useTestS3 } from '../testing/s3.ts';
import { READINESS_TIMEOUT_MS } from './readiness.ts';

async function readyz(server: TestServer) {
  const response = await fetch(`${server.address}/readyz`);
  return { status: response.status, type: response.headers.get('content-type'), cache: response.headers.get('cache-control'), connection: response.headers.get('connection'), body: await response.json() };
}

const notReady = (detail: RegExp, checks: Record<string, unknown>) => ({
  status: 503,
  type: expect.stringMatching(/^application\/problem\+json/),
  body: expect.objectContaining({ type: '/problems/service-unavailable', status: 503, detail: expect.stringMatching(detail), checks }),
});

describe.each(backends)('GET /readyz on %s', (backend) => {
  it('answers 200 ready when the database and the blob store answer, without rate limits or a token', async () => {
    const server = await startTestServer(backend, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '1' });
    try {
      // Far more than the address limit of 1 allows: a prober is never refused.
      for (let i = 0; i < 5; i++) expect(await readyz(server)).toMatchObject({ status: 200, cache: 'no-store', body: { status: 'ready' } });
    } finally {
      await server.stop();
    }
  });

  it('answers 503 naming the database once the database is closed', async () => {
    const server = await startTestServer(backend);
    try {
      await server.ctx.store.close();
      const answer = await readyz(server);
      expect(answer).toMatchObject(notReady(/^Not ready: the database does not answer\.$/, { database: 'failed', blobStore: 'ok', draining: false }));
      // Why is logged, not told to whoever asks: no driver message in the answer.
      expect(JSON.stringify(answer.body)).not.toMatch(/pool|connection|sqlite/i);
    } finally {
      // The store is closed already; closing it again (as stop does) may refuse on PostgreSQL.
      await server.stop().catch(() => {});
    }
  });

  it('answers 503 promptly when the database hangs', async () => {
    const server = await startTestServer(backend);
    try {
      server.ctx.store.ping = () => new Promise<void>(() => {});
      const started = performance.now();
      expect(await readyz(server)).toMatchObject(notReady(/the database does not answer/, { database: 'failed', blobStore: 'ok', draining: false }));
      expect(performance.now() - started).toBeLessThan(READINESS_TIMEOUT_MS + 1000);
    } finally {
      await server.stop();
    }
  });

  it('answers 503 naming the blob store once its folder is gone', async () => {
    const server = await startTestServer(backend);
    try {
      const blobs = join(server.ctx.config.dataDir, 'blobs');
      expect((await readyz(server)).status).toBe(200);
      // A file where the folder was: it cannot be written, or made again.
      await rename(blobs, `${blobs}-moved`);
      await writeFile(blobs, 'not a folder');
      expect(await readyz(server)).toMatchObject(notReady(/^Not ready: the blob store cannot be used\.$/, { database: 'ok', blobStore: 'failed', draining: false }));
    } finally {
      await server.stop();
    }
  });

  it('answers 503 draining to a request under way when the shutdown begins, and closes its connection', async () => {
    const server = await startTestServer(backend);
    try {
      // Holds the readiness request inside its blob-store check until the shutdown has begun.
      const check = server.ctx.blobs.check.bind(server.ctx.blobs);
      let entered!: () => void;
      const inCheck = new Promise<void>((resolve) => (entered = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      server.ctx.blobs.check = async (timeoutMs) => {
        entered();
        await released;
        return check(timeoutMs);
      };
      const answer = readyz(server);
      await inCheck;
      const closing = server.close();
      release();
      expect(await answer).toMatchObject({
        ...notReady(/^Not ready: this process is shutting down \(draining\)\.$/, { database: 'ok', blobStore: 'ok', draining: true }),
        connection: 'close',
      });
      await closing;
    } finally {
      await server.stop();
    }
  });
});

describe('GET /readyz on S3 (radosgw)', () => {
  const s3 = useTestS3();

  it('answers 503 naming the blob store once the bucket is gone, and 200 again once it is back', async () => {
    // Made here rather than by s3.bucket(), which would try to remove it again at the end.
    const bucket = `test-readyz-${randomBytes(4).toString('hex')}`;
    await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
    const server = await startTestServer('postgres', s3.env(bucket));
    try {
      expect(await readyz(server)).toMatchObject({ status: 200, body: { status: 'ready' } });
      await s3.client.send(new DeleteBucketCommand({ Bucket: bucket }));
      expect(await readyz(server)).toMatchObject(notReady(/^Not ready: the blob store cannot be used\.$/, { database: 'ok', blobStore: 'failed', draining: false }));
      await s3.client.send(new CreateBucketCommand({ Bucket: bucket }));
      expect(await readyz(server)).toMatchObject({ status: 200, body: { status: 'ready' } });
    } finally {
      await server.stop();
      await s3.client.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => {});
    }
  });
});
