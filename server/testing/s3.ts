/**
 * An S3 store for tests: Ceph's radosgw on loopback, started by
 * scripts/radosgw.sh the first time a test asks for it (a run that needs no
 * S3 never waits for it), shared by every test file of the run, and stopped
 * at the end by the server project's global setup (radosgw-global-setup.ts)
 * if this run started it. One already running (scripts/radosgw.sh start, by
 * hand) is used and left running.
 *
 * TEST_S3_ENDPOINT (with TEST_S3_ACCESS_KEY_ID, TEST_S3_SECRET_ACCESS_KEY,
 * and optionally TEST_S3_REGION and TEST_S3_FORCE_PATH_STYLE) points the
 * tests at another S3 store instead, as TEST_POSTGRES_URL does for
 * PostgreSQL.
 *
 * Each test file makes its own buckets, and removes them (objects and
 * unfinished uploads too) when it ends: radosgw keeps them in memory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, inject } from 'vitest';
import { createS3Client, type S3Settings } from '../blobs/s3-blob-store.ts';

export type S3Connection = Omit<S3Settings, 'bucket'>;

export interface TestS3 {
  settings: S3Connection;
  client: S3Client;
  /** Makes an empty bucket of its own, removed with everything in it when the test file ends. */
  bucket(): Promise<string>;
  /** The server's environment variables for this store and `bucket`. */
  env(bucket: string): Record<string, string>;
}

const root = resolve(import.meta.dirname, '../..');
const INSTALL = 'apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd';

let started: Promise<S3Connection> | undefined;

/** Starts radosgw on first use (or finds it, or the store TEST_S3_ENDPOINT names), and its connection settings. */
export function s3Connection(): Promise<S3Connection> {
  started ??= process.env.TEST_S3_ENDPOINT ? Promise.resolve(fromTestEnv(process.env)) : startRadosgw();
  return started;
}

/** The server's environment variables for an S3 store and a bucket of it. */
export function s3Env(settings: S3Connection, bucket: string): Record<string, string> {
  return {
    BLOB_STORE: 's3',
    S3_ENDPOINT: settings.endpoint ?? '',
    S3_BUCKET: bucket,
    S3_REGION: settings.region,
    S3_ACCESS_KEY_ID: settings.accessKeyId,
    S3_SECRET_ACCESS_KEY: settings.secretAccessKey,
    S3_FORCE_PATH_STYLE: String(settings.forcePathStyle),
  };
}

/** The settings scripts/radosgw.sh prints (S3_ENDPOINT=…, one a line). */
export function radosgwSettings(stdout: string): S3Connection {
  const values = Object.fromEntries(stdout.trim().split('\n').map((line) => line.split(/=(.*)/s, 2) as [string, string]));
  return {
    endpoint: values.S3_ENDPOINT,
    region: values.S3_REGION,
    accessKeyId: values.S3_ACCESS_KEY_ID,
    secretAccessKey: values.S3_SECRET_ACCESS_KEY,
    forcePathStyle: values.S3_FORCE_PATH_STYLE === 'true',
  };
}

export function fromTestEnv(env: NodeJS.ProcessEnv): S3Connection {
  const missing = ['TEST_S3_ACCESS_KEY_ID', 'TEST_S3_SECRET_ACCESS_KEY'].filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`TEST_S3_ENDPOINT is set, but ${missing.join(' and ')} are not: give the keys of the S3 store the tests should use.`);
  return {
    endpoint: env.TEST_S3_ENDPOINT,
    region: env.TEST_S3_REGION || 'us-east-1',
    accessKeyId: env.TEST_S3_ACCESS_KEY_ID!,
    secretAccessKey: env.TEST_S3_SECRET_ACCESS_KEY!,
    forcePathStyle: (env.TEST_S3_FORCE_PATH_STYLE ?? 'true') === 'true',
  };
}

async function startRadosgw(): Promise<S3Connection> {
  // Never skipped: without radosgw the S3 tests fail, saying how to install it (.ci/run does).
  const missing = await promisify(execFile)('sh', ['-c', 'for tool in radosgw ceph-mon ceph-osd; do command -v $tool >/dev/null || echo $tool; done']);
  const absent = missing.stdout.trim().split('\n').filter(Boolean);
  if (absent.length > 0) {
    throw new Error(
      `The S3 tests run against Ceph's radosgw, and ${absent.join(', ')} ${absent.length === 1 ? 'is' : 'are'} not installed. Install ${absent.length === 1 ? 'it' : 'them'} with: ${INSTALL} (or point TEST_S3_ENDPOINT at another S3 store).`,
    );
  }
  const startedAt = Date.now();
  let stdout: string;
  try {
    // The global setup names this run as the owner, so that it stops radosgw at the end only if this run started it.
    const owner: string | undefined = inject('radosgwOwner');
    ({ stdout } = await promisify(execFile)(resolve(root, 'scripts/radosgw.sh'), ['start'], {
      env: { ...process.env, ...(owner ? { RADOSGW_OWNER: owner } : {}) },
      timeout: 180_000,
    }));
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new Error(`scripts/radosgw.sh start failed: ${stderr?.trim() || (error as Error).message}`);
  }
  const settings = radosgwSettings(stdout);
  if (process.env.TEST_LOG_LEVEL === 'debug') console.error(`radosgw ready at ${settings.endpoint} after ${Date.now() - startedAt} ms`);
  return settings;

}

/**
 * For a test file, as useTestServer: the S3 store, ready from the file's
 * first beforeAll on (the first file of a run may wait ~15 s there while
 * radosgw starts). Buckets made through it are removed when the file ends.
 */
export function useTestS3(): TestS3 {
  let ready: { settings: S3Connection; client: S3Client } | undefined;
  const buckets: string[] = [];
  beforeAll(async () => {
    const settings = await s3Connection();
    ready = { settings, client: createS3Client(settings) };
  }, 180_000);
  afterAll(async () => {
    if (!ready) return;
    for (const bucket of buckets) await removeBucket(ready.client, bucket);
    ready.client.destroy();
  });
  const connected = () => {
    if (!ready) throw new Error('The S3 store is not ready yet: use it in beforeAll or a test');
    return ready;
  };
  return {
    get settings() {
      return connected().settings;
    },
    get client() {
      return connected().client;
    },
    async bucket() {
      // Bucket names: 3 to 63 lowercase letters, digits and hyphens.
      const name = `test-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
      await connected().client.send(new CreateBucketCommand({ Bucket: name }));
      buckets.push(name);
      return name;
    },
    env(bucket: string) {
      return s3Env(connected().settings, bucket);
    },
  };
}

/** Empties a bucket (objects and unfinished multipart uploads) and deletes it. */
export async function removeBucket(client: S3Client, Bucket: string): Promise<void> {
  for (;;) {
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket }));
    for (const upload of uploads.Uploads ?? []) await client.send(new AbortMultipartUploadCommand({ Bucket, Key: upload.Key, UploadId: upload.UploadId }));
    const objects = await client.send(new ListObjectsV2Command({ Bucket }));
    if (objects.Contents?.length) await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: objects.Contents.map(({ Key }) => ({ Key })) } }));
    if (!uploads.IsTruncated && !objects.IsTruncated) break;
  }
  await client.send(new DeleteBucketCommand({ Bucket }));
}
