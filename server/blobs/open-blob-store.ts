/**
 * The blob store the configuration names (BLOB_STORE), made at the
 * composition root (server.ts) for the server and the worker alike.
 */
import { join } from 'node:path';
import type { Config } from '../config.ts';
import type { BlobStore } from './blob-store.ts';
import { LocalDiskBlobStore } from './local-disk-blob-store.ts';

/** Where the files are, in words, for messages: a folder, or a bucket and its endpoint. */
export function describeBlobStore(config: Pick<Config, 'blobStore' | 's3' | 'dataDir'>): string {
  if (config.blobStore === 'disk' || !config.s3) return join(config.dataDir, 'blobs');
  return `bucket ${config.s3.bucket} at ${config.s3.endpoint ?? `AWS S3 (${config.s3.region})`}`;
}

/**
 * Opens the blob store. An S3 bucket is checked first (HeadBucket with the
 * configured keys): a server that cannot use it fails at start, with a
 * BlobStoreUnavailableError naming the endpoint and the bucket, rather than at
 * its first upload.
 */
export async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.blobStore === 'disk' || !config.s3) return new LocalDiskBlobStore(join(config.dataDir, 'blobs'));
  // Loaded only for S3: a server on disk does not pay for the AWS SDK at start.
  const { createS3Client, S3BlobStore } = await import('./s3-blob-store.ts');
  const store = new S3BlobStore({
    client: createS3Client(config.s3),
    bucket: config.s3.bucket,
    description: describeBlobStore(config),
    // Copies for ffmpeg go beside the analyses' scratch folders, under DATA_DIR.
    scratchDir: join(config.dataDir, 'tmp'),
    // The sweep takes writes idle for a claim's lifetime; a live one shows itself three times as often.
    keepAliveMs: config.uploadClaimMs / 3,
  });
  await store.check();
  // The player pages' CSP names the bucket, whose presigned URLs their audio, peaks and artwork redirect to.
  await store.resolveDirectOrigin();
  return store;
}
