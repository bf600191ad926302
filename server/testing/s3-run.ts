/**
 * An S3 store for a whole run outside vitest's server project (the bench,
 * the contract suite's global setup): radosgw on loopback, started by
 * scripts/radosgw.sh and stopped by close() if this call started it, or the
 * store TEST_S3_ENDPOINT names (with TEST_S3_ACCESS_KEY_ID and
 * TEST_S3_SECRET_ACCESS_KEY), as server/testing/s3.ts does for the tests.
 * Its buckets allow CORS reads from any origin, as deploy/README.md asks of
 * a bucket that player pages play from.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, PutBucketCorsCommand, type S3Client } from '@aws-sdk/client-s3';
import { createS3Client } from '../blobs/s3-blob-store.ts';
import { fromTestEnv, radosgwSettings, removeBucket, s3Env, type S3Connection } from './s3.ts';

const root = resolve(import.meta.dirname, '../..');

export interface RunS3 {
  settings: S3Connection;
  client: S3Client;
  /** A new empty bucket, removed (with everything in it) by close(). */
  bucket(): Promise<string>;
  /** The server's environment for this store and `bucket`. */
  env(bucket: string): Record<string, string>;
  /** Removes the buckets made, and stops radosgw if this call started it. */
  close(): Promise<void>;
}

/** radosgw on loopback (scripts/radosgw.sh), or the S3 store TEST_S3_ENDPOINT names, as the server's tests find it. */
export async function openRunS3(): Promise<RunS3> {
  let settings: S3Connection;
  let owner: string | undefined;
  if (process.env.TEST_S3_ENDPOINT) {
    settings = fromTestEnv(process.env);
  } else {
    owner = `run-${randomUUID()}`;
    const { stdout } = await promisify(execFile)(join(root, 'scripts/radosgw.sh'), ['start'], {
      // radosgw keeps objects in memory, deleted ones until its garbage collection minutes later: room for the gigabytes the parts write.
      env: { RADOSGW_MEMORY_BYTES: String(8 * 1024 ** 3), ...process.env, RADOSGW_OWNER: owner },
      timeout: 180_000,
    });
    settings = radosgwSettings(stdout);
  }
  const client = createS3Client(settings);
  const buckets: string[] = [];
  return {
    settings,
    client,
    async bucket() {
      const name = `run-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
      await client.send(new CreateBucketCommand({ Bucket: name }));
      // As deploy/README.md asks of a bucket that player pages read.
      await client.send(new PutBucketCorsCommand({ Bucket: name, CORSConfiguration: { CORSRules: [{ AllowedOrigins: ['*'], AllowedMethods: ['GET', 'HEAD'], AllowedHeaders: ['*'] }] } }));
      buckets.push(name);
      return name;
    },
    env(bucket) {
      return s3Env(settings, bucket);
    },
    async close() {
      for (const bucket of buckets) await removeBucket(client, bucket).catch(() => {});
      client.destroy();
      const dir = process.env.RADOSGW_DIR || join(tmpdir(), 'audio-share-radosgw');
      let startedBy = '';
      try {
        startedBy = readFileSync(join(dir, 'owner'), 'utf8').trim();
      } catch {}
      if (owner && startedBy === owner) await promisify(execFile)(join(root, 'scripts/radosgw.sh'), ['stop'], { timeout: 120_000 });
    },
  };
}
